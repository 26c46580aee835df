/* SPDX-License-Identifier: MIT */
/*
 * Keeps the unwinder's maps (sample/unwinder.h) current with the processes
 * cprof samples: each process's executable mappings as a region set
 * (unwind/process_regions.h), each mapped file's table built once
 * (unwind/table_cache.h) and loaded once. It takes the same inputs as the
 * symbolizer: a process seen for the first time, and the kernel's records
 * of forks, execs, mmaps and exits, in time order.
 */
#ifndef CPROF_REGION_FEED_H
#define CPROF_REGION_FEED_H

#include <stdint.h>

#include "sample/perf_record.h"
#include "sampler_abi.h"
#include "unwind/stack_walk.h"
#include "unwind/process_regions.h"
#include "unwind/table_cache.h"

struct load_budget;
struct region_feed;
struct sampler;
struct unwinder;

struct region_feed_stats {
	struct process_regions_stats regions;
	struct table_cache_stats tables;
	uint64_t snapshots_failed; /* a process's /proc/PID/maps could not be read */
	uint64_t stale_execs;	   /* exec records older than the process's space: left unbound */
	uint64_t files;		   /* tables found by their file too (the walk by file) */
	uint64_t files_refused;	   /* ... that its map, full, refused */
};

/*
 * u, s and store (where tables are kept between runs; NULL: none) must
 * outlive f. Without u (NULL), the tables serve region_feed__walk only.
 */
int region_feed__new(struct unwinder *u, struct sampler *s, struct table_store *store,
		     struct region_feed **out);
void region_feed__free(struct region_feed *f);
/* The run's caps and deadline for CFI (lib/load_budget.h), borrowed by its tables. */
void region_feed__set_budget(struct region_feed *f, struct load_budget *budget);

/*
 * Tables are built off the loop from now on (unwind/table_loader.h): their
 * regions wait, the walk stopping there, until region_feed__pick_up. 0, or
 * a negative errno.
 */
int region_feed__load_off_loop(struct region_feed *f);
/* Readable when builds have ended: for the loop's poll; -1 when tables are not built off it. */
int region_feed__fd(const struct region_feed *f);
/* The tables whose builds ended go to the regions that wait for them. */
void region_feed__pick_up(struct region_feed *f);
/*
 * The run is over: no build begins, those under way end by deadline_ns or
 * are left behind (counted in the budget as abandoned); those that ended
 * are picked up. Returns how many were left behind.
 */
size_t region_feed__stop_builds(struct region_feed *f, uint64_t deadline_ns);

/*
 * Whole-system profiles: every process that execs gets its regions from its
 * exec on, not only once sampled (a compiler under make may live 10 ms).
 */
void region_feed__follow_all(struct region_feed *f);
/* A process sampled for the first time: its mappings, read from /proc. */
void region_feed__note_process(struct region_feed *f, uint32_t pid);
/*
 * The command's process, between its fork and its exec: it runs cprof's
 * own code, which is not sampled. Tracked with no regions (no table is
 * made for cprof); its exec's records give it its program's.
 */
void region_feed__note_command(struct region_feed *f, uint32_t pid);
/* Whether process pid is followed: its records, from now on, keep its regions. */
bool region_feed__tracked(const struct region_feed *f, uint32_t pid);
/* One of the kernel's records, in time order. */
void region_feed__apply(struct region_feed *f, const struct task_event *ev);
/* Applies the exits of processes gone long enough before now (CLOCK_MONOTONIC ns). */
void region_feed__reap(struct region_feed *f, uint64_t now);
void region_feed__stats(const struct region_feed *f, struct region_feed_stats *out);

/*
 * Walks a stack copy (struct cprof_copy) with the tables, as the BPF walk
 * would have: call it once every record timed before the copy was applied,
 * so that the regions are those of the moment the sample was taken.
 */
void region_feed__walk(struct region_feed *f, const struct cprof_copy *c, struct walk_result *out);
/*
 * The space id the copy's frames are named in, at the same moment: its
 * own, but for a copy from a perf sample (its time stands for it) taken
 * during an exec, whose registers are still the old program's.
 */
uint64_t region_feed__space_of(struct region_feed *f, const struct cprof_copy *c);

#endif
