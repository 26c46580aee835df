// SPDX-License-Identifier: MIT
/*
 * reorder: events pushed out of order come out sorted, equal times in push
 * order, only up to the watermark; late ones are counted; filenames are
 * the queue's own copies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/reorder.h"
#include "test.h"

/* What a pop handed out: times and tids (the tests' push numbers) in order. */
struct seen {
	size_t n;
	uint64_t time[8192];
	uint32_t tid[8192];
	char filename[8][64];
};

static void record(void *ctx, const struct task_event *ev)
{
	struct seen *s = ctx;

	CHECK(s->n < sizeof(s->time) / sizeof(s->time[0]));
	if (ev->filename && s->n < 8)
		snprintf(s->filename[s->n], sizeof(s->filename[0]), "%s", ev->filename);
	s->time[s->n] = ev->time;
	s->tid[s->n] = ev->tid;
	s->n++;
}

static void push(struct reorder *q, uint64_t time, uint32_t tid)
{
	struct task_event ev = {.type = TASK_EVENT_FORK, .time = time, .tid = tid};

	CHECK_INT(reorder__push(q, &ev), ==, 0);
}

static struct reorder *new_queue(void)
{
	struct reorder *q = NULL;

	CHECK_INT(reorder__new(&q), ==, 0);
	CHECK(q);
	return q;
}

TEST(reorder_sorts)
{
	static const uint64_t times[] = {50, 10, 40, 20, 30};
	struct reorder *q = new_queue();
	struct seen s = {0};
	size_t i;

	for (i = 0; i < 5; i++)
		push(q, times[i], i);
	CHECK_INT(reorder__count(q), ==, 5);
	CHECK_INT(reorder__pop_until(q, UINT64_MAX, record, &s), ==, 5);
	CHECK_INT(s.n, ==, 5);
	for (i = 0; i < 5; i++)
		CHECK_U64(s.time[i], ==, 10 * (i + 1));
	CHECK_INT(reorder__count(q), ==, 0);
	CHECK_U64(reorder__late(q), ==, 0);
	reorder__free(q);
}

TEST(reorder_watermark)
{
	struct reorder *q = new_queue();
	struct seen s = {0};

	push(q, 300, 0);
	push(q, 100, 1);
	push(q, 200, 2);
	/* Inclusive: time <= until goes; newer ones stay. */
	CHECK_INT(reorder__pop_until(q, 99, record, &s), ==, 0);
	CHECK_INT(reorder__pop_until(q, 200, record, &s), ==, 2);
	CHECK_INT(s.n, ==, 2);
	CHECK_U64(s.time[0], ==, 100);
	CHECK_U64(s.time[1], ==, 200);
	CHECK_INT(reorder__count(q), ==, 1);
	/* Pushed after a pop, but newer than what it handed out: not late. */
	push(q, 250, 3);
	CHECK_U64(reorder__late(q), ==, 0);
	CHECK_INT(reorder__pop_until(q, 299, record, &s), ==, 1);
	CHECK_U64(s.time[2], ==, 250);
	CHECK_INT(reorder__pop_until(q, 300, record, &s), ==, 1);
	CHECK_U64(s.time[3], ==, 300);
	reorder__free(q);
}

TEST(reorder_equal_times_keep_push_order)
{
	struct reorder *q = new_queue();
	struct seen s = {0};
	uint32_t i;

	/* Enough to go through several sifts of the heap. */
	for (i = 0; i < 100; i++)
		push(q, i % 2 ? 7 : 5, i);
	CHECK_INT(reorder__pop_until(q, UINT64_MAX, record, &s), ==, 100);
	for (i = 0; i < 50; i++) {
		CHECK_U64(s.time[i], ==, 5);
		CHECK_INT(s.tid[i], ==, 2 * i);
		CHECK_U64(s.time[50 + i], ==, 7);
		CHECK_INT(s.tid[50 + i], ==, 2 * i + 1);
	}
	reorder__free(q);
}

TEST(reorder_late_events)
{
	struct reorder *q = new_queue();
	struct seen s = {0};

	push(q, 100, 0);
	push(q, 200, 1);
	CHECK_INT(reorder__pop_until(q, 200, record, &s), ==, 2);
	/* Older than one handed out: still handed out, and counted. */
	push(q, 150, 2);
	push(q, 200, 3); /* equal to the newest handed out: in order */
	push(q, 250, 4);
	CHECK_U64(reorder__late(q), ==, 1);
	CHECK_INT(reorder__pop_until(q, 260, record, &s), ==, 3);
	CHECK_U64(s.time[2], ==, 150);
	CHECK_U64(s.time[3], ==, 200);
	CHECK_U64(s.time[4], ==, 250);
	/* A late one does not move the mark back: 220 is late against 250. */
	push(q, 220, 5);
	CHECK_U64(reorder__late(q), ==, 2);
	CHECK_INT(reorder__pop_until(q, UINT64_MAX, record, &s), ==, 1);
	reorder__free(q);
}

TEST(reorder_copies_filenames)
{
	struct reorder *q = new_queue();
	struct task_event ev = {.type = TASK_EVENT_MMAP, .time = 2};
	struct seen s = {0};
	char buf[64];

	strcpy(buf, "/usr/lib/libc.so.6");
	ev.filename = buf;
	CHECK_INT(reorder__push(q, &ev), ==, 0);
	strcpy(buf, "/usr/bin/true");
	ev.time = 1;
	CHECK_INT(reorder__push(q, &ev), ==, 0);
	memset(buf, 'X', sizeof(buf));
	ev.filename = NULL;
	ev.time = 3;
	CHECK_INT(reorder__push(q, &ev), ==, 0);
	CHECK_INT(reorder__pop_until(q, UINT64_MAX, record, &s), ==, 3);
	CHECK_STR(s.filename[0], "/usr/bin/true");
	CHECK_STR(s.filename[1], "/usr/lib/libc.so.6");
	CHECK_STR(s.filename[2], "");
	reorder__free(q);
}

TEST(reorder_random_thousands)
{
	struct reorder *q = new_queue();
	struct seen *s = calloc(1, sizeof(*s));
	uint64_t until, x = 12345;
	size_t i, total = 0;

	CHECK(s);
	/* Times in a narrow range, so that many are equal. */
	for (i = 0; i < 8000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		push(q, (x >> 33) % 3000, i);
	}
	for (until = 0; until <= 3000; until += 250)
		total += reorder__pop_until(q, until, record, s);
	CHECK_INT(total, ==, 8000);
	CHECK_INT(s->n, ==, 8000);
	for (i = 1; i < s->n; i++) {
		CHECK_U64(s->time[i - 1], <=, s->time[i]);
		if (s->time[i - 1] == s->time[i])
			CHECK_INT(s->tid[i - 1], <, s->tid[i]);
	}
	CHECK_INT(reorder__count(q), ==, 0);
	CHECK_U64(reorder__late(q), ==, 0);
	free(s);
	reorder__free(q);
}

TEST(reorder_free_with_queued_events)
{
	struct reorder *q = new_queue();
	struct task_event ev = {.type = TASK_EVENT_MMAP, .time = 9, .filename = "/lib/x.so"};

	/* The ASan build reports a leak if the queued copies are not freed. */
	CHECK_INT(reorder__push(q, &ev), ==, 0);
	push(q, 1, 1);
	reorder__free(q);
	reorder__free(NULL);
}
