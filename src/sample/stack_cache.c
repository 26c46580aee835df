// SPDX-License-Identifier: MIT
/*
 * A drain's cache of the stack map: see stack_cache.h. The tables are made
 * at the first read, since the unwinder's object has no stack map.
 */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "sample/stack_cache.h"
#include "sampler_abi.h"

struct stack_cache {
	uint32_t entries;
	uint64_t **frames; /* by id, NULL: not read in this drain */
	uint32_t *ids;	   /* those read, to be cleared */
	uint32_t n;
};

int stack_cache__new(uint32_t entries, struct stack_cache **out)
{
	struct stack_cache *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->entries = entries;
	return 0;
}

static void forget(struct stack_cache *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		free(c->frames[c->ids[i]]);
		c->frames[c->ids[i]] = NULL;
	}
	c->n = 0;
}

void stack_cache__free(struct stack_cache *c)
{
	if (!c)
		return;
	if (c->frames)
		forget(c);
	free(c->frames);
	free(c->ids);
	free(c);
}

static int make_tables(struct stack_cache *c)
{
	c->frames = calloc(c->entries, sizeof(*c->frames));
	c->ids = calloc(c->entries, sizeof(*c->ids));
	if (c->frames && c->ids)
		return 0;
	free(c->frames);
	free(c->ids);
	c->frames = NULL;
	c->ids = NULL;
	return -ENOMEM;
}

/* Frames of id read from the map into the cache; NULL with *err set. */
static uint64_t *read_stack(struct stack_cache *c, int fd, int id, int *err)
{
	uint64_t *ips = calloc(CPROF_MAX_STACK_DEPTH, sizeof(*ips));

	if (!ips) {
		*err = -ENOMEM;
		return NULL;
	}
	if (bpf_map_lookup_elem(fd, &id, ips)) {
		free(ips);
		*err = -ENOENT;
		return NULL;
	}
	c->frames[id] = ips;
	c->ids[c->n++] = id;
	return ips;
}

const uint64_t *stack_cache__frames(struct stack_cache *c, int fd, int id, uint32_t *n, int *err)
{
	uint64_t *ips;
	uint32_t i;

	*n = 0;
	*err = 0;
	if (id < 0) {
		/* -EFAULT: there is no such stack (user-mode sample, kernel thread). */
		if (id != -EFAULT)
			*err = id;
		return NULL;
	}
	if ((uint32_t)id >= c->entries) {
		*err = -ERANGE;
		return NULL;
	}
	if (!c->frames && (*err = make_tables(c)))
		return NULL;
	ips = c->frames[id] ? c->frames[id] : read_stack(c, fd, id, err);
	if (!ips)
		return NULL;
	for (i = 0; i < CPROF_MAX_STACK_DEPTH && ips[i]; i++)
		;
	*n = i;
	return ips;
}

void stack_cache__clear(struct stack_cache *c, int fd)
{
	for (uint32_t i = 0; i < c->n; i++)
		bpf_map_delete_elem(fd, &c->ids[i]);
	forget(c);
}
