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

static void set_line(void *ctx, uint32_t id, const char *file, uint32_t line,
		     enum symbolizer_line status)
{
	struct symbolizer *s = ctx;
	struct symbolizer_frame *f = frame_table__frame(s->t, id);

	/* A frame of several processes is wanted once by each: the first answer stays. */
	if (!f || f->line_status)
		return;
	f->file = file ? frame_table__intern(s->t, file) : NULL;
	f->line = f->file ? line : 0;
	f->line_status = f->file || !file ? status : SYM_LINE_NOT_ASKED;
}

/* The source lines of the profile's user frames (see symbolizer__finish). */
void find_lines(struct symbolizer *s)
{
	struct dwarf_line_counts c = {0};
	size_t n = source_lines__count(s->lines);
	uint64_t t0 = clock__mono_ns();
	struct elf_entry *e;

	if (source_lines__find(s->lines, s->budget, &c, set_line, s))
		pr_warn("cannot look up some source lines: out of memory");
	if (n)
		pr_debug("source lines of %zu frames: %" PRIu64 " line table units read in %.1f ms",
			 n, c.units, (clock__mono_ns() - t0) / 1e6);
	for (e = s->elf_list; e; e = e->next)
		e->lines_wanted = false;
	s->stats[SYM_STAT_LINE_UNITS_BAD] += c.bad_units;
	s->stats[SYM_STAT_LINE_UNITS_UNSUPPORTED] += c.unsupported;
	s->stats[SYM_STAT_LINE_UNITS_CAPPED] += c.capped_units;
}

void symbolizer__set_lines(struct symbolizer *s, bool on)
{
	if (!on) {
		source_lines__free(s->lines);
		s->lines = NULL;
	}
}
