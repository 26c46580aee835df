/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables built on threads of their own, off the sampling loop, as
 * symbol tables are (resolve/symtab_loader.h): a user's file of 200 MB of
 * CFI cost the loop seconds of no records read, no copies walked and no
 * tables for anyone else's code. The table cache posts a job, goes on, and
 * takes it back built; the loop waits on table_loader__fd to know when.
 *
 * A job is the caller's opaque work: run(job, stop) does it on a thread
 * (stop is set once the run is over: see table_loader__stop), drop(job)
 * frees one left behind. From post until take hands it back, the job is
 * the loader's.
 *
 * Three threads build, one file at a time each, by the job's cost (its
 * bytes of CFI): up to TABLE_LOADER_LARGE, up to TABLE_LOADER_HUGE (the
 * largest real files), and past it (only a user's file made to cost);
 * each the cheapest queued first. A user's file just under the caps takes
 * seconds, a compiler's a second on a busy machine, libc's 10-50 ms: in
 * the order posted, a process begun behind such files had its tables after
 * the run.
 */
#ifndef CPROF_TABLE_LOADER_H
#define CPROF_TABLE_LOADER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Costs past which a job goes to the next thread: libc has 0.3 MB of CFI, libnvrtc 6.8 MB. */
#define TABLE_LOADER_LARGE (1ull << 20)
#define TABLE_LOADER_HUGE  (8ull << 20)

/* How long stopping waits for a build past its deadline to notice (as SYMTAB_LOADER_STOP_NS). */
#define TABLE_LOADER_STOP_NS (300 * 1000000ull)

struct table_loader;

typedef void (*table_job_run_fn)(void *job, const atomic_bool *stop);
typedef void (*table_job_drop_fn)(void *job);

/* Starts the threads. 0, or a negative errno. */
int table_loader__new(table_job_run_fn run, table_job_drop_fn drop, struct table_loader **out);
/*
 * Stops the builds (table_loader__stop, for TABLE_LOADER_STOP_NS at most)
 * and ends the threads. Jobs not taken back are dropped, but those left
 * behind, dropped by the thread still in them.
 */
void table_loader__free(struct table_loader *l);

/* Hands job to the loader. 0, or -ENOMEM (the job stays the caller's). */
int table_loader__post(struct table_loader *l, void *job, uint64_t cost);
/* A job that ended, the caller's again; NULL when none has since the last take. */
void *table_loader__take(struct table_loader *l);
/*
 * Readable (an eventfd) while a job has ended and not been taken: for the
 * loop's poll. table_loader__take empties it.
 */
int table_loader__fd(const struct table_loader *l);
/*
 * Waits until a job has ended and is not taken, or until deadline_ns
 * (CLOCK_MONOTONIC). True when one has.
 */
bool table_loader__wait_one(struct table_loader *l, uint64_t deadline_ns);
/*
 * Ends the builds, as the run is over: stop is set for the job under way
 * and those not begun (which run sees set and ends at once); later posts
 * too. Waits for them until deadline_ns (CLOCK_MONOTONIC): those still
 * under way then (a read that blocks) are left behind, never taken back.
 * Returns how many.
 */
size_t table_loader__stop(struct table_loader *l, uint64_t deadline_ns);

#endif
