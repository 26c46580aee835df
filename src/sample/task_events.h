/* SPDX-License-Identifier: MIT */
/*
 * Follows every fork, exec, executable mmap and exit on the system as the
 * kernel reports them, the way `perf record` does: one software dummy perf
 * event per online CPU asking only for side-band records (task, comm with
 * exec, mmap2), each with its own ring, stamped with CLOCK_MONOTONIC so
 * their times compare with bpf_ktime_get_ns(). The records of all rings are
 * handed out merged in time order (sample/reorder.h).
 */
#ifndef CPROF_TASK_EVENTS_H
#define CPROF_TASK_EVENTS_H

#include <stdint.h>

#include "sample/reorder.h"

struct task_events;

/*
 * Opens one event per online CPU, each with a ring of `pages` data pages (a
 * power of two; 16 = 64 KiB with 4 KiB pages is a good default), enabled at
 * once. A ring wakes the reader each time a quarter of it more has been
 * written (see task_events__open_wakeup), so the caller must also read on a
 * timer, or the last records of a quiet moment wait for the next. On failure
 * returns a negative errno and has logged one line saying why (permissions,
 * which attribute this kernel lacks, the locked-memory limit).
 */
int task_events__open(unsigned int pages, struct task_events **out);
/*
 * The same, choosing when a ring wakes the reader: each time wakeup_bytes
 * more have been written to it (1: on every record; at most the ring's size),
 * or with 0, as attr.wakeup_events = 1 asks, which the kernel applies to
 * samples only: side-band records then wake the reader every half ring.
 */
int task_events__open_wakeup(unsigned int pages, unsigned int wakeup_bytes,
			     struct task_events **out);
void task_events__free(struct task_events *te);
/* Readable (POLLIN) when a ring has woken the reader: an epoll descriptor over the events. */
int task_events__fd(const struct task_events *te);
/*
 * Reads all the records of every ring and queues them, then hands out in time
 * order the queued events with time <= until (CLOCK_MONOTONIC ns: now minus a
 * few ms while running, UINT64_MAX at the very end). A TASK_EVENT_LOST is
 * handed out as soon as it is read, before the ordered events: whatever it
 * stands for is missing from the order anyway. Returns how many events were
 * handed out, or a negative errno (-ENOMEM: the records read so far are
 * queued, the one that failed is dropped).
 */
int task_events__read(struct task_events *te, uint64_t until, task_event_fn fn, void *ctx);
/* Events read but not handed out yet. */
size_t task_events__queued(const struct task_events *te);
/* Whether the fork of process pid is among them; its parent into *ppid. */
bool task_events__fork_queued(const struct task_events *te, uint32_t pid, uint32_t *ppid);

struct task_events_stats {
	uint64_t records;   /* read from the rings, of every type */
	uint64_t lost;	    /* dropped by the kernel, ring full: the sum of PERF_RECORD_LOST */
	uint64_t malformed; /* records that did not parse, had no time, or a bad size */
	uint64_t late;	    /* handed out after a newer one (reorder__late) */
	uint64_t ignored;   /* records of types that carry no task event */
};
void task_events__stats(const struct task_events *te, struct task_events_stats *out);

#endif
