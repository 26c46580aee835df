// SPDX-License-Identifier: MIT
/*
 * The table of walked stacks; see walked_stacks.h. Stacks are found by the
 * low half of their hash in a u64map and checked against the high half: a
 * stack whose low half meets another's (one chance in 2^64 a pair) takes
 * its place, and counts that named the other find none, as a lost record.
 *
 * Why the kernel is told to forget stacks: its set of sent hashes has room
 * for capacity of them. Past three quarters of that in use here, the
 * stacks named longest ago are forgotten until half is.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64map.h"
#include "sample/walked_stacks.h"

/* Drains a forgotten stack is kept for counts taken before the kernel forgot it. */
#define KEEP_DRAINS 2

struct entry {
	__u64 lo, hi;
	uint64_t named;	    /* the last drain that named it */
	uint64_t forgotten; /* the drain that told the kernel to forget it; 0: it knows it */
	struct walked_stack s;
	uint64_t ips[];
};

struct walked_stacks {
	struct u64map *by_lo;
	uint32_t capacity;
	size_t known;	/* entries the kernel knows (not forgotten) */
	uint64_t drain; /* the current drain, from 1 */
	uint64_t dropped;
	/* To be forgotten at the end of this drain, then handed out by it. */
	struct cprof_stack_hash *forget;
	size_t nforget, forget_cap;
};

int walked_stacks__new(uint32_t capacity, struct walked_stacks **out)
{
	struct walked_stacks *ws = calloc(1, sizeof(*ws));

	*out = NULL;
	if (!ws || !(ws->by_lo = u64map__new())) {
		free(ws);
		return -ENOMEM;
	}
	ws->capacity = capacity;
	ws->drain = 1;
	*out = ws;
	return 0;
}

static struct entry *entry_of(uint64_t value)
{
	return (struct entry *)(uintptr_t)value;
}

void walked_stacks__free(struct walked_stacks *ws)
{
	size_t pos = 0;
	uint64_t key, value;

	if (!ws)
		return;
	while (u64map__next(ws->by_lo, &pos, &key, &value))
		free(entry_of(value));
	u64map__free(ws->by_lo);
	free(ws->forget);
	free(ws);
}

static void remove_entry(struct walked_stacks *ws, struct entry *e)
{
	if (!e->forgotten)
		ws->known--;
	u64map__delete(ws->by_lo, e->lo);
	free(e);
}

int walked_stacks__add(struct walked_stacks *ws, const void *record, uint32_t size)
{
	struct cprof_ustack head;
	struct entry *e;
	uint64_t old;
	size_t bytes;

	if (size < offsetof(struct cprof_ustack, ips)) {
		ws->dropped++;
		return -EINVAL;
	}
	memcpy(&head, record, offsetof(struct cprof_ustack, ips));
	bytes = (size_t)head.n * sizeof(uint64_t);
	if (head.n > CPROF_UNWIND_MAX_DEPTH || size < offsetof(struct cprof_ustack, ips) + bytes) {
		ws->dropped++;
		return -EINVAL;
	}
	if (u64map__get(ws->by_lo, head.hash.lo, &old)) {
		e = entry_of(old);
		/* Sent again: the kernel had forgotten it, or two CPUs met it at once. */
		if (e->hi == head.hash.hi && e->s.n == head.n && e->s.kind == head.kind) {
			if (e->forgotten)
				ws->known++;
			e->forgotten = 0;
			e->named = ws->drain;
			return 0;
		}
		remove_entry(ws, e);
	}
	e = malloc(sizeof(*e) + bytes);
	if (!e || u64map__set(ws->by_lo, head.hash.lo, (uint64_t)(uintptr_t)e)) {
		free(e);
		ws->dropped++;
		return -ENOMEM;
	}
	e->lo = head.hash.lo;
	e->hi = head.hash.hi;
	e->named = ws->drain;
	e->forgotten = 0;
	memcpy(e->ips, (const char *)record + offsetof(struct cprof_ustack, ips), bytes);
	e->s = (struct walked_stack){
		.n = head.n, .stop = head.stop, .kind = head.kind, .ips = e->ips};
	ws->known++;
	return 0;
}

static int forget(struct walked_stacks *ws, __u64 lo, __u64 hi)
{
	struct cprof_stack_hash *f;
	size_t cap;

	if (ws->nforget == ws->forget_cap) {
		cap = ws->forget_cap ? 2 * ws->forget_cap : 64;
		f = realloc(ws->forget, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		ws->forget = f;
		ws->forget_cap = cap;
	}
	ws->forget[ws->nforget++] = (struct cprof_stack_hash){.lo = lo, .hi = hi};
	return 0;
}

const struct walked_stack *walked_stacks__get(struct walked_stacks *ws, const __u64 hash[2])
{
	struct entry *e;
	uint64_t v;

	if (!u64map__get(ws->by_lo, hash[0], &v) || entry_of(v)->hi != hash[1]) {
		/* Not an error if it fails: the kernel then keeps sending no record of it. */
		forget(ws, hash[0], hash[1]);
		return NULL;
	}
	e = entry_of(v);
	e->named = ws->drain;
	return &e->s;
}

static int cmp_named(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;

	return x->named < y->named ? -1 : x->named > y->named;
}

/*
 * Past three quarters of the kernel's room: the stacks named longest ago,
 * down to half. Not one named in this drain: the kernel may be counting it
 * in the other set right now, and would not send it again.
 */
static void forget_oldest(struct walked_stacks *ws)
{
	struct entry **live, *e;
	size_t pos = 0, n = 0, i;
	uint64_t key, value;

	if (ws->known * 4 <= (size_t)ws->capacity * 3)
		return;
	live = malloc(ws->known * sizeof(*live));
	if (!live)
		return;
	while (n < ws->known && u64map__next(ws->by_lo, &pos, &key, &value))
		if (!entry_of(value)->forgotten)
			live[n++] = entry_of(value);
	qsort(live, n, sizeof(*live), cmp_named);
	for (i = 0; i < n && ws->known > ws->capacity / 2; i++) {
		e = live[i];
		if (e->named >= ws->drain)
			break;
		if (forget(ws, e->lo, e->hi))
			break;
		e->forgotten = ws->drain;
		ws->known--;
	}
	free(live);
}

/* Frees the stacks forgotten KEEP_DRAINS drains ago or more. */
static void free_forgotten(struct walked_stacks *ws)
{
	struct entry **old, *e;
	size_t pos = 0, n = 0, i, total = u64map__count(ws->by_lo) - ws->known;
	uint64_t key, value;

	if (!total)
		return;
	/* Collected first: deleting from the map moves its entries. */
	old = malloc(total * sizeof(*old));
	if (!old)
		return;
	while (n < total && u64map__next(ws->by_lo, &pos, &key, &value)) {
		e = entry_of(value);
		if (e->forgotten && e->forgotten + KEEP_DRAINS <= ws->drain)
			old[n++] = e;
	}
	for (i = 0; i < n; i++)
		remove_entry(ws, old[i]);
	free(old);
}

/* Without memory either step does less, and catches up at a later drain. */
void walked_stacks__end_drain(struct walked_stacks *ws, const struct cprof_stack_hash **out,
			      size_t *n)
{
	free_forgotten(ws);
	forget_oldest(ws);
	*out = ws->forget;
	*n = ws->nforget;
	ws->nforget = 0;
	ws->drain++;
}

size_t walked_stacks__count(const struct walked_stacks *ws)
{
	return u64map__count(ws->by_lo);
}

uint64_t walked_stacks__dropped(const struct walked_stacks *ws)
{
	return ws->dropped;
}
