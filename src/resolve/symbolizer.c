// SPDX-License-Identifier: MIT
/*
 * Address -> (mapping, function name). See symbolizer.h for the model.
 *
 * This file holds the symbolizer's life (new, free, the borrowed store and
 * budget), its generations and the end of a profile. The work is done in
 * pieces that share struct symbolizer (symbolizer_internal.h), one job each:
 *
 * - process_tracking.c: processes and their address spaces, from the
 *   kernel's records and /proc (which may later move to a process model
 *   of its own);
 * - elf_cache.c: mapped ELF files by identity, the open ones and their
 *   closing; debug_attach.c: their separate debug files, local or from
 *   debuginfod; symbol_loads.c: their symbols loaded off the loop;
 * - vdso.c: the vDSO image; jit_frames.c: perf maps and late JIT names;
 * - user_frames.c and kernel_frames.c: addresses to frames, named now or
 *   waiting for the profile's end; frame_lines.c: their source lines;
 * - frame_table.c: the answers of one generation, by id.
 *
 * Answers are kept in a frame table per generation (frame_table.h), which
 * symbolizer__finish ends; the caches that hold ids (per process, per
 * kernel address) go with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/u64map.h"
#include "resolve/debug_file.h"
#include "resolve/elf_symtab.h"
#include "resolve/address_spaces.h"
#include "resolve/ksym_names.h"
#include "resolve/ksyms.h"
#include "resolve/symbolizer.h"
#include "resolve/symtab_loader.h"
#include "resolve/jit_late.h"
#include "resolve/source_lines.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

/*
 * An ELF file no known process has mapped for this long is closed. Otherwise a
 * long run on a busy host keeps every program it ever met open, with its symbol
 * tables in memory, and keeps deleted ones taking up disk space. A minute
 * spares a program that a script starts every few seconds a reload each time.
 */
#define ELF_IDLE_NS (60 * 1000000000ull)

int symbolizer__new(struct symbolizer **out)
{
	struct symbolizer *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->elf_idle_ns = ELF_IDLE_NS;
	s->max_open = max_open_files();
	s->t = frame_table__new();
	s->elf_index = u64map__new();
	s->debug_dir = strdup(DEBUG_FILE_DEFAULT_DIR);
	s->jit_late = jit_late__new();
	if (!s->t || address_spaces__new(space_state__free, &s->spaces) || !s->elf_index ||
	    !s->debug_dir || !s->jit_late || source_lines__new(&s->lines)) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void symbolizer__free(struct symbolizer *s)
{
	struct elf_entry *e, *next;

	if (!s)
		return;
	/* First, the loads end: those taken back are freed below, those left behind by the loader.
	 */
	if (s->loader) {
		symtab_loader__stop(s->loader, clock__mono_ns() + SYMTAB_LOADER_STOP_NS);
		while ((e = symtab_loader__take(s->loader)))
			e->loading = false;
	}
	symtab_loader__free(s->loader);
	address_spaces__free(s->spaces);
	u64map__free(s->scope);
	for (e = s->elf_list; e; e = next) {
		next = e->next;
		if (!e->loading)
			elf_symtab__free(e->elf);
		free(e);
	}
	u64map__free(s->elf_index);
	free(s->fresh.v);
	free(s->notes.v);
	free(s->debug_dir);
	elf_symtab__free(s->vdso);
	free(s->vdso_image);
	ksyms__free(s->ksyms);
	ksym_names__free(s->knames);
	free(s->kallsyms);
	free(s->kwait);
	free(s->uwait);
	jit_late__free(s->jit_late);
	source_lines__free(s->lines);
	frame_table__free(s->t);
	free(s);
}

void symbolizer__keep_symbols_in(struct symbolizer *s, struct table_store *store)
{
	s->store = store;
}

void symbolizer__set_budget(struct symbolizer *s, struct load_budget *budget)
{
	s->budget = budget;
}

int symbolizer__finish(struct symbolizer *s, bool last)
{
	s->ended = true;
	/*
	 * Without memory for a name, a frame keeps its stand-in: said, not
	 * returned. The last profile settles the loads under way, waited for
	 * or not, so that they are counted before the summary.
	 */
	if ((s->nuwait || (last && s->loader)) && name_user_frames(s, last))
		pr_warn("cannot name some user frames: out of memory");
	if (jit_late__any(s->jit_late) && name_jit_frames(s))
		pr_warn("cannot name some JIT frames: out of memory");
	if (s->lines)
		find_lines(s);
	return name_kernel_frames(s, last);
}

/* A request for frames after symbolizer__finish begins the next generation (see symbolizer.h). */
int begin_request(struct symbolizer *s)
{
	struct frame_table *t;

	if (!s->ended)
		return 0;
	t = frame_table__new();
	if (!t)
		return -ENOMEM;
	frame_table__free(s->t);
	s->t = t;
	s->generation++;
	s->ended = false;
	return 0;
}

uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, enum frame_kind kind,
				 int kernel)
{
	return begin_request(s) ? 0 : frame_table__add_frame(s->t, 0, 0, what, kernel != 0, kind);
}

const struct symbolizer_frame *symbolizer__frame(const struct symbolizer *s, uint32_t id)
{
	return frame_table__frame(s->t, id);
}

const struct symbolizer_module *symbolizer__module(const struct symbolizer *s, uint32_t id)
{
	return frame_table__module(s->t, id);
}

uint32_t symbolizer__generation(const struct symbolizer *s)
{
	return s->generation;
}

const uint64_t *symbolizer__stats(const struct symbolizer *s)
{
	return s->stats;
}
