/* SPDX-License-Identifier: MIT */
/*
 * The source lines a profile asks for: the symbolizer notes each user
 * frame a file's symbols named (its file and address) as it resolves it,
 * and when the profile ends, each file's line table is read once for all
 * of its frames (lib/dwarf_line.h), and its .debug_info for the functions
 * inlined there (lib/dwarf_inline.h), off the sampling path.
 */
#ifndef CPROF_SOURCE_LINES_H
#define CPROF_SOURCE_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/dwarf_inline.h"
#include "lib/dwarf_line.h"
#include "resolve/line_status.h"

struct elf_symtab;
struct load_budget;
struct source_lines;

int source_lines__new(struct source_lines **out);
void source_lines__free(struct source_lines *sl);

/* Frame (an id) is elf's code at vaddr; elf must live until source_lines__find. 0 or -ENOMEM. */
int source_lines__want(struct source_lines *sl, struct elf_symtab *elf, uint64_t vaddr,
		       uint32_t frame);

/* The frames wanted since the last source_lines__find. */
size_t source_lines__count(const struct source_lines *sl);

/* Whether the functions inlined at the frames are looked up too (default: yes). */
void source_lines__set_inlines(struct source_lines *sl, bool on);
bool source_lines__inlines(const struct source_lines *sl);

/*
 * One frame's answer: file (NULL unless found, valid during the call) and
 * line, or why none; inl: the functions inlined there (NULL: not looked up
 * or unreadable), valid during the call.
 */
typedef void (*source_lines_fn)(void *ctx, uint32_t frame, const char *file, uint32_t line,
				enum symbolizer_line status, const struct dwarf_inline_answer *inl);

/* What the tables skipped, added to by each source_lines__find. */
struct source_lines_counts {
	struct dwarf_line_counts lines;
	struct dwarf_inline_counts inlines;
	uint64_t inline_files_unread; /* with lines, but .debug_info not read (none or refused) */
};

/*
 * Answers every frame wanted since the last call, then forgets them. The
 * units each table skipped are added to counts; run's deadline (NULL:
 * none), or LOAD_GRACE_MS from now if that is later, ends the lookups the
 * run has no time for (their frames: SYM_LINE_CUT_OFF).
 * 0 or -ENOMEM (the frames not answered keep no line).
 */
int source_lines__find(struct source_lines *sl, struct load_budget *run,
		       struct source_lines_counts *counts, source_lines_fn answer, void *ctx);

#endif
