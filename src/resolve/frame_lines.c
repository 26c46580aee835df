// SPDX-License-Identifier: MIT
/*
 * The source-lines hook: user frames named by a file's symbols are noted
 * with their address (want_line), and at a profile's end get their file and
 * line from the file's DWARF line table (source_lines.h).
 */
#include <inttypes.h>

#include "lib/clock.h"
#include "resolve/symbolizer.h"
#include "resolve/source_lines.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

/*
 * Frame, named by elf's symbols at vaddr, gets its source line when the
 * profile ends (symbolizer__finish): e (NULL for the vDSO, which lives as
 * long as s) stays open until then. Without memory it just has none.
 */
void want_line(struct symbolizer *s, struct elf_entry *e, struct elf_symtab *elf, uint64_t vaddr,
	       uint32_t frame)
{
	if (!s->lines || (e ? e->elf != elf : elf != s->vdso) || !elf)
		return;
	if (!source_lines__want(s->lines, elf, vaddr, frame) && e)
		e->lines_wanted = true;
}

/*
 * The functions inlined at f (inl: innermost first), each with the line
 * in its code: the first the line found at the address, the others their
 * callee's call; f's file and line become the outermost call's. Without
 * memory, f keeps its line and no inlined functions.
 */
static void set_inlines(struct symbolizer *s, struct symbolizer_frame *f,
			const struct dwarf_inline_answer *inl)
{
	const char *file = f->file, *raw;
	struct symbolizer_inline *v;
	uint32_t i, first, line = f->line;

	if (!inl || !inl->n || !f->file || frame_table__add_inlines(s->t, inl->n, &v, &first))
		return;
	for (i = 0; i < inl->n; i++) {
		raw = frame_table__intern(s->t, inl->frames[i].name ? inl->frames[i].name : "??");
		v[i] = (struct symbolizer_inline){raw ? frame_table__display_name(s->t, raw) : NULL,
						  raw, file, line};
		file = inl->frames[i].call_file
			       ? frame_table__intern(s->t, inl->frames[i].call_file)
			       : NULL;
		line = file ? inl->frames[i].call_line : 0;
		if (!v[i].name)
			return;
	}
	f->inline_first = first;
	f->ninlines = (uint16_t)inl->n;
	f->file = file;
	f->line = line;
}

const struct symbolizer_inline *symbolizer__inlines(const struct symbolizer *s,
						    const struct symbolizer_frame *f)
{
	return frame_table__inlines(s->t, f);
}

static void set_line(void *ctx, uint32_t id, const char *file, uint32_t line,
		     enum symbolizer_line status, const struct dwarf_inline_answer *inl)
{
	struct symbolizer *s = ctx;
	struct symbolizer_frame *f = frame_table__frame(s->t, id);

	/* A frame of several processes is wanted once by each: the first answer stays. */
	if (!f || f->line_status)
		return;
	f->file = file ? frame_table__intern(s->t, file) : NULL;
	f->line = f->file ? line : 0;
	f->line_status = f->file || !file ? status : SYM_LINE_NOT_ASKED;
	set_inlines(s, f, inl);
}

/* The source lines of the profile's user frames (see symbolizer__finish). */
void find_lines(struct symbolizer *s)
{
	struct source_lines_counts c = {0};
	size_t n = source_lines__count(s->lines);
	uint64_t t0 = clock__mono_ns();
	struct elf_entry *e;

	if (source_lines__find(s->lines, s->budget, &c, set_line, s))
		pr_warn("cannot look up some source lines: out of memory");
	if (n)
		pr_debug("source lines of %zu frames: %" PRIu64 " line table units read in %.1f ms",
			 n, c.lines.units, (clock__mono_ns() - t0) / 1e6);
	for (e = s->elf_list; e; e = e->next)
		e->lines_wanted = false;
	s->stats[SYM_STAT_LINE_UNITS_BAD] += c.lines.bad_units;
	s->stats[SYM_STAT_LINE_UNITS_UNSUPPORTED] += c.lines.unsupported;
	s->stats[SYM_STAT_LINE_UNITS_CAPPED] += c.lines.capped_units;
	s->stats[SYM_STAT_INLINE_UNITS_BAD] += c.inlines.bad_units;
	s->stats[SYM_STAT_INLINE_UNITS_UNSUPPORTED] += c.inlines.unsupported;
	s->stats[SYM_STAT_INLINE_UNITS_CAPPED] += c.inlines.capped;
	s->stats[SYM_STAT_INLINE_FILES_UNREAD] += c.inline_files_unread;
}

void symbolizer__set_inlines(struct symbolizer *s, bool on)
{
	if (s->lines)
		source_lines__set_inlines(s->lines, on);
}

void symbolizer__set_lines(struct symbolizer *s, bool on)
{
	if (!on) {
		source_lines__free(s->lines);
		s->lines = NULL;
	}
}
