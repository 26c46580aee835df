// SPDX-License-Identifier: MIT
/*
 * pid -> the process's spaces, oldest first. A pid has one space, or a few
 * when it exec'd or was reused during a drain interval: the list is short
 * and searched from the newest end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64map.h"
#include "resolve/address_spaces.h"

struct history {
	struct space **v;
	size_t n, cap;
};

struct address_spaces {
	struct u64map *pids; /* pid -> struct history * */
	space_priv_free_fn free_priv;
	size_t count;
};

int address_spaces__new(space_priv_free_fn free_priv, struct address_spaces **out)
{
	struct address_spaces *as;

	*out = NULL;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->pids = u64map__new();
	if (!as->pids) {
		free(as);
		return -ENOMEM;
	}
	as->free_priv = free_priv;
	*out = as;
	return 0;
}

static void space_free(struct address_spaces *as, struct space *sp)
{
	if (!sp)
		return;
	if (as->free_priv)
		as->free_priv(sp->priv);
	mapping_table__free(sp->maps);
	free(sp);
}

static void history_free(struct address_spaces *as, struct history *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		space_free(as, h->v[i]);
	free(h->v);
	free(h);
}

void address_spaces__free(struct address_spaces *as)
{
	uint64_t key, val;
	size_t pos = 0;

	if (!as)
		return;
	while (u64map__next(as->pids, &pos, &key, &val))
		history_free(as, (struct history *)(uintptr_t)val);
	u64map__free(as->pids);
	free(as);
}

static struct history *history_of(struct address_spaces *as, uint32_t pid)
{
	uint64_t v;

	return u64map__get(as->pids, pid, &v) ? (struct history *)(uintptr_t)v : NULL;
}

static struct history *new_history(struct address_spaces *as, uint32_t pid)
{
	struct history *h = calloc(1, sizeof(*h));

	if (h && u64map__set(as->pids, pid, (uintptr_t)h)) {
		free(h);
		h = NULL;
	}
	return h;
}

static struct space *new_space(uint32_t pid, uint64_t start, const char *comm,
			       const struct space *from)
{
	struct space *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	if (from)
		sp->maps = mapping_table__share(from->maps);
	else if (mapping_table__new(&sp->maps)) {
		free(sp);
		return NULL;
	}
	sp->pid = pid;
	sp->start = start;
	sp->end = UINT64_MAX;
	snprintf(sp->comm, sizeof(sp->comm), "%s", comm ? comm : "");
	return sp;
}

/* Puts sp in h at its time; the space before it ends where it begins. */
static int history_insert(struct history *h, struct space *sp)
{
	size_t i = h->n, cap = h->cap ? 2 * h->cap : 2;
	struct space **v;

	if (h->n == h->cap) {
		v = reallocarray(h->v, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	/* Records come in time order but for the few that came late. */
	while (i > 0 && h->v[i - 1]->start > sp->start)
		i--;
	memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof(*h->v));
	h->v[i] = sp;
	h->n++;
	if (i + 1 < h->n && sp->end > h->v[i + 1]->start)
		sp->end = h->v[i + 1]->start;
	if (i > 0 && h->v[i - 1]->end > sp->start)
		h->v[i - 1]->end = sp->start;
	return 0;
}

struct space *address_spaces__begin(struct address_spaces *as, uint32_t pid, uint64_t start,
				    const char *comm, const struct space *from)
{
	struct history *h = history_of(as, pid);
	struct space *sp;

	if (!h && !(h = new_history(as, pid)))
		return NULL;
	sp = new_space(pid, start, comm, from);
	if (!sp || history_insert(h, sp)) {
		space_free(as, sp);
		if (!h->n) {
			u64map__delete(as->pids, pid);
			free(h->v);
			free(h);
		}
		return NULL;
	}
	as->count++;
	return sp;
}

struct space *address_spaces__at(struct address_spaces *as, uint32_t pid, uint64_t t)
{
	struct history *h = history_of(as, pid);
	size_t i;

	for (i = h ? h->n : 0; i > 0; i--)
		if (h->v[i - 1]->start <= t)
			return h->v[i - 1];
	return NULL;
}

struct space *address_spaces__before(struct address_spaces *as, const struct space *sp)
{
	struct history *h = history_of(as, sp->pid);
	size_t i;

	for (i = 1; h && i < h->n; i++)
		if (h->v[i] == sp)
			return h->v[i - 1];
	return NULL;
}

struct space *address_spaces__after(struct address_spaces *as, const struct space *sp)
{
	struct history *h = history_of(as, sp->pid);
	size_t i;

	for (i = 0; h && i + 1 < h->n; i++)
		if (h->v[i] == sp)
			return h->v[i + 1];
	return NULL;
}

struct space *address_spaces__latest(struct address_spaces *as, uint32_t pid)
{
	struct history *h = history_of(as, pid);

	return h && h->n ? h->v[h->n - 1] : NULL;
}

void address_spaces__exit(struct address_spaces *as, uint32_t pid, uint64_t t)
{
	struct space *sp = address_spaces__latest(as, pid);

	if (sp && sp->end > t && sp->start <= t)
		sp->end = t;
}

size_t address_spaces__forget(struct address_spaces *as, uint64_t t)
{
	uint64_t key, val, *empty;
	size_t pos = 0, nempty = 0, gone = 0, i, kept;

	empty = calloc(u64map__count(as->pids) + 1, sizeof(*empty));
	if (!empty)
		return 0;
	while (u64map__next(as->pids, &pos, &key, &val)) {
		struct history *h = (struct history *)(uintptr_t)val;

		for (i = kept = 0; i < h->n; i++) {
			if (h->v[i]->end < t) {
				space_free(as, h->v[i]);
				gone++;
			} else {
				h->v[kept++] = h->v[i];
			}
		}
		h->n = kept;
		if (!kept)
			empty[nempty++] = key;
	}
	/* Not while walking: deleting moves entries of an open-addressing map. */
	for (i = 0; i < nempty; i++) {
		if (u64map__get(as->pids, empty[i], &val))
			history_free(as, (struct history *)(uintptr_t)val);
		u64map__delete(as->pids, empty[i]);
	}
	free(empty);
	as->count -= gone;
	return gone;
}

struct space *address_spaces__next(struct address_spaces *as, size_t *pos, size_t *idx)
{
	uint64_t key, val;
	size_t at;

	for (;;) {
		/* *pos is one past the current history's slot; reread it. */
		at = *pos ? *pos - 1 : 0;
		if (*pos && u64map__next(as->pids, &at, &key, &val)) {
			struct history *h = (struct history *)(uintptr_t)val;

			if (*idx < h->n)
				return h->v[(*idx)++];
		}
		at = *pos;
		if (!u64map__next(as->pids, &at, &key, &val))
			return NULL;
		*pos = at;
		*idx = 0;
	}
}

size_t address_spaces__count(const struct address_spaces *as)
{
	return as->count;
}
