/* SPDX-License-Identifier: MIT */
/*
 * One profiling run (session.c) in pieces that share its state: the
 * samples and stack copies it turns into the profile (session_samples.c),
 * the counters its summaries read (session_counters.c), and what it writes
 * or uploads (session_outputs.c).
 */
#ifndef CPROF_SESSION_INTERNAL_H
#define CPROF_SESSION_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "build/profile.h"
#include "deliver/batch.h"
#include "deliver/batcher.h"
#include "deliver/delivery.h"
#include "deliver/output.h"
#include "deliver/spool.h"
#include "deliver/upload.h"
#include "encode/folded.h"
#include "encode/pprof.h"
#include "encode/svg.h"
#include "lib/block_pool.h"
#include "lib/cancel.h"
#include "lib/clock.h"
#include "lib/fuse_file.h"
#include "lib/kernel_caps.h"
#include "lib/load_budget.h"
#include "lib/procfs.h"
#include "lib/sbuf.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "net/tls.h"
#include "resolve/debuginfod.h"
#include "resolve/debuginfod_queue.h"
#include "resolve/symbolizer.h"
#include "resolve/task_feed.h"
#include "sample/region_feed.h"
#include "sample/sampler.h"
#include "sample/target.h"
#include "sample/task_events.h"
#include "sample/unwinder.h"
#include "unwind/kernel_facts.h"
#include "unwind/stack_walk.h"
#include "unwind/table_loader.h"
#include "store/table_store.h"
#include "lib/sigbus.h"
#include "session.h"
#include "signals.h"
#include "summary.h"

#define POLL_MS 100
/*
 * A process record is in its ring this long after the time it carries, at
 * most: records are read up to now less this, so that those of every CPU
 * come in time order. (Taken with its time, a record is written without
 * sleeping.)
 */
#define RECORD_DELAY_MS 2
/* Far finer than the second the in-kernel walk counts from it (tell_followed). */
#define FOLLOWED_STEP_NS 10000000ull
/*
 * Stack copies' memory kept for reuse, as much as was queued at once (see
 * block_pool.h), up to some 16 MB.
 */
#define COPIES_KEPT 1000
/* Per CPU, for the kernel's process records: some 90 exec'ing processes' worth. */
#define RECORD_PAGES	  16
#define DRAIN_INTERVAL_MS 1000
#define MAX_FRAMES	  (2 * CPROF_UNWIND_MAX_DEPTH + 2)
/* The unwind tables kept between runs: some 1,000 programs' and libraries' (libc's is 93 KB). */
#define TABLE_STORE_BYTES (64ull << 20)
/* Unwind table rows a profile of some processes starts with: 1 MB of map. */
#define FIRST_ROWS (1u << 18)
/* One-shot: about 3.5 s of backoff in all. Continuous: the spool takes over sooner. */
#define ONESHOT_ATTEMPTS    4
#define CONTINUOUS_ATTEMPTS 3

struct run {
	const struct session_opts *o;
	/* When the head start began sampling (sampler_head_start); 0: it did not. */
	uint64_t head_start_ns, head_start_real_ns;
	bool first_said;
	uint64_t prev_drain_begun; /* the start of the drain before the current one */
	struct profile *prof;
	struct symbolizer *sym;
	struct sampler *sampler;
	struct unwinder *unwinder;  /* the CFI tables' maps; NULL: frame pointers */
	struct region_feed *feed;   /* keeps them current */
	struct table_store *tables; /* their tables kept between runs; NULL: none */
	/* Stack copies waiting for the records before them, oldest first (see run__walk_copies). */
	struct cprof_copy **copies;
	size_t ncopies, copies_cap;
	struct block_pool *copy_pool; /* their memory, reused */
	uint64_t followed_until;      /* every record timed before this was applied */
	uint64_t followed_told;	      /* what the in-kernel walk was told of it */
	uint64_t bad_copies;	      /* malformed, or no memory to keep them: lost samples */
	uint64_t forks_late;	      /* children the fork hook missed, followed from the records */
	struct u64map *thread_names;  /* tid -> its comm (malloc'd), for copies from perf samples */
	int errors;		      /* entries that could not be added (allocation failures) */
	uint32_t *pids;		      /* -p targets, thread IDs replaced by their process */
	size_t npids;
	/* --server */
	struct upload *upload;
	struct cancel *cancel; /* one-shot: a signal ends the upload */
	struct batcher *batcher;
	struct spool *spool;
	struct delivery *delivery;
	/* Debug files from debuginfod servers (NULL: none asked for), and what ends their fetches.
	 */
	struct debuginfod *dbgd;
	struct debuginfod_queue *fetches;
	struct cancel *fetch_cancel;
	struct tls_client *fetch_tls;
	struct output *out;	    /* one-shot: the file or stdout */
	struct target *cmd;	    /* the command cprof started, or NULL */
	struct task_events *events; /* the kernel's process records; NULL: not followed */
	bool caught_up;		    /* this drain's records were read before its first entry */
	bool events_failed;	    /* reading them failed once: said so */
	bool cmd_done;		    /* it exited during the profile, with cmd_status */
	int cmd_status;
	/* Clocks, CLOCK_MONOTONIC ns: UINT64_MAX for a deadline that does not apply. */
	uint64_t start, deadline, next_drain, next_boundary;
	struct load_budget budget; /* what other users' files may cost: caps, and until when */
	struct summary_info base;  /* what the counters are read into: rate, CPUs, mode */
	/* Continuous mode */
	uint64_t interval_start;
	struct summary_info prev; /* counters at the last boundary (they are cumulative) */
	uint64_t intervals, empty_intervals, unbatched, samples, unnamed_samples, unmapped_samples;
	uint64_t function_start_samples;
	uint64_t line_samples[SYM_LINE_MAX];
};

/* session.c */
void run__catch_up(struct run *r);

/* session_samples.c */
void run__free_copy(struct run *r, struct cprof_copy *c);
void run__free_thread_names(struct run *r);
void run__on_copy(void *ctx, const void *data, uint32_t size);
void run__on_entry(void *ctx, const struct sampler_entry *e);
void run__walk_copies(struct run *r, uint64_t before);

/* session_counters.c */
void run__read_info(struct run *r, struct summary_info *in);
struct summary_info run__since(const struct summary_info *cur, const struct summary_info *prev);

/* session_outputs.c */
int run__end_interval(struct run *r, uint64_t now, bool last);
int run__finish_continuous(struct run *r, const struct summary_info *total);
int run__setup_upload(struct run *r);
int run__upload_or_save(struct run *r, const struct summary_info *info, struct output *out);
int run__write_profile(const struct session_opts *o, struct profile *prof,
		       const struct summary_info *info, struct output *out);

#endif
