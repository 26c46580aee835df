/* SPDX-License-Identifier: MIT */
/*
 * The BPF unwinder from user space (bpf/unwinder.bpf.c): loads it, and
 * puts into its maps what a walk needs: the rule dictionary, each file's
 * table (once, whatever the number of processes that map it), and each
 * process's executable regions pointing at their tables.
 *
 * Tables are stored 64 rows to a map element; space in the row and page
 * arrays is handed out in that unit.
 */
#ifndef CPROF_UNWINDER_H
#define CPROF_UNWINDER_H

#include <stdint.h>

#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

struct unwinder;

struct unwinder_opts {
	uint32_t max_rows;  /* rows of all tables loaded at once */
	uint32_t max_pages; /* 64 KiB pages of code covered by them */
	uint64_t ra_mask;   /* bits of a return address that are address (AArch64 PAC) */
};

/* Where a table went in the maps. */
struct unwinder_table {
	uint64_t table_base;
	uint32_t row_base;
	uint32_t page_base;
	uint32_t npages;
};

/* -EOPNOTSUPP when the kernel cannot run it (before 5.5), with the verifier's reason logged. */
int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out);
void unwinder__free(struct unwinder *u);

/* Sends the rules added to the dictionary since the last call. */
int unwinder__sync_rules(struct unwinder *u, const struct unwind_rules *rules);
/* Loads a table: -ENOSPC when the arrays are full. */
int unwinder__add_table(struct unwinder *u, const struct unwind_table *t,
			struct unwinder_table *out);
/*
 * Process pid's code at [start, end), whose table addresses are pc - bias;
 * t NULL: no CFI, frame-pointer steps.
 */
int unwinder__add_region(struct unwinder *u, uint32_t pid, uint64_t start, uint64_t end,
			 uint64_t bias, const struct unwinder_table *t);

/* The program to attach to the sampling events, and the walks' output (a perf event array). */
int unwinder__sample_fd(const struct unwinder *u);
int unwinder__events_fd(const struct unwinder *u);

#endif
