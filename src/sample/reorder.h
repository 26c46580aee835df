/* SPDX-License-Identifier: MIT */
/*
 * Puts task events from several per-CPU rings back in time order. Each ring
 * is in order, but a process can migrate between its exec's COMM record and
 * its first mmaps, so these land in different rings and are read in the
 * wrong order. The queue holds copies and hands them out, oldest first, only
 * once they are older than a watermark the caller chooses: by then every
 * ring has had the time to deliver what came before.
 */
#ifndef CPROF_REORDER_H
#define CPROF_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "sample/perf_record.h"

struct reorder;

/* Called for each event handed out; ev and its filename are valid during the call only. */
typedef void (*task_event_fn)(void *ctx, const struct task_event *ev);

int reorder__new(struct reorder **out);
void reorder__free(struct reorder *q);
/* Queues a copy of ev, its filename included. 0 or -ENOMEM. */
int reorder__push(struct reorder *q, const struct task_event *ev);
/*
 * Calls fn for every queued event with time <= until, in time order (equal
 * times in push order), and removes them. Returns how many.
 */
size_t reorder__pop_until(struct reorder *q, uint64_t until, task_event_fn fn, void *ctx);
size_t reorder__count(const struct reorder *q);
/*
 * Events pushed with a time older than one already handed out: they came too
 * late to be in order. They are still handed out, by the next pop that
 * reaches their time, and counted here.
 */
uint64_t reorder__late(const struct reorder *q);

#endif
