// SPDX-License-Identifier: MIT
/* The BPF unwinder's maps from user space; see unwinder.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "unwinder"
#include "lib/log.h"
#include "sample/unwinder.h"
#include "unwinder.skel.h"

struct unwinder {
	struct unwinder_bpf *k;
	uint32_t row_chunks, page_chunks; /* capacity, in map elements */
	uint32_t rows_used, pages_used;	  /* handed out, in map elements */
	size_t rules_sent;
};

static uint32_t chunks(uint64_t n)
{
	return (uint32_t)((n + CPROF_UNWIND_CHUNK - 1) / CPROF_UNWIND_CHUNK);
}

static int start(struct unwinder *u, const struct unwinder_opts *o)
{
	struct cprof_walk_config cfg = {.ra_mask = o->ra_mask ? o->ra_mask : ~0ull};
	__u32 zero = 0;
	int err, fd;

	u->row_chunks = chunks(o->max_rows ? o->max_rows : 1u << 22);
	u->page_chunks = chunks(o->max_pages ? o->max_pages : 1u << 16);
	bpf_map__set_max_entries(u->k->maps.unwind_rows, u->row_chunks);
	bpf_map__set_max_entries(u->k->maps.unwind_pages, u->page_chunks);
	err = unwinder_bpf__load(u->k);
	if (err) {
		pr_debug("cannot load the unwinder: %s", strerror(-err));
		return -EOPNOTSUPP;
	}
	fd = bpf_program__fd(u->k->progs.cprof_walk);
	err = bpf_map_update_elem(bpf_map__fd(u->k->maps.walk_progs), &zero, &fd, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(u->k->maps.walk_config), &zero, &cfg,
					  BPF_ANY);
	return err ? -errno : 0;
}

int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err = -ENOMEM;

	*out = NULL;
	if (!u)
		return err;
	u->k = unwinder_bpf__open();
	err = u->k ? start(u, opts) : -errno;
	if (err) {
		unwinder__free(u);
		return err;
	}
	*out = u;
	return 0;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	unwinder_bpf__destroy(u->k);
	free(u);
}

int unwinder__sync_rules(struct unwinder *u, const struct unwind_rules *rules)
{
	const struct cprof_unwind_rule *all = unwind_rules__all(rules);
	size_t n = unwind_rules__count(rules);
	int fd = bpf_map__fd(u->k->maps.unwind_rules);
	__u32 id;

	for (; u->rules_sent < n; u->rules_sent++) {
		id = (__u32)u->rules_sent;
		if (bpf_map_update_elem(fd, &id, &all[id], BPF_ANY))
			return -errno;
	}
	return 0;
}

/* n values into the array map fd from element first on, 64 to an element. */
static int upload(int fd, uint32_t first, const uint32_t *v, size_t n)
{
	struct cprof_unwind_chunk c;
	size_t i, k;
	__u32 key;

	for (i = 0; i < n; i += CPROF_UNWIND_CHUNK) {
		k = n - i < CPROF_UNWIND_CHUNK ? n - i : CPROF_UNWIND_CHUNK;
		memset(&c, 0, sizeof(c));
		memcpy(c.v, v + i, k * sizeof(*v));
		key = first + (__u32)(i / CPROF_UNWIND_CHUNK);
		if (bpf_map_update_elem(fd, &key, &c, BPF_ANY))
			return -errno;
	}
	return 0;
}

int unwinder__add_table(struct unwinder *u, const struct unwind_table *t,
			struct unwinder_table *out)
{
	uint32_t rc = chunks(t->nrows), pc = chunks((uint64_t)t->npages + 1);
	int err;

	if (rc > u->row_chunks - u->rows_used || pc > u->page_chunks - u->pages_used)
		return -ENOSPC;
	err = upload(bpf_map__fd(u->k->maps.unwind_rows), u->rows_used, t->rows, t->nrows);
	if (!err)
		err = upload(bpf_map__fd(u->k->maps.unwind_pages), u->pages_used, t->pages,
			     (size_t)t->npages + 1);
	if (err)
		return err;
	*out = (struct unwinder_table){
		.table_base = t->base,
		.row_base = u->rows_used * CPROF_UNWIND_CHUNK,
		.page_base = u->pages_used * CPROF_UNWIND_CHUNK,
		.npages = t->npages,
	};
	u->rows_used += rc;
	u->pages_used += pc;
	return 0;
}

/* The largest aligned power-of-two block at start that fits before end: its size's log2. */
static unsigned int block_bits(uint64_t start, uint64_t end)
{
	unsigned int bits = start ? (unsigned int)__builtin_ctzll(start) : 63;

	while (bits && (end - start) < (1ull << bits))
		bits--;
	return bits;
}

int unwinder__add_region(struct unwinder *u, uint32_t pid, uint64_t start, uint64_t end,
			 uint64_t bias, const struct unwinder_table *t)
{
	struct cprof_region v = {.start = start, .end = end, .bias = bias};
	struct cprof_region_key key = {.pid = pid};
	int fd = bpf_map__fd(u->k->maps.unwind_regions);
	unsigned int bits;

	if (t) {
		v.flags = CPROF_REGION_TABLE;
		v.table_base = t->table_base;
		v.page_base = t->page_base;
		v.npages = t->npages;
		v.row_base = t->row_base;
	}
	/* An LPM trie matches prefixes: the range goes in as aligned blocks. */
	while (start < end) {
		bits = block_bits(start, end);
		key.prefixlen = 32 + 64 - bits;
		key.addr_be = htobe64(start);
		if (bpf_map_update_elem(fd, &key, &v, BPF_ANY))
			return -errno;
		start += 1ull << bits;
	}
	return 0;
}

int unwinder__sample_fd(const struct unwinder *u)
{
	return bpf_program__fd(u->k->progs.cprof_unwind_sample);
}

int unwinder__events_fd(const struct unwinder *u)
{
	return bpf_map__fd(u->k->maps.walk_events);
}
