/* SPDX-License-Identifier: MIT */
/*
 * The end-of-run report: what was sampled, what was lost and why, and where
 * the CPU went (top functions by self samples). The loss accounting is also
 * stored in the profile as comments, so the file tells the same truth.
 */
#ifndef CPROF_SUMMARY_H
#define CPROF_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "resolve/debuginfod_queue.h"
#include "lib/fuse_file.h"
#include "resolve/symbolizer.h"
#include "sampler_abi.h"
#include "unwind_abi.h"

struct profile;

struct summary_info {
	uint64_t hz;
	uint64_t duration_ns;
	int ncpus;
	uint64_t stats[CPROF_STAT_MAX]; /* BPF-side counters */
	bool stats_unread; /* reading them failed: nothing to check the profile against */
	uint64_t lost_notifications;
	uint64_t missing_stacks;
	uint64_t lost_spills;		  /* spilled samples user space had no memory to keep */
	uint64_t sym[SYM_STAT_MAX];	  /* symbolizer counters */
	bool debuginfod;		  /* debug files were asked of debuginfod servers */
	struct debuginfod_counts fetched; /* the run's fetches so far, by outcome */
	int include_idle;
	bool targeted;		  /* -p or a command: other processes and idle CPUs are not ours */
	uint64_t unnamed_samples; /* samples with a user frame with no name at all */
	/* Samples with a user frame named only by its function's start (no symbol). */
	uint64_t function_start_samples;
	/* Of those, samples with a user address in no known mapping, and whose they were. */
	uint64_t unmapped_samples;
	char unmapped_who[160];	      /* "make 12, sh 3" (the processes with the most), or "" */
	char unopened_who[160];	      /* whose mapped files could not be opened (symbolizer) */
	struct fuse_file_counts fuse; /* files on FUSE: read by a child, or not answered */
	uint64_t kernel_max_rate;     /* kernel.perf_event_max_sample_rate at the end; 0: unknown */
	/* The kernel's records of forks, execs and mmaps (sample/task_events.h). */
	bool followed;		 /* read: processes were followed as they began */
	uint64_t records;	 /* read */
	uint64_t records_lost;	 /* dropped by the kernel: its ring was full */
	uint64_t records_broken; /* malformed */
	uint64_t records_late;	 /* came out of time order */
	/*
	 * Runs the kernel skipped because a BPF program or a bpf() call was under
	 * way on that CPU, as far as it counts them: of the sampling program
	 * (lost samples) and of the fork, exec and exit hooks; and children the
	 * fork hook missed, followed from the kernel's records a moment later.
	 */
	uint64_t skipped_samples, skipped_hooks, forks_late;
	/*
	 * How user stacks were walked. unwind_status 0: with the CFI tables
	 * (the unwinder's BPF object); else frame pointers only, and why:
	 * -ENOENT asked for (--frame-pointers), another errno the unwinder's
	 * object could not be loaded (e.g. a kernel before 5.5).
	 */
	int unwind_status;
	/*
	 * Every user stack was walked with the CFI tables in user space, from
	 * the copy of it each sample carried (--stack-copies: unwind_status is
	 * -ENOENT; or the unwinder's object could not be loaded: why).
	 */
	bool copy_walks;
	uint64_t walked;		     /* samples whose user stack the tables walked */
	uint64_t walk_stops[CPROF_STOP_MAX]; /* of those, by how the walk ended */
	/* Samples taken in the kernel: their user stacks by frame pointers (not walked). */
	uint64_t fp_user;
	uint32_t max_stack; /* --max-stack: user frames a walk keeps (0: 127) */
	/* Samples of the profile that end in a truncation marker, and where those walks stopped. */
	uint64_t truncated_samples;
	char truncated_who[160]; /* "liblzma.so.5 120, python3.11 7" (files with the most), or "" */
	uint64_t store_capped;	 /* tables and symbols not kept between runs: the store's cap */
	/*
	 * Source lines were looked up (pprof's frames), and the samples with
	 * user code by what their leaf user frame got: enum symbolizer_line.
	 */
	bool lines;
	bool inlines; /* inlined functions were looked up with them (--inlines) */
	uint64_t line_samples[SYM_LINE_MAX];
	/* What the kernel could not do: bits 1 << enum kernel_cap (lib/kernel_caps.h). */
	unsigned kernel_fallbacks;
	const char *kernel_as; /* the release emulated (CPROF_KERNEL_AS), or NULL */
	/*
	 * An interval's counters (continuous mode): samples counted before
	 * its start can be drained in it, so its profile may hold more.
	 */
	bool interval;
	/* Files over the run's caps, or cut off by its deadline (lib/load_budget.h). */
	uint64_t symtabs_refused, symtabs_abandoned, symtabs_over_held, cfi_refused, cfi_abandoned;
	uint64_t cfi_left_behind; /* of cfi_abandoned: builds left behind on their thread */
	uint64_t files_cut_short; /* reads of mapped files ended by SIGBUS (lib/sigbus.h) */
	/* Code mappings left without a table: their process had too many (process_regions.c). */
	uint64_t regions_over_cap;
};

/*
 * Samples of p that have at least one user frame with no name at all;
 * *by_start gets those with one named only by its function's start.
 */
/* The samples with user code by what their leaf user frame's line is (enum symbolizer_line). */
void summary__line_samples(const struct profile *p, uint64_t out[SYM_LINE_MAX]);
uint64_t summary__unnamed_samples(const struct profile *p, uint64_t *by_start);

/*
 * Samples of p with a user address in no mapping known to its process
 * ("[unknown]" frames); who gets the names of the processes that had most
 * of them, with their counts ("[pid N]" for a name that shows nothing).
 */
uint64_t summary__unmapped_samples(const struct profile *p, char *who, size_t size);

/*
 * Samples of p whose last frame is a truncation marker; who gets the files
 * (base names) where most of those walks stopped, with their counts, or the
 * frame's name ("[unknown]") where no file held it.
 */
uint64_t summary__truncated_samples(const struct profile *p, char *who, size_t size);

/* Samples taken but not in the profile (the summary's "lost samples"). */
uint64_t summary__lost_samples(const struct summary_info *info);

/* Adds the loss accounting to the profile as comments. */
int summary__add_comments(struct profile *p, const struct summary_info *info);
/* The loss lines of the report, for total samples in the profile(s). */
void summary__print_losses(FILE *f, uint64_t total, const struct summary_info *info);
/* Prints the report; top_n functions by self samples. */
void summary__print(FILE *f, const struct profile *p, const struct summary_info *info, int top_n);

#endif
