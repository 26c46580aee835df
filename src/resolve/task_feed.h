/* SPDX-License-Identifier: MIT */
/*
 * The kernel's records of processes, as the symbolizer takes them: the one
 * place where the sample stage's records meet the resolve stage's model.
 */
#ifndef CPROF_TASK_FEED_H
#define CPROF_TASK_FEED_H

#include <stdbool.h>
#include <stddef.h>

#include "resolve/symbolizer.h"
#include "sample/perf_record.h"

/*
 * An mmap record as the mapping /proc/PID/maps would show; its path goes
 * into name (size bytes, 4 KiB and more). False for a length that wraps.
 */
bool task_feed__mapping(const struct task_event *ev, struct proc_map *m, char *name, size_t size);
/* One record, in time order (task_events__read hands them out so). */
void task_feed__apply(struct symbolizer *s, const struct task_event *ev);

#endif
