/* SPDX-License-Identifier: MIT */
/*
 * Inlined calls at code addresses, from a file's .debug_info (DWARF 4 and
 * 5): for each address, the DW_TAG_inlined_subroutine scopes around it in
 * its DW_TAG_subprogram, each named (through DW_AT_abstract_origin and
 * DW_AT_specification) with the file and line of its call. Read by cprof
 * itself beside its line reader (lib/dwarf_line.h), with which it shares
 * the dwarf_ctx, the bounded reads and the inflation of sections.
 *
 * The sections come from files of any user: every read is bounded, every
 * loop advances or is capped (abbreviations per table, attributes per
 * abbreviation, DIE depth, DIEs per batch, reference hops), and a unit
 * that cannot be read is counted and skipped, never followed.
 */
#ifndef CPROF_DWARF_INLINE_H
#define CPROF_DWARF_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/dwarf_line.h"

struct load_budget;

/* Caps: abbreviations in one table, attributes in one, DIE nesting, DIEs read per batch. */
#define DWARF_MAX_ABBREVS      (1u << 16)
#define DWARF_MAX_ABBREV_ATTRS 64u
#define DWARF_MAX_DEPTH	       256u
#define DWARF_MAX_DIES	       (1ull << 27)
/* Scopes of one address kept (deeper inlining is cut, counted), references followed for a name. */
#define DWARF_MAX_INLINE_DEPTH 64u
#define DWARF_MAX_REF_HOPS     8u

/* What the reader met, for the summary. */
struct dwarf_inline_counts {
	uint64_t units;	      /* compilation units read */
	uint64_t bad_units;   /* truncated or malformed: skipped from there */
	uint64_t unsupported; /* a version, unit type or form this reader does not know */
	uint64_t capped;      /* over one of the caps above (or a reference loop) */
};

/* One inlined call: the function inlined and where its caller calls it. */
struct dwarf_inline_frame {
	const char *name;      /* its linkage name, else its name; NULL: none found */
	const char *call_file; /* NULL: unknown */
	uint32_t call_line;
};

/*
 * The inlined calls at an address, innermost first: frames[0] is the
 * function whose code is at the address, frames[i]'s call is in
 * frames[i + 1], and the last's in the subprogram (named subprogram).
 */
struct dwarf_inline_answer {
	const struct dwarf_inline_frame *frames;
	uint32_t n;
	const char *subprogram; /* NULL: no DW_TAG_subprogram covers the address */
};

/*
 * The inlined calls at each of addrs (sorted ascending, n of them) into
 * out, valid until the next batch on c. budget (NULL: none) ends a pass
 * the run has no time for (-ETIME). 0 (units skipped are counted in
 * counts, which is added to), -ENOENT without .debug_info, -EBADMSG when
 * a section does not inflate, -ENOMEM.
 */
int dwarf_ctx__inlines(struct dwarf_ctx *c, const uint64_t *addrs, size_t n,
		       struct dwarf_inline_answer *out, struct dwarf_inline_counts *counts,
		       struct load_budget *budget);

/*
 * The same over sections in memory, uncompressed (the fuzz target and
 * tests); *mem (freed by the caller, also on error) holds the answers.
 */
int dwarf_inline__lookup(const struct dwarf_section_bytes secs[DWARF_SECTIONS],
			 const uint64_t *addrs, size_t n, struct dwarf_inline_answer *out,
			 void **mem, struct dwarf_inline_counts *counts,
			 struct load_budget *budget);

#endif
