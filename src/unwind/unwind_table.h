/* SPDX-License-Identifier: MIT */
/*
 * The compact unwind table of one executable file (format in
 * bpf/unwind_abi.h), built once from its CFI and shared by every process
 * that maps the file: sorted rows of (address, rule id), where a row holds
 * up to the next one, with explicit no-CFI rows over the gaps between
 * functions, and a page index for a bounded search.
 *
 * Built from .eh_frame and, for functions it lacks, .debug_frame (of the
 * file or its separate debug file), then Go's own table (go_pcsp.h) for the
 * Go functions of a file without .debug_frame. Addresses are the file's own (ELF
 * virtual addresses, as linked).
 */
#ifndef CPROF_UNWIND_TABLE_H
#define CPROF_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_entries.h"
#include "unwind/cfi_program.h"
#include "unwind/unwind_rules.h"

struct load_budget;

struct unwind_table {
	uint64_t base; /* address of page 0: 64 KiB aligned */
	uint32_t npages;
	uint32_t *pages; /* [npages + 1]: the first row at or after each page's start */
	uint32_t nrows;
	uint32_t *rows; /* cprof_unwind_row(address, rule id) */
};

/* What a build found, for the summary and for -v. */
struct unwind_table_stats {
	uint64_t fdes;
	uint64_t go_funcs;     /* Go functions whose rules came from Go's table (go_pcsp.h) */
	uint64_t bad_entries;  /* CIEs or FDEs that could not be read */
	uint64_t cfi_rows;     /* rows of the CFI programs */
	uint64_t overlaps;     /* FDEs that overlapped an earlier one (the earlier wins) */
	uint64_t padding_gaps; /* gaps between functions that hold only padding: no row */
	uint64_t stops[CPROF_STOP_MAX]; /* CFI rows the unwinder cannot run, by reason */
	/* Rows whose CFA is in a general register: followed only where it is known. */
	uint64_t cfa_in_reg;
};

struct go_pcsp;

/*
 * Where the CFI comes from: up to two sections, .eh_frame first, and Go's
 * function table for the Go code of a file that has no .debug_frame.
 */
struct unwind_sources {
	enum cfi_arch arch;
	const struct cfi_section *sections[2];
	size_t nsections;
	/* Optional: Go's functions; where an FDE covers one too, the FDE wins. */
	struct go_pcsp *go;
	/*
	 * Optional: whether [begin, end) holds only padding (no code could
	 * run there), so that a gap between two functions needs no row.
	 */
	bool (*is_padding)(const void *arg, uint64_t begin, uint64_t end);
	const void *padding_arg;
	/* Optional: the run's deadline, past which the build gives up (-ETIME). */
	struct load_budget *budget;
};

/*
 * Builds the table; rule ids come from (and are added to) rules. -ENOENT
 * when no section holds a single FDE and there is no Go function, -ENOMEM. Corrupt entries and
 * rules it cannot run are counted in stats, not errors.
 */
int unwind_table__build(const struct unwind_sources *src, struct unwind_rules *rules,
			struct unwind_table **out, struct unwind_table_stats *stats);
void unwind_table__free(struct unwind_table *t);

/* The rule id for vaddr: CPROF_RULE_NO_CFI outside the table. */
uint32_t unwind_table__lookup(const struct unwind_table *t, uint64_t vaddr);
/* Bytes the table takes (rows and pages). */
size_t unwind_table__bytes(const struct unwind_table *t);

#endif
