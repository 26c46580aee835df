// SPDX-License-Identifier: MIT
/*
 * An open-addressing hash table (linear probing) over individually allocated
 * strings. Each string gets its own allocation so that growing the table never
 * moves a string: callers keep raw pointers to them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strpool.h"

#define MIN_SLOTS 64

struct slot {
	uint32_t id1; /* id + 1; 0 marks an empty slot */
	uint32_t hash;
};

struct strpool {
	char **strs; /* id -> string */
	size_t count;
	size_t strs_cap;
	struct slot *slots;
	size_t nslots; /* a power of two, or 0 before the first add */
};

/* FNV-1a: short strings dominate (names, paths), where it is fast and good enough. */
static uint32_t hash_str(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t h = 2166136261u;

	while (*p) {
		h ^= *p++;
		h *= 16777619u;
	}
	*len = (size_t)(p - (const unsigned char *)s);
	return h;
}

struct strpool *strpool__new(void)
{
	return calloc(1, sizeof(struct strpool));
}

void strpool__free(struct strpool *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->count; i++)
		free(set->strs[i]);
	free(set->strs);
	free(set->slots);
	free(set);
}

static struct slot *lookup(const struct strpool *set, const char *s, uint32_t hash)
{
	size_t mask = set->nslots - 1, i = hash & mask;

	for (;; i = (i + 1) & mask) {
		struct slot *sl = &set->slots[i];

		if (!sl->id1)
			return sl;
		if (sl->hash == hash && strcmp(set->strs[sl->id1 - 1], s) == 0)
			return sl;
	}
}

static int grow_slots(struct strpool *set)
{
	size_t n = set->nslots ? set->nslots * 2 : MIN_SLOTS, i, mask = n - 1;
	struct slot *slots;

	if (n > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < set->nslots; i++) {
		size_t j;

		if (!set->slots[i].id1)
			continue;
		for (j = set->slots[i].hash & mask; slots[j].id1; j = (j + 1) & mask)
			;
		slots[j] = set->slots[i];
	}
	free(set->slots);
	set->slots = slots;
	set->nslots = n;
	return 0;
}

long strpool__add(struct strpool *set, const char *s)
{
	struct slot *sl;
	size_t len;
	uint32_t hash = hash_str(s, &len);
	char *copy;
	int err;

	/* Keep the load factor under 3/4 so that probe chains stay short. */
	if ((set->count + 1) * 4 > set->nslots * 3) {
		if (set->count >= UINT32_MAX - 1)
			return -ENOMEM;
		err = grow_slots(set);
		if (err)
			return err;
	}
	sl = lookup(set, s, hash);
	if (sl->id1)
		return (long)sl->id1 - 1;

	if (set->count == set->strs_cap) {
		size_t cap = set->strs_cap ? set->strs_cap * 2 : MIN_SLOTS;
		char **strs = reallocarray(set->strs, cap, sizeof(*strs));

		if (!strs)
			return -ENOMEM;
		set->strs = strs;
		set->strs_cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	set->strs[set->count] = copy;
	sl->id1 = (uint32_t)++set->count;
	sl->hash = hash;
	return (long)set->count - 1;
}

const char *strpool__str(const struct strpool *set, size_t id)
{
	return id < set->count ? set->strs[id] : NULL;
}

size_t strpool__count(const struct strpool *set)
{
	return set->count;
}
