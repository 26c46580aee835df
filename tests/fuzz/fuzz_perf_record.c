// SPDX-License-Identifier: MIT
/*
 * The records of a perf ring are the kernel's, but a bug, a newer kernel or
 * a ring we fell out of step with can hand the parser any bytes. The input
 * is read as a ring's contents: records one after the other, each parsed
 * from a heap copy of exactly its header's size (ASan then catches a read
 * past it), the parsed events pushed through a reorder queue, popped in a
 * few steps. Checked: what parses is bounded and terminated; each pop is in
 * time order.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "sample/perf_record.h"
#include "sample/reorder.h"

#define TID_TIME (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

static uint64_t prev_time;

static void check_popped(void *ctx, const struct task_event *ev)
{
	(void)ctx;
	if (ev->time < prev_time)
		abort();
	prev_time = ev->time;
	if (ev->filename && strlen(ev->filename) > 65535)
		abort();
}

static void check_parsed(const struct task_event *ev, const uint8_t *rec, size_t size)
{
	if (ev->type < TASK_EVENT_FORK || ev->type > TASK_EVENT_LOST)
		abort();
	if (memchr(ev->comm, '\0', sizeof(ev->comm)) == NULL)
		abort();
	if (ev->build_id_size > sizeof(ev->build_id))
		abort();
	if ((ev->type == TASK_EVENT_MMAP) != (ev->filename != NULL))
		abort();
	if (ev->filename && ((const uint8_t *)ev->filename < rec ||
			     (const uint8_t *)ev->filename + strlen(ev->filename) >= rec + size))
		abort();
}

static void pop(struct reorder *q, uint64_t until)
{
	prev_time = 0;
	reorder__pop_until(q, until, check_popped, NULL);
}

/* Parses one record both with and without a trailer; queues what parses with it. */
static void take(struct reorder *q, const uint8_t *data, size_t size)
{
	struct task_event ev;
	uint8_t *rec = malloc(size);

	if (!rec)
		return;
	memcpy(rec, data, size);
	if (!perf_record__parse(rec, size, 0, &ev))
		check_parsed(&ev, rec, size);
	if (!perf_record__parse(rec, size, TID_TIME, &ev)) {
		check_parsed(&ev, rec, size);
		if (ev.type != TASK_EVENT_LOST && reorder__push(q, &ev))
			abort();
		if (reorder__count(q) % 4 == 0)
			pop(q, ev.time / 2 + ev.time / 4);
	}
	free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_header hdr;
	struct reorder *q = NULL;
	size_t off = 0;

	if (reorder__new(&q))
		return 0;
	while (size - off >= sizeof(hdr)) {
		memcpy(&hdr, data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > size - off) {
			/* What a ring reader would drop: still parsed, as the rest of the input. */
			take(q, data + off, size - off);
			break;
		}
		take(q, data + off, hdr.size);
		off += hdr.size;
	}
	pop(q, UINT64_MAX);
	if (reorder__count(q))
		abort();
	reorder__free(q);
	return 0;
}
