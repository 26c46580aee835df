/* SPDX-License-Identifier: MIT */
/*
 * The maps a BPF walk reads (bpf/unwinder.bpf.c), from user space: the rule
 * dictionary, each file's table (once, whatever the number of processes
 * that map it), the region sets (each address space's executable regions
 * pointing at their tables) and which process uses which set.
 *
 * The maps are created here, once, and handed to the BPF objects the
 * sampler loads (the sampling programs', and the walk's on a thread), so
 * tables outlive an object refused and replaced. Tables are stored 64 rows to a map element; space
 * in the row and page arrays is handed out and given back in that unit.
 */
#ifndef CPROF_UNWINDER_H
#define CPROF_UNWINDER_H

#include <stdint.h>

#include "unwind/kernel_btf.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

struct bpf_object;
struct unwinder;

struct unwinder_opts {
	uint32_t max_rows; /* rows of all tables loaded at once; 0: default */
	/*
	 * Rows the map is made with, growing up to max_rows as tables need
	 * (see unwinder__on_grown); 0: max_rows from the start.
	 */
	uint32_t first_rows;
	uint32_t max_pages; /* 64 KiB pages of code covered by them; 0: default */
	uint32_t max_sets;  /* processes with a region set; 0: default */
	uint64_t ra_mask;   /* bits of a return address that are address (AArch64 PAC) */
	uint32_t max_depth; /* user frames a walk keeps (--max-stack); 0: 127 */
};

/* Where a table went in the maps. */
struct unwinder_table {
	uint64_t table_base;
	uint32_t row_base;
	uint32_t page_base;
	uint32_t npages;
	uint32_t row_chunks, page_chunks; /* the space it holds */
	uint32_t serial;		  /* this upload's, from 1 (see struct cprof_region) */
};

struct unwinder_stats {
	uint64_t map_bytes;	   /* of the preallocated maps' values, as created */
	uint32_t row_chunks_used;  /* of 64 rows */
	uint32_t row_chunks_peak;  /* the most used at once */
	uint32_t row_chunks;	   /* capacity */
	uint32_t page_chunks_used; /* of 64 pages */
	uint32_t page_chunks_peak;
	uint32_t page_chunks;
};

/* Creates the maps; a negative errno when BPF maps cannot be created. */
int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out);
void unwinder__free(struct unwinder *u);

/* Hands the maps to obj, an unwinder object opened but not loaded yet. */
int unwinder__share(const struct unwinder *u, struct bpf_object *obj);

/*
 * The row map is made small and replaced by a larger one, its rows copied,
 * when a table does not fit: the preallocated 16 MB of max_rows cost some
 * 2 ms of every run, and a profile of one program uses a few hundred KB.
 * fn must have the walk read rows_fd from its return on (the program that
 * reads the rows is loaded again with it); 0, or the table goes without.
 */
typedef int (*unwinder_grown_fn)(void *ctx, int rows_fd);
void unwinder__on_grown(struct unwinder *u, unwinder_grown_fn fn, void *ctx);
/* The row map now (it changes as it grows). */
int unwinder__rows_fd(const struct unwinder *u);

/* Sends the rules added to the dictionary since the last call. */
int unwinder__sync_rules(struct unwinder *u, const struct unwind_rules *rules);
/* Loads a table: -ENOSPC when the arrays are full. */
int unwinder__add_table(struct unwinder *u, const struct unwind_table *t,
			struct unwinder_table *out);
/* Gives a table's space back; no region may point at it any more. */
void unwinder__remove_table(struct unwinder *u, const struct unwinder_table *t);
/*
 * Code at [start, end) of region set `set`, whose table addresses are
 * pc - bias; t NULL: no CFI, frame-pointer steps.
 */
/*
 * Code at [start, end) of set whose file's table is being built: the walk
 * stops there as for a file whose table is not loaded (CPROF_STOP_NO_TABLE,
 * or a copy for user space if its process is young).
 */
int unwinder__add_pending_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end);
int unwinder__add_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end,
			 uint64_t bias, const struct unwinder_table *t);
void unwinder__remove_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end);
/*
 * Process pid's samples taken in address space `space` (the id of the
 * BPF `spaces` map) are walked with set.
 */
int unwinder__bind(struct unwinder *u, uint32_t pid, uint32_t set, uint64_t space);
/* Rebinds pid to set only if the kernel still has it bound (to any set). */
int unwinder__rebind(struct unwinder *u, uint32_t pid, uint32_t set);
void unwinder__unbind(struct unwinder *u, uint32_t pid);
/*
 * Where a task's user registers are saved while it runs in the kernel (from
 * the kernel's BTF): samples taken in the kernel get their user stacks
 * walked too, from then on.
 */
int unwinder__set_task_regs(struct unwinder *u, uint32_t task_stack_off, uint32_t pt_regs_size);
/*
 * Where a mapping's file identity is in the kernel's structs (from its BTF):
 * the walk by file (cprof_walk_file, where the kernel has bpf_find_vma)
 * finds tables by file from then on.
 */
int unwinder__set_file_offs(struct unwinder *u, const struct kernel_file_offs *o);
/*
 * The loaded table t is file (dev_major:dev_minor, inode) 's, whose code
 * is at segs: the walk by file finds it there. -ENOSPC when the map is full;
 * -EOPNOTSUPP where the kernel cannot walk by file.
 */
int unwinder__add_file(struct unwinder *u, const struct file_id *id, const struct exec_seg *segs,
		       uint32_t nsegs, const struct unwinder_table *t);
/* Before t is removed: the file is not found any more. */
void unwinder__remove_file(struct unwinder *u, const struct file_id *id);
/*
 * The kernel's records timed before until (CLOCK_MONOTONIC ns) are applied
 * and their regions bound: a sample the walk finds in no known mapping is
 * copied for user space while its process began less than a second before
 * that (not before now), however late user space is.
 */
int unwinder__set_followed(struct unwinder *u, uint64_t until);
uint64_t unwinder__ra_mask(const struct unwinder *u);
/* The user frames a walk keeps (unwinder_opts.max_depth). */
uint32_t unwinder__max_depth(const struct unwinder *u);
void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out);

#endif
