// SPDX-License-Identifier: MIT
/*
 * A binary min-heap keyed by (time, push sequence): the sequence makes equal
 * times come out in push order, which a heap alone does not keep. A fork
 * storm queues tens of thousands of events between two reads, so pushes and
 * pops are O(log n); each event is one allocation holding the event and its
 * filename, and the heap itself moves only small nodes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample/reorder.h"

struct node {
	uint64_t time;
	uint64_t seq;
	struct task_event *ev; /* owned, with its filename just after it */
};

struct reorder {
	struct node *heap;
	size_t n, cap;
	uint64_t next_seq;
	uint64_t popped_time; /* the newest time handed out, once any was */
	bool popped;
	uint64_t late;
};

int reorder__new(struct reorder **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void reorder__free(struct reorder *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n; i++)
		free(q->heap[i].ev);
	free(q->heap);
	free(q);
}

static bool before(const struct node *a, const struct node *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void sift_up(struct node *h, size_t i)
{
	struct node x = h[i];

	while (i > 0 && before(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static void sift_down(struct node *h, size_t n, size_t i)
{
	struct node x = h[i];
	size_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static int reserve(struct reorder *q)
{
	size_t cap = q->cap ? q->cap * 2 : 256;
	struct node *h;

	if (q->n < q->cap)
		return 0;
	h = realloc(q->heap, cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	q->heap = h;
	q->cap = cap;
	return 0;
}

/* One allocation for the event and its filename, freed after it is handed out. */
static struct task_event *copy_event(const struct task_event *ev)
{
	size_t flen = ev->filename ? strlen(ev->filename) + 1 : 0;
	struct task_event *copy = malloc(sizeof(*copy) + flen);

	if (!copy)
		return NULL;
	*copy = *ev;
	if (ev->filename)
		copy->filename = memcpy(copy + 1, ev->filename, flen);
	return copy;
}

int reorder__push(struct reorder *q, const struct task_event *ev)
{
	struct task_event *copy;

	if (reserve(q))
		return -ENOMEM;
	copy = copy_event(ev);
	if (!copy)
		return -ENOMEM;
	if (q->popped && ev->time < q->popped_time)
		q->late++;
	q->heap[q->n] = (struct node){.time = ev->time, .seq = q->next_seq++, .ev = copy};
	sift_up(q->heap, q->n++);
	return 0;
}

size_t reorder__pop_until(struct reorder *q, uint64_t until, task_event_fn fn, void *ctx)
{
	struct task_event *ev;
	size_t count = 0;

	while (q->n && q->heap[0].time <= until) {
		ev = q->heap[0].ev;
		q->heap[0] = q->heap[--q->n];
		if (q->n)
			sift_down(q->heap, q->n, 0);
		/* A late event does not move the mark back: lateness is against the newest. */
		if (!q->popped || ev->time > q->popped_time)
			q->popped_time = ev->time;
		q->popped = true;
		fn(ctx, ev);
		free(ev);
		count++;
	}
	return count;
}

size_t reorder__count(const struct reorder *q)
{
	return q->n;
}

uint64_t reorder__late(const struct reorder *q)
{
	return q->late;
}
