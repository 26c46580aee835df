/* SPDX-License-Identifier: MIT */
/*
 * Which code each process runs, as the BPF unwinder needs it: for a
 * sampled process, its region set (an id), and in that set the region
 * holding a PC, with its bias and its file's unwind table. This is the
 * bookkeeping of user space: which sets exist, what they hold and which
 * process uses which, told to a sink (the BPF maps, or a fake in tests)
 * change by change. It knows nothing of BPF.
 *
 * A set is the executable mappings of one address space: sorted regions
 * that never overlap. A forked child shares its parent's set until either
 * maps something (copy on write), as most children exec or exit first;
 * sets are counted by the processes bound to them. A file's table goes
 * into the sink once, however many regions of however many sets use it,
 * and leaves it with the last.
 */
#ifndef CPROF_PROCESS_REGIONS_H
#define CPROF_PROCESS_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/proc_maps.h"
#include "unwind/table_cache.h"

struct process_regions;

/*
 * Where the changes go; ctx is the first argument of each. The sink never
 * holds two overlapping regions of one set: a region being cut is removed
 * before its pieces are added. A region's table is loaded before the region
 * is added, and unloaded after the last region using it was removed.
 */
struct region_sink {
	void *ctx;
	/* The file m maps in pid (e.g. through /proc/PID/map_files): an fd, closed by the caller,
	 * or -errno. */
	int (*open_file)(void *ctx, uint32_t pid, const struct proc_map *m);
	/* 0, or -errno (-ENOSPC: the maps are full): the regions go in without their table. */
	int (*load_table)(void *ctx, const struct cached_table *ct);
	void (*unload_table)(void *ctx, const struct cached_table *ct);
	/* Code at [start, end) of set, table address = pc - bias; ct NULL: frame-pointer steps;
	 * ct->pending: its table is being built, the walk stops there (CPROF_STOP_NO_TABLE)
	 * until the region comes again with it. On error the region is left out of the set. */
	int (*add_region)(void *ctx, uint32_t set, uint64_t start, uint64_t end, uint64_t bias,
			  const struct cached_table *ct);
	void (*remove_region)(void *ctx, uint32_t set, uint64_t start, uint64_t end);
	/* pid's walks use set from now on; space is the caller's, passed through. */
	int (*bind)(void *ctx, uint32_t pid, uint32_t set, uint64_t space);
	/* pid has no set (it may have none already). */
	void (*unbind)(void *ctx, uint32_t pid);
};

struct process_regions_stats {
	/* Now: */
	uint64_t processes; /* tracked */
	uint64_t sets;
	uint64_t regions;	  /* in all sets */
	uint64_t tables_loaded;	  /* in the sink */
	uint64_t regions_pending; /* given to the sink with a pending table */
	/* Since the start, of the executable mappings made regions (not copies or cut pieces): */
	uint64_t regions_made;
	uint64_t regions_not_file;   /* anonymous (JIT) or kernel-made ([vdso]): no table */
	uint64_t regions_not_opened; /* open_file failed: no table */
	uint64_t regions_no_table;   /* the file has no usable CFI */
	uint64_t regions_table_full; /* the sink refused the table (load_table failed) */
	uint64_t regions_over_cap;   /* the process had too many already: no table */
	uint64_t regions_waited;     /* made while their file's table was pending */
	/* Refusals of the sink, since the start: */
	uint64_t regions_refused; /* add_region failed: the code is in no region */
	uint64_t binds_refused;	  /* bind failed: the process was unbound */
	uint64_t copies;	  /* sets copied on write */
};

/*
 * Set ids are 1..max_sets. The cache and the sink must outlive p; the sink
 * is copied.
 */
int process_regions__new(struct table_cache *cache, const struct region_sink *sink,
			 uint32_t max_sets, struct process_regions **out);
/* Unbinds every process and removes every region and table from the sink. */
void process_regions__free(struct process_regions *p);

/*
 * Errors: -ENOMEM, and -ENOSPC when all set ids are taken. The sink's
 * refusals are not errors: they are counted, and the model stays what the
 * sink holds. A failed call leaves the state as it was, except where said.
 */

/*
 * A process read from /proc (first seen, or read again): a new set of its
 * executable mappings replaces any it had, and pid is bound to it with
 * space. On error pid is no longer tracked (and unbound): its old set may
 * not be what it runs.
 */
int process_regions__snapshot(struct process_regions *p, uint32_t pid, uint64_t space,
			      const struct proc_maps *maps);
/*
 * pid was forked by ppid: it shares ppid's set and space, with no bind,
 * since the kernel side copies the parent's binding itself at fork. A child
 * of an untracked parent is not tracked (and unbound if it was: the pid was
 * reused). O(1). On error the child is not tracked, and unbound: the set
 * the kernel gave it may be freed and its id reused.
 */
int process_regions__fork(struct process_regions *p, uint32_t ppid, uint32_t pid);
/*
 * pid ran exec: a new empty set, bound with space. Untracked pids are
 * ignored. On error pid is no longer tracked (and unbound).
 */
int process_regions__exec(struct process_regions *p, uint32_t pid, uint64_t space);
/*
 * A new mapping of pid (the kernel's mmap records, in time order): it
 * replaces what was at its addresses, so it cuts the regions it overlaps,
 * even when it is not executable itself (then it adds none). A shared set
 * is copied first and pid bound to the copy with its space. Untracked pids
 * are ignored. O(log n + regions cut) sink calls; O(n) for a copy.
 */
int process_regions__mmap(struct process_regions *p, uint32_t pid, const struct proc_map *m);
/* pid exited: unbound, and its set freed if no other process uses it. */
void process_regions__exit(struct process_regions *p, uint32_t pid);
/*
 * ct's build ended (table_cache__take): the regions that waited for it
 * leave the sink and come back with its table, or without one (as a file
 * without CFI) if it has none or the sink refuses it. O(regions of all
 * sets).
 */
void process_regions__table_ready(struct process_regions *p, struct cached_table *ct);

bool process_regions__tracked(const struct process_regions *p, uint32_t pid);
/* pid's set id, 0 when untracked. */
uint32_t process_regions__set(const struct process_regions *p, uint32_t pid);
void process_regions__stats(const struct process_regions *p, struct process_regions_stats *out);

/* The code at an address of a process, for a walk in user space. */
struct region_code {
	const struct unwind_table *table; /* NULL: no table (frame-pointer steps) */
	uint64_t bias;			  /* table address = pc - bias */
	bool pending;			  /* its table is being built (table NULL) */
};

/* 0 and *out; -ESRCH for an untracked pid, -ENOENT for an address in no region. */
int process_regions__find(const struct process_regions *p, uint32_t pid, uint64_t pc,
			  struct region_code *out);

#endif
