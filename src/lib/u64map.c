// SPDX-License-Identifier: MIT
/*
 * Linear probing with backward-shift deletion (no tombstones), so lookups
 * stay short however many processes come and go in a long profile.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/hash.h"
#include "lib/u64map.h"

struct slot {
	uint64_t key;
	uint64_t value;
	bool used;
};

struct u64map {
	struct slot *slots;
	size_t cap; /* power of two */
	size_t count;
};

struct u64map *u64map__new(void)
{
	return calloc(1, sizeof(struct u64map));
}

void u64map__free(struct u64map *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static struct slot *find(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = (size_t)hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].used)
			return NULL;
		if (m->slots[i].key == key)
			return &m->slots[i];
	}
}

static int grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i, j;
	struct slot *ns;

	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		for (j = hash_u64(m->slots[i].key) & (ncap - 1); ns[j].used;
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

int u64map__set(struct u64map *m, uint64_t key, uint64_t value)
{
	struct slot *s = find(m, key);
	size_t i;
	int err;

	if (s) {
		s->value = value;
		return 0;
	}
	/* Keep the load factor under 1/2. */
	if ((m->count + 1) * 2 > m->cap) {
		err = grow(m);
		if (err)
			return err;
	}
	for (i = (size_t)hash_u64(key) & (m->cap - 1); m->slots[i].used; i = (i + 1) & (m->cap - 1))
		;
	m->slots[i] = (struct slot){.key = key, .value = value, .used = true};
	m->count++;
	return 0;
}

bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *value)
{
	struct slot *s = find(m, key);

	if (!s)
		return false;
	if (value)
		*value = s->value;
	return true;
}

bool u64map__delete(struct u64map *m, uint64_t key)
{
	struct slot *s = find(m, key);
	size_t i, j, home, mask;

	if (!s)
		return false;
	mask = m->cap - 1;
	i = (size_t)(s - m->slots);
	/* Shift back later entries of the probe run so no lookup stops early. */
	for (j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		home = hash_u64(m->slots[j].key) & mask;
		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].used = false;
	m->count--;
	return true;
}

size_t u64map__count(const struct u64map *m)
{
	return m->count;
}

bool u64map__next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *value)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->slots[*pos].used) {
			*key = m->slots[*pos].key;
			*value = m->slots[*pos].value;
			(*pos)++;
			return true;
		}
	}
	return false;
}
