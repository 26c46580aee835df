/* SPDX-License-Identifier: MIT */
/*
 * The kernel side seen from user space: loads the embedded BPF skeleton,
 * selects targets, attaches the sampling events, and drains the in-kernel
 * aggregation. It knows nothing of symbols or output formats.
 */
#ifndef CPROF_SAMPLER_H
#define CPROF_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler_abi.h"

struct sampler;
struct unwinder;

/*
 * A head start (whole-system runs with the unwinder): the per-CPU sampling
 * events, opened at launch with rings of their own and sampling at once,
 * before the BPF program is loaded (tens of milliseconds). Each of their
 * samples carries the user registers and the top of the user stack, which
 * user space walks with the tables; the sampler attaches its program to
 * the same events, and from then on they write nothing to the rings.
 */
struct sampler_head_start {
	int map_fd; /* -1: none */
	struct event_reader *reader;
};

/*
 * Opens it; 0 or a negative errno (sampling then starts with the program):
 * -EDQUOT before Linux 5.11 with RLIMIT_MEMLOCK finite, which the BPF maps
 * need all of.
 */
int sampler__open_head_start(unsigned int hz, struct sampler_head_start *out);
/* Closes one not handed to sampler__new; NULL-safe, and a no-op once handed over. */
void sampler__close_head_start(struct sampler_head_start *h);

struct sampler_opts {
	unsigned int hz;
	bool filter_pids;     /* only processes added with sampler__add_target */
	bool follow_children; /* with filter_pids: add their children as they fork */
	bool include_idle;
	uint32_t stack_entries; /* per set; 0 = default */
	uint32_t count_entries; /* per set; 0 = default */
	/*
	 * The unwind tables' maps: user stacks are walked with them (the
	 * unwinder's object, Linux 5.5+), else by frame pointers. Borrowed.
	 */
	struct unwinder *unwinder;
	/*
	 * Without an unwinder: every sample is handed to user space as a stack
	 * copy (on_copy), as when the unwinder's object cannot load.
	 */
	bool copy_samples;
	/*
	 * Samples sent as a stack copy (struct cprof_copy, size bytes, only
	 * 4-byte aligned: copy it out), to be walked in user space; NULL: none
	 * are kept, and they are counted as lost.
	 */
	void (*on_copy)(void *ctx, const void *copy, uint32_t size);
	void *copy_ctx;
	/*
	 * Taken over by sampler__new, whatever it returns (NULL: none). Only
	 * without filter_pids: its samples are every CPU's, kept as the program
	 * keeps them then (the idle task's with include_idle only).
	 */
	struct sampler_head_start *head_start;
};

/* One aggregated entry: a (pid, tid, comm, user stack, kernel stack) and its count. */
struct sampler_entry {
	uint32_t pid;
	uint32_t tid;
	uint64_t space; /* its address space's id (see `spaces` in the BPF program); 0: none */
	char comm[CPROF_COMM_LEN + 1];
	uint64_t count;
	const uint64_t *user_ips; /* leaf first */
	uint32_t user_n;
	const uint64_t *kern_ips;
	uint32_t kern_n;
	/*
	 * 0, or why the user stack is missing: the negative errno bpf_get_stackid
	 * gave (-EEXIST: collision), -ENOSPC when a walked stack found no room in
	 * the perf buffer, -ENOENT when its record was lost.
	 */
	int user_err;
	int kern_err;
	bool user_walked;   /* the user stack was walked with the unwind tables, */
	uint32_t user_stop; /* and ended so: enum cprof_unwind_stop */
};

typedef void (*sampler_entry_fn)(void *ctx, const struct sampler_entry *e);
typedef void (*sampler_process_fn)(void *ctx, uint32_t pid);

/*
 * Opens and loads the BPF object, with one map set; errors are explained in
 * one logged line.
 */
int sampler__new(const struct sampler_opts *opts, struct sampler **out);
void sampler__free(struct sampler *s);
/*
 * 0 when user stacks are walked with the unwind tables; -ENOENT when no
 * unwinder was given; else why its object could not be loaded (the
 * sampler's was, and walks by frame pointers).
 */
int sampler__unwind_status(const struct sampler *s);
/*
 * True when samples come as stack copies from the sampling events' rings
 * (asked for, or the unwinder's object could not load): on_copy gets each.
 */
bool sampler__copies(const struct sampler *s);
/* The id of pid's current address space (the BPF `spaces` map); 0: none since cprof began. */
uint64_t sampler__space_of(struct sampler *s, uint32_t pid);

int sampler__add_target(struct sampler *s, uint32_t pid);
/*
 * The process cprof forked to exec the command: sampled from its exec on
 * (counted in CPROF_STAT_BEFORE_EXEC until then), where the exec hook can
 * be attached. Call before sampler__start, and release it after.
 */
int sampler__add_command(struct sampler *s, uint32_t pid);
/*
 * Removes exited processes from the targets (children are added in the
 * kernel as they fork), so a long profile of a forking workload does not
 * fill the map. Returns how many were removed.
 */
int sampler__prune_targets(struct sampler *s);
/*
 * A fork the kernel's record shows and the fork hook may have missed (see
 * sampler__skipped): with children followed, adds child to the targets if
 * parent is one and child is not yet. Returns 1 if it was added, 0 if not,
 * or a negative errno.
 */
int sampler__follow_late(struct sampler *s, uint32_t parent, uint32_t child);
/* Attaches the per-CPU sampling events: sampling begins. */
int sampler__start(struct sampler *s);

/* Detaches the events: sampling ends; what was counted can still be drained. */
void sampler__stop(struct sampler *s);
int sampler__cpu_count(const struct sampler *s);

/* A descriptor that polls readable when notifications wait; -1 if there are none. */
int sampler__fd(const struct sampler *s);
/*
 * Calls fn for each process whose first-sight notification waits, and
 * hands the stack copies waiting to on_copy. now: what the kernel's rings
 * hold this moment too, not only what the reader thread has queued (every
 * sample taken before now is then handed out). Returns the number of
 * processes handled, or a negative errno. May be called from
 * sampler__drain's callback.
 */
int sampler__consume(struct sampler *s, sampler_process_fn fn, void *ctx, bool now);

/* True when the active set is filling up and should be drained soon. */
bool sampler__should_drain(struct sampler *s);

/*
 * Switches samples to the other map set, waits for samples in flight on the
 * old set, then reports every entry of the old set to fn and clears it.
 * After sampler__stop it drains both sets. The first drain while sampling
 * also replaces the head start's events with plain ones (see copy_rings.c).
 */
int sampler__drain(struct sampler *s, sampler_entry_fn fn, void *ctx);

/* When the head start took its first sample seen so far (CLOCK_MONOTONIC ns); 0: none. */
uint64_t sampler__head_start_first(const struct sampler *s);
/* Sums the per-CPU counters of enum cprof_stat into stats[CPROF_STAT_MAX]. */
int sampler__read_stats(struct sampler *s, uint64_t *stats);
/*
 * Runs of the sampling program (samples) and of the fork, exec and exit
 * hooks (hooks) that the kernel skipped because another BPF program or a
 * bpf() call was under way on that CPU, as far as the kernel counts them.
 */
void sampler__skipped(const struct sampler *s, uint64_t *samples, uint64_t *hooks);
/*
 * The preallocated BPF maps' keys and values as sized (per-CPU ones on
 * every CPU), the unwinder's tables' maps included: what the kernel holds
 * for this run whatever it samples. Maps allocated as they fill (lazy_maps.h)
 * are not in it.
 */
uint64_t sampler__map_bytes(const struct sampler *s);
/* Notifications the perf buffer lost (the kernel could not queue them). */
uint64_t sampler__lost_notifications(const struct sampler *s);
/* Entries whose stacks had vanished from the stack map when drained. */
uint64_t sampler__missing_stacks(const struct sampler *s);
/*
 * Samples sent whole past a stack-map collision, as a stack copy, or counted
 * by their new stack's record, that could not be kept (no memory, no taker).
 */
uint64_t sampler__lost_spills(const struct sampler *s);

#endif
