// SPDX-License-Identifier: MIT
/*
 * Address -> (mapping, function name). See symbolizer.h for the model.
 *
 * Files are opened through /proc/PID/map_files first: that is the exact file
 * that is mapped, even if it was deleted or replaced on disk, and it works
 * across mount namespaces. /proc/PID/root/PATH is the fallback, accepted only
 * when its device and inode match the mapping, so a different file that now
 * sits at the same path is never used; once the process has exited, PATH
 * itself, with the same check. Files are opened when their mapping is
 * recorded, while the process most likely lives. A file without .symtab gets its
 * symbols from its separate debug file (debug_file.h) when there is one.
 *
 * Code that is not in an ELF file: the vDSO is named from cprof's own copy
 * (the same image in every process of a kernel, checked byte for byte) and
 * the kernel's debug file of it when installed; its code that no symbol
 * names is shown at its function's start, from the image's .eh_frame. And
 * JIT code in anonymous memory from the process's perf map, read when the
 * process is first seen and again on a miss, at most once per interval, as
 * runtimes keep adding to it.
 *
 * Names are demangled for display (demangle.h); the raw name stays the
 * frame's system_name.
 *
 * With a symbol loader (symbolizer__load_off_loop), a file's symbols are
 * loaded on its thread: the entry is "loading" from the post until its
 * elf_symtab is taken back (pick_up_loads), and nothing here touches that
 * elf_symtab meanwhile (lookups, function starts, releasing or reopening
 * its file, a debug file from debuginfod), as elf_symtab.h asks; its frames
 * wait for their names as those awaiting a debug file do (uframe_wait).
 *
 * Answers are kept in a frame table per generation (struct frame_table),
 * which symbolizer__finish ends; the caches that hold ids (per process, per
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
#include "resolve/symbolizer_state.h"

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

uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel)
{
	return begin_request(s) ? 0 : frame_table__add_frame(s->t, 0, 0, what, kernel != 0, true);
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
