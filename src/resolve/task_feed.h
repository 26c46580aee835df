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

/* One record, in time order (task_events__read hands them out so). */
void task_feed__apply(struct symbolizer *s, const struct task_event *ev);

#endif
