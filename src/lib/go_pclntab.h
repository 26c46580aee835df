/* SPDX-License-Identifier: MIT */
/*
 * Function names of Go programs from .gopclntab, Go's own function table.
 * Go binaries are usually shipped stripped (-ldflags='-s -w': no .symtab,
 * no DWARF), but the runtime needs this table for its stack traces and
 * panics, so it is always there: every function's first address and name.
 *
 * Four layouts, told apart by the header's magic (the header also gives the
 * byte order, the pointer size and the instruction size, minLC):
 *   0xfffffffb  Go 1.2-1.15   names and functions at offsets from the table's start
 *   0xfffffffa  Go 1.16-1.17  the header points to the name and function sub-tables
 *   0xfffffff0  Go 1.18-1.19  entries become 32-bit offsets from textStart
 *   0xfffffff1  Go 1.20+      as 1.18 for what is read here
 * The bytes come from the programs being profiled: every offset and count
 * is checked against the table before it is read, entries must be sorted
 * and agree with the function records they point to, and a table that
 * fails any check is refused whole (-EINVAL for a header that is not one,
 * -EBADMSG for a corrupt body), never read out of bounds.
 *
 * Each function's SP deltas (its pcsp table, what Go's own unwinder and
 * the .debug_frame Go's linker writes come from) are read on demand from
 * the same bytes, for unwinding code without CFI (src/unwind/go_pcsp.c):
 * the reader is here, below both stages, as the symbolizer and the
 * unwinder read the one table.
 *
 * The inline tree (FUNCDATA_InlTree) is not read: its records live outside
 * the table (in go:func.*, in .rodata up to Go 1.25), at a base address
 * only the runtime's moduledata knows.
 */
#ifndef CPROF_GO_PCLNTAB_H
#define CPROF_GO_PCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct go_pclntab;

struct go_pclntab_info {
	int version;	     /* 12, 116, 118 or 120: the first Go release of the layout */
	uint8_t ptr_size;    /* 4 or 8 */
	uint8_t min_lc;	     /* 1, 2 or 4: the instruction size quantum */
	bool big_endian;     /* the table's byte order */
	uint64_t text_start; /* 1.18+: what entry offsets were added to; else 0 */
	size_t entries;	     /* the table's entries, unnamed ones included */
	const char *where;   /* go_pclntab__from_elf's: the section's name, or a segment search */
	uint64_t offset;     /* go_pclntab__from_elf's: where in the image the table starts */
	uint64_t size;	     /* the table's bytes */
};

/* A function's funcFlag bits (Go 1.17+), as the runtime names them. */
#define GO_FUNC_TOPFRAME 1 /* the outermost frame of its stack (goexit, mstart, rt0_go) */
#define GO_FUNC_SPWRITE	 2 /* writes SP itself (a stack switch): its deltas say nothing past it */

/* One run of a function's pcsp table: SP is sp bytes below its value at the entry in [begin, end).
 */
struct go_pcsp_run {
	uint64_t begin;
	uint64_t end;
	int32_t sp;
};

/*
 * Parses the table in data[0..size). Entry addresses of Go 1.2-1.17 are
 * absolute; those of 1.18+ are offsets from the header's textStart, or from
 * text_start when the header holds 0 there (Go 1.26 always writes 0; a
 * position-independent file may hold 0 until relocated). A nonzero header
 * value wins, as it is runtime.text even where .text begins with C code
 * (external linking). -ENODATA for a 1.18+ table with neither.
 *
 * The object keeps no pointer into data: names are copied.
 */
int go_pclntab__parse(const void *data, size_t size, uint64_t text_start, struct go_pclntab **out);
/*
 * The table of an ELF image laid out as its file (a mapped file): the
 * section .gopclntab (.data.rel.ro.gopclntab in a position-independent
 * program before Go 1.26), else, where the section headers are gone or
 * name no such section in a Go program (one with a Go build ID note), the
 * first magic with a plausible header in a non-executable PT_LOAD segment
 * that parses. The .text section's address is the text start 1.18+ tables
 * may need. Only the machine's own byte order. -ENOENT when there is none.
 */
int go_pclntab__from_elf(const void *image, size_t size, struct go_pclntab **out);
void go_pclntab__free(struct go_pclntab *t);

void go_pclntab__info(const struct go_pclntab *t, struct go_pclntab_info *info);
/* The named functions, sorted by start. */
size_t go_pclntab__count(const struct go_pclntab *t);
/*
 * Function i: [*start, *end), where end is the next entry's start (the
 * table's last entry, a sentinel, ends the last function), and its name as
 * Go prints it ("main.(*T).m", "runtime.goexit.abi0"). -ERANGE past the end.
 */
int go_pclntab__func(const struct go_pclntab *t, size_t i, uint64_t *start, uint64_t *end,
		     const char **name);
/* The name of the function holding pc and (optional) its start, or NULL. */
const char *go_pclntab__lookup(const struct go_pclntab *t, uint64_t pc, uint64_t *start);
/*
 * The one block every name points into, valid as long as t: a caller that
 * keeps the names beyond t copies it whole and rebases them.
 */
const char *go_pclntab__names(const struct go_pclntab *t, size_t *size);

/*
 * Function i's pcsp table, run by run in address order within the
 * function, into fn (whose nonzero return ends the walk and is returned).
 * data and size are the bytes the table was parsed from (for
 * go_pclntab__from_elf, info.size bytes at info.offset in the image): the
 * object keeps none of them. *budget is what the caller lets the tables
 * of a file read, in bytes (functions may share bytes, so the table's size
 * does not bound it): -EFBIG once spent. A function without a table gives
 * no run; -EBADMSG for one that leaves the bytes, -EINVAL for other bytes.
 */
int go_pclntab__pcsp(const struct go_pclntab *t, const void *data, size_t size, size_t i,
		     uint64_t *budget, int (*fn)(const struct go_pcsp_run *run, void *arg),
		     void *arg);
/* Function i's GO_FUNC_* flags, 0 where the layout has none (before Go 1.17) or on error. */
unsigned int go_pclntab__flags(const struct go_pclntab *t, const void *data, size_t size, size_t i);

#endif
