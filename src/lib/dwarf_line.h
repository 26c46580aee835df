/* SPDX-License-Identifier: MIT */
/*
 * Source file and line of code addresses, from a file's DWARF line table
 * (.debug_line, versions 2 to 5), read by cprof itself: libdw would more
 * than use up what is left of the binary's size budget (see the commit
 * that added this file). The sections come from files of any user, so
 * nothing in them is trusted: each is capped before it is inflated, every
 * read is bounded, every loop advances, and a unit that cannot be read is
 * counted and skipped, never followed.
 *
 * A dwarf_ctx holds one file's debug sections as the file stores them
 * (zlib-compressed or not), copied while the file was open; they are
 * inflated only when addresses are asked for, once per batch. A batch
 * runs the line programs once, so it costs one pass over the table
 * whatever the number of addresses, and memory for those addresses only,
 * not for the table's rows. The context is the place for what later
 * readers of the same file need (.debug_info's inlined calls).
 */
#ifndef CPROF_DWARF_LINE_H
#define CPROF_DWARF_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct load_budget;

/* Uncompressed size of the debug sections of one file this reader accepts. */
#define DWARF_MAX_SECTION_BYTES (256ull << 20)
/* Directories or files one line table header may name. */
#define DWARF_MAX_UNIT_FILES (1u << 18)

enum dwarf_section_id {
	DWARF_LINE,
	DWARF_LINE_STR,
	DWARF_STR,
	/* Read for inlined calls only (lib/dwarf_inline.h). */
	DWARF_INFO,
	DWARF_ABBREV,
	DWARF_STR_OFFSETS,
	DWARF_ADDR,
	DWARF_RANGES,
	DWARF_RNGLISTS,
	DWARF_SECTIONS,
};

/* A section as the ELF file holds it; compressed: it begins with an ELF Chdr. */
struct dwarf_section_bytes {
	const void *data;
	size_t size;
	bool compressed;
};

/* What the reader met, for the summary: units skipped, and why. */
struct dwarf_line_counts {
	uint64_t units;		/* line table units read */
	uint64_t bad_units;	/* truncated or malformed: skipped from there */
	uint64_t unsupported;	/* a version or form this reader does not know */
	uint64_t capped_units;	/* naming more than DWARF_MAX_UNIT_FILES */
	uint64_t backward_rows; /* rows whose address went back in a sequence: ignored */
};

struct dwarf_line_answer {
	const char *file; /* NULL: no row covers the address; else valid until the next batch */
	uint32_t line;
};

struct dwarf_ctx;

/*
 * Copies the sections (is64: an ELFCLASS64 file, for its compression
 * headers); a missing one has size 0. -ENOENT without .debug_line,
 * -EFBIG when they are over DWARF_MAX_SECTION_BYTES (by their headers, before
 * anything is inflated), -EOPNOTSUPP for a compression other than zlib.
 */
int dwarf_ctx__new(const struct dwarf_section_bytes secs[DWARF_SECTIONS], bool is64,
		   struct dwarf_ctx **out);
void dwarf_ctx__free(struct dwarf_ctx *c);
/* The bytes c holds: its sections as stored. */
uint64_t dwarf_ctx__bytes(const struct dwarf_ctx *c);
/* The bytes a lookup reads: its sections inflated. */
uint64_t dwarf_ctx__size(const struct dwarf_ctx *c);

/*
 * The file and line of each of addrs (sorted ascending, n of them) into
 * out: the last row at or below the address in a sequence that covers it.
 * budget (NULL: none) ends a pass the run has no time for (-ETIME). 0
 * (units skipped are counted in counts, which is added to), -EBADMSG when
 * a section does not inflate, -ENOMEM.
 */
int dwarf_ctx__lines(struct dwarf_ctx *c, const uint64_t *addrs, size_t n,
		     struct dwarf_line_answer *out, struct dwarf_line_counts *counts,
		     struct load_budget *budget);

/*
 * The same over sections already in memory, uncompressed (the fuzz target
 * and tests): no copy, no inflation.
 */
int dwarf_line__lookup(const struct dwarf_section_bytes secs[DWARF_SECTIONS], const uint64_t *addrs,
		       size_t n, struct dwarf_line_answer *out, char **names,
		       struct dwarf_line_counts *counts, struct load_budget *budget);

/*
 * The name of file index file of the line table unit at off in
 * secs[DWARF_LINE] (in memory, uncompressed), as the lines name it, into
 * *name (malloc'd): DW_AT_call_file's. 0, -ENOENT (no such file), -EBADMSG,
 * -EOPNOTSUPP, -E2BIG or -ENOMEM.
 */
int dwarf_line__file_name(const struct dwarf_section_bytes secs[DWARF_SECTIONS], uint64_t off,
			  uint64_t file, char **name);

/*
 * For the other readers of c: the sections in mask (bits 1 << id) in
 * memory, inflated into bufs[id] (which the caller frees) when compressed;
 * the others empty. 0, -ETIME, -EBADMSG or -ENOMEM.
 */
int dwarf_ctx__inflate(const struct dwarf_ctx *c, unsigned mask,
		       struct dwarf_section_bytes secs[DWARF_SECTIONS], void *bufs[DWARF_SECTIONS],
		       struct load_budget *budget);
/* Where another reader keeps its last batch's answers (freed with c). */
void **dwarf_ctx__answers(struct dwarf_ctx *c);

#endif
