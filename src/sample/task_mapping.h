/* SPDX-License-Identifier: MIT */
/*
 * The kernel's mmap records (perf_record.h) as the mappings /proc/PID/maps
 * would show (lib/proc_maps.h): for the symbolizer's processes and the
 * unwinder's regions alike.
 */
#ifndef CPROF_TASK_MAPPING_H
#define CPROF_TASK_MAPPING_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/proc_maps.h"
#include "sample/perf_record.h"

/*
 * An mmap record as the mapping /proc/PID/maps would show; its path goes
 * into name (size bytes, 4 KiB and more). False for a length that wraps.
 */
bool task_event__mapping(const struct task_event *ev, struct proc_map *m, char *name, size_t size);

#endif
