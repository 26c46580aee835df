// SPDX-License-Identifier: MIT
/*
 * A sorted array: a process has tens of code mappings, rarely hundreds, and
 * lookups (every frame of every sample) far outnumber inserts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/range.h"
#include "resolve/mapping_table.h"

struct mapping_table {
	struct mapping *arr;
	size_t n, cap;
	unsigned int refs;
};

int mapping_table__new(struct mapping_table **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->refs = 1;
	return 0;
}

void mapping_table__free(struct mapping_table *t)
{
	size_t i;

	if (!t || --t->refs)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)t->arr[i].map.path);
	free(t->arr);
	free(t);
}

/* Copies m's path into m; false when out of memory (m->map.path is then NULL). */
static bool own_path(struct mapping *m)
{
	if (!m->map.path)
		return true;
	m->map.path = strdup(m->map.path);
	return m->map.path != NULL;
}

int mapping_table__clone(const struct mapping_table *t, struct mapping_table **out)
{
	struct mapping_table *c;
	size_t i;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	c->arr = calloc(t->n ? t->n : 1, sizeof(*c->arr));
	if (!c->arr) {
		free(c);
		return -ENOMEM;
	}
	c->cap = t->n ? t->n : 1;
	for (i = 0; i < t->n; i++) {
		c->arr[i] = t->arr[i];
		if (!own_path(&c->arr[i])) {
			mapping_table__free(c);
			return -ENOMEM;
		}
		c->n++;
	}
	*out = c;
	return 0;
}

struct mapping_table *mapping_table__share(struct mapping_table *t)
{
	t->refs++;
	return t;
}

int mapping_table__own(struct mapping_table **t)
{
	struct mapping_table *c;
	int err;

	if ((*t)->refs == 1)
		return 0;
	err = mapping_table__clone(*t, &c);
	if (err)
		return err;
	mapping_table__free(*t);
	*t = c;
	return 0;
}

static bool reserve(struct mapping_table *t, size_t more)
{
	/* Most programs map 4 or 5 pieces of code: the binary, ld.so, the vDSO, libc. */
	size_t cap = t->cap ? t->cap : 6;
	struct mapping *arr;

	if (t->n + more <= t->cap)
		return true;
	while (cap < t->n + more)
		cap *= 2;
	arr = reallocarray(t->arr, cap, sizeof(*arr));
	if (!arr)
		return false;
	t->arr = arr;
	t->cap = cap;
	return true;
}

/* Index of the first mapping that ends after addr. */
static size_t first_ending_after(const struct mapping_table *t, uint64_t addr)
{
	/* A struct mapping begins with its proc_map, which begins with start and end. */
	return range_first_ending_after(t->arr, t->n, sizeof(*t->arr), addr);
}

/* Keeps the part of *m at or above addr (the file offset moves with it). */
static void cut_front(struct mapping *m, uint64_t addr)
{
	if (m->map.kind == PROC_MAP_FILE)
		m->map.offset += addr - m->map.start;
	m->map.start = addr;
	/* Another range is another module. */
	m->module_id = 0;
}

struct mapping *mapping_table__insert(struct mapping_table *t, const struct proc_map *m)
{
	struct mapping fresh = {.map = *m}, tail;
	size_t i, j;

	if (m->end <= m->start || !reserve(t, 2) || !own_path(&fresh))
		return NULL;
	i = first_ending_after(t, m->start);
	/* One mapping holds the new one with room on both sides: split it. */
	if (i < t->n && t->arr[i].map.start < m->start && t->arr[i].map.end > m->end) {
		tail = t->arr[i];
		if (!own_path(&tail)) {
			free((char *)fresh.map.path);
			return NULL;
		}
		cut_front(&tail, m->end);
		t->arr[i].map.end = m->start;
		t->arr[i].module_id = 0;
		memmove(&t->arr[i + 3], &t->arr[i + 1], (t->n - i - 1) * sizeof(*t->arr));
		t->arr[i + 1] = fresh;
		t->arr[i + 2] = tail;
		t->n += 2;
		return &t->arr[i + 1];
	}
	if (i < t->n && t->arr[i].map.start < m->start) {
		t->arr[i].map.end = m->start;
		t->arr[i].module_id = 0;
		i++;
	}
	/* [i, j): wholly covered, dropped. */
	for (j = i; j < t->n && t->arr[j].map.end <= m->end; j++)
		free((char *)t->arr[j].map.path);
	if (j < t->n && t->arr[j].map.start < m->end)
		cut_front(&t->arr[j], m->end);
	if (j == i)
		memmove(&t->arr[i + 1], &t->arr[i], (t->n - i) * sizeof(*t->arr));
	else
		memmove(&t->arr[i + 1], &t->arr[j], (t->n - j) * sizeof(*t->arr));
	t->n = t->n - (j - i) + 1;
	t->arr[i] = fresh;
	return &t->arr[i];
}

struct mapping *mapping_table__find(struct mapping_table *t, uint64_t addr)
{
	size_t i = first_ending_after(t, addr);

	return i < t->n && t->arr[i].map.start <= addr ? &t->arr[i] : NULL;
}

size_t mapping_table__count(const struct mapping_table *t)
{
	return t->n;
}

struct mapping *mapping_table__get(struct mapping_table *t, size_t i)
{
	return i < t->n ? &t->arr[i] : NULL;
}
