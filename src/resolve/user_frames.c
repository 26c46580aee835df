// SPDX-License-Identifier: MIT
/*
 * User addresses -> frames, in the address space the sample was taken in:
 * named by the mapped file's symbols, a JIT perf map, or honestly as
 * module+offset (at its function's start when the call frame information
 * knows it). Frames whose symbols are on their way (the loader, a debug
 * file from debuginfod) wait, and are named when the profile is finished.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64map.h"
#include "resolve/elf_symtab.h"
#include "resolve/mapping_table.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/jit_late.h"
#include "resolve/symbolizer_internal.h"

const char *path_base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

/*
 * The frames cache holds the frame id in its low 32 bits. An unnamed
 * frame in code outside any ELF file also holds perf_map_gen + 1 above them:
 * it is looked up again once the perf map may have changed.
 */
static bool cached_frame(struct space_state *st, uint64_t key, uint32_t *frame, bool *retry)
{
	uint64_t v;

	*retry = false;
	if (!u64map__get(st->frames, key, &v))
		return false;
	*frame = (uint32_t)v;
	if (!(v >> 32) || ((v >> 32) - 1 == st->perf_map_gen && st->perf_map_read))
		return true;
	*retry = true;
	return false;
}

/*
 * Code no symbol names is shown at the start of its function when the
 * call frame information knows the function, so that its samples add up
 * per function and not per instruction: *back is how far into the function
 * file_off is.
 */
static bool function_start(struct elf_symtab *elf, uint64_t file_off, uint64_t *back)
{
	uint64_t vaddr, start;

	*back = 0;
	if (!elf || elf_symtab__offset_to_vaddr(elf, file_off, &vaddr) ||
	    !elf_symtab__function_start(elf, vaddr, &start))
		return false;
	*back = vaddr - start;
	return true;
}

/* The code mapping holding addr; for a process read from /proc, read again once per interval. */
static struct mapping *find_code(struct symbolizer *s, struct space *sp, uint64_t addr)
{
	struct space_state *st = sp->priv;
	struct mapping *m = mapping_table__find(sp->maps, addr);

	/* Once per interval at most: a frame-pointer walk can also end in garbage. */
	if (!m && st->from_proc && !st->refreshed && sp->pid && sp->end == UINT64_MAX) {
		st->refreshed = true;
		reread_process(s, sp);
		m = mapping_table__find(sp->maps, addr);
	}
	return m && (m->map.perms & PROC_MAP_EXEC) ? m : NULL;
}

/* FILE+0xADDRESS: the ELF address addr2line and objdump take (docs/profile.md). */
static void file_address_name(char *buf, size_t len, const char *path, uint64_t vaddr)
{
	snprintf(buf, len, "%s+0x%" PRIx64, path_base_name(path), vaddr);
}

/*
 * The honest answer for code no symbol names: its module and offset, never
 * a neighbour's name. *fstart: whether that is its function's start, as
 * starts (NULL: none read) knows it.
 */
static uint32_t unnamed_frame(struct symbolizer *s, struct mapping *m, struct elf_symtab *starts,
			      uint32_t module, uint64_t addr, uint64_t lookup, bool waiting,
			      bool *fstart)
{
	uint64_t file_off = lookup - m->map.start + m->map.offset, back, vaddr;
	char buf[512];

	*fstart = function_start(starts, file_off, &back);
	/* The address addr2line and objdump take; an unread file has only its offset. */
	if (m->map.kind == PROC_MAP_FILE && m->elf &&
	    !elf_symtab__offset_to_vaddr(m->elf, file_off, &vaddr))
		file_address_name(buf, sizeof(buf), m->map.path, vaddr - back);
	else if (m->map.kind == PROC_MAP_FILE)
		snprintf(buf, sizeof(buf), "%s@0x%" PRIx64, path_base_name(m->map.path), file_off);
	else if (m->map.kind == PROC_MAP_SPECIAL)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->map.path,
			 lookup - m->map.start - back);
	else
		snprintf(buf, sizeof(buf), "[anon]+0x%" PRIx64, lookup);
	return frame_table__add(s->t, (struct symbolizer_frame){
					      .module = module,
					      .address = addr,
					      .name = buf,
					      .unknown = true,
					      .function_start = *fstart,
					      .waiting = waiting,
					      .kind = waiting ? FRAME_WAITING : FRAME_UNNAMED,
				      });
}

/*
 * Code that symbols on their way may name (from the loader when loads,
 * else a stripped file's debug file): a frame named when the profile is
 * finished. Awaiting the loader, e's file is not read here at all, not
 * even for its function starts.
 */
static uint32_t waiting_user_frame(struct symbolizer *s, struct mapping *m, struct elf_entry *e,
				   uint32_t module, uint64_t addr, uint64_t lookup, uint64_t vaddr,
				   bool loads)
{
	uint64_t file_off = lookup - m->map.start + m->map.offset;
	struct uframe_wait *w;
	bool fstart;
	uint32_t frame;

	if (s->nuwait == s->uwait_cap) {
		size_t cap = s->uwait_cap ? 2 * s->uwait_cap : 256;

		w = reallocarray(s->uwait, cap, sizeof(*w));
		if (!w)
			return 0;
		s->uwait = w;
		s->uwait_cap = cap;
	}
	frame = unnamed_frame(s, m, loads ? NULL : m->elf, module, addr, lookup, true, &fstart);
	if (frame) {
		s->uwait[s->nuwait++] =
			(struct uframe_wait){e, vaddr, file_off, frame, fstart, loads};
		e->waiters++;
	}
	return frame;
}

/*
 * Whether m maps the program itself: Linux loads an executable below its
 * libraries and loader (0x400000, or 0x55... for PIE, against 0x7f...), so
 * its code is the first file-backed code mapping of the space.
 */
static bool program_file(struct space *sp, const struct mapping *m)
{
	size_t i, n = mapping_table__count(sp->maps);
	struct mapping *first;

	for (i = 0; i < n; i++) {
		first = mapping_table__get(sp->maps, i);
		if (first->map.kind == PROC_MAP_FILE && (first->map.perms & PROC_MAP_EXEC))
			return first->map.inode == m->map.inode && first->map.path && m->map.path &&
			       !strcmp(first->map.path, m->map.path);
	}
	return false;
}

static uint32_t user_module(struct symbolizer *s, struct space *sp, struct mapping *m)
{
	struct symbolizer_module mod = {
		.start = m->map.start,
		.limit = m->map.end,
		.offset = m->map.offset,
		.main_exe = program_file(sp, m),
	};
	const char *bid = m->elf ? elf_symtab__build_id(m->elf) : NULL;

	if (m->module_id && m->module_gen == s->generation)
		return m->module_id;
	mod.path = frame_table__intern(s->t, m->map.path ? m->map.path : "");
	mod.build_id = frame_table__intern(s->t, bid ? bid : "");
	if (!mod.path || !mod.build_id)
		return 0;
	m->module_id = frame_table__add_module(s->t, &mod);
	m->module_gen = s->generation;
	return m->module_id;
}

static uint32_t resolve_user(struct symbolizer *s, struct space *sp, uint64_t addr, bool leaf)
{
	struct space_state *st = sp->priv;
	uint64_t key = addr << 1 | leaf, lookup = leaf ? addr : addr - 1, vaddr, jit = 0;
	const char *name = NULL;
	uint32_t frame, module, owner;
	struct elf_entry *wait = NULL, *used;
	struct mapping *m;
	bool retry, fstart, loads = false;

	if (cached_frame(st, key, &frame, &retry))
		return frame;
	m = find_code(s, sp, lookup);
	if (!m) {
		frame = frame_table__add_frame(s->t, 0, addr, "[unknown]", false, FRAME_UNNAMED);
		if (!retry) {
			s->stats[SYM_STAT_UNKNOWN_USER]++;
			s->stats[SYM_STAT_USER_UNMAPPED]++;
		}
		goto out;
	}
	open_mapping(s, sp->pid, m);
	module = user_module(s, sp, m);
	if (!module)
		return 0;
	used = use_entry(s, sp->pid, m);
	if (m->elf && elf_symtab__offset_to_vaddr(m->elf, lookup - m->map.start + m->map.offset,
						  &vaddr) == 0) {
		loads = symbols_coming(s, used);
		name = loads ? NULL : elf_symtab__lookup(m->elf, vaddr, NULL);
		wait = loads ? used : name ? NULL : awaited_entry(s, m->elf);
	} else if (jit_memory(&m->map, m->elf)) {
		name = jit_name(s, sp, lookup);
	}
	if (name) {
		frame = frame_table__add_frame(s->t, module, addr, name, false,
					       frame_table__named_kind(s->t, module));
		if (frame)
			want_line(s, used, m->elf, vaddr, frame);
		if (retry)
			s->stats[SYM_STAT_UNKNOWN_USER]--;
	} else {
		fstart = false;
		owner = jit_memory(&m->map, m->elf) ? jit_owner_of(s, sp) : 0;
		if (wait)
			frame = waiting_user_frame(s, m, wait, module, addr, lookup, vaddr, loads);
		else
			frame = unnamed_frame(s, m, m->elf, module, addr, lookup, owner != 0,
					      &fstart);
		if (fstart && !retry)
			s->stats[SYM_STAT_FUNCTION_STARTS]++;
		if (owner)
			jit_late__note(s->jit_late, owner, frame, lookup);
		if (jit_memory(&m->map, m->elf))
			jit = (uint64_t)st->perf_map_gen + 1;
		if (!retry)
			s->stats[SYM_STAT_UNKNOWN_USER]++;
	}
	/* Its symbols loaded, the file closed itself: it leaves the open ones. */
	if (used)
		note_use(s, used);
out:
	if (!retry)
		s->stats[SYM_STAT_USER_FRAMES]++;
	if (frame)
		u64map__set(st->frames, key, frame | jit << 32);
	return frame;
}

/* Empties the frame cache of a space if it holds ids of an earlier generation. */
static int current_ids(struct symbolizer *s, struct space_state *st)
{
	struct u64map *frames;

	if (st->generation == s->generation)
		return 0;
	frames = u64map__new();
	if (!frames)
		return -ENOMEM;
	u64map__free(st->frames);
	st->frames = frames;
	st->generation = s->generation;
	return 0;
}

int symbolizer__user_frames(struct symbolizer *s, const struct symbolizer_task *task,
			    const uint64_t *ips, uint32_t n, uint32_t *ids_out)
{
	struct space *sp;
	uint32_t i;
	int err;

	err = begin_request(s);
	if (err)
		return err;
	if (s->fetcher)
		pick_up_fetches(s);
	if (s->loader)
		pick_up_loads(s, false, false);
	sp = space_for(s, task);
	if (!sp)
		return -ENOMEM;
	err = current_ids(s, sp->priv);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		ids_out[i] = resolve_user(s, sp, ips[i], i == 0);
		if (!ids_out[i])
			return -ENOMEM;
	}
	return 0;
}

/* The name of a waiting frame's code, if its file's symbols have come. */
static const char *waited_name(struct symbolizer *s, const struct uframe_wait *w)
{
	struct elf_symtab *elf = w->e->elf;

	if (!elf || w->e->loading || (s->loader && !elf_symtab__loaded(elf)))
		return NULL;
	return elf_symtab__lookup(elf, w->vaddr, NULL);
}

/*
 * A frame with no name whose stand-in was made before its file's symbols
 * were there, at its own offset: moved to its function's start if the
 * file's call frame information knows it, as unnamed_frame does.
 */
static int stand_in_at_start(struct symbolizer *s, const struct uframe_wait *w,
			     struct symbolizer_frame *f)
{
	const struct symbolizer_module *mod = frame_table__module(s->t, f->module);
	const char *name;
	uint64_t back;
	char buf[512];

	if (!mod || w->e->loading || !elf_symtab__loaded(w->e->elf) ||
	    !function_start(w->e->elf, w->file_off, &back))
		return 0;
	s->stats[SYM_STAT_FUNCTION_STARTS]++;
	f->function_start = true;
	if (!back)
		return 0;
	file_address_name(buf, sizeof(buf), mod->path, w->vaddr - back);
	name = frame_table__intern(s->t, buf);
	if (!name)
		return -ENOMEM;
	f->name = name;
	f->system_name = name;
	return 0;
}

/*
 * The user frames waiting for symbols, from the loader or a debug file
 * (finish_loads, finish_fetches). A frame no symbol names keeps its
 * stand-in, module+offset, and stops waiting.
 */
int name_user_frames(struct symbolizer *s, bool last)
{
	struct symbolizer_frame *f;
	const struct uframe_wait *w;
	const char *name, *raw, *shown;
	size_t i;
	int err = 0;

	if (s->fetcher)
		finish_fetches(s, last);
	if (s->loader)
		finish_loads(s, last);
	/* A debug file that came while its file was loading is read now. */
	if (s->loader && s->fetcher && s->fetches_deferred) {
		pick_up_fetches(s);
		finish_loads(s, last);
	}
	if (s->loader && last)
		count_unloaded(s);
	for (i = 0; i < s->nuwait; i++) {
		w = &s->uwait[i];
		f = frame_table__frame(s->t, w->frame);
		w->e->waiters--;
		name = waited_name(s, w);
		f->waiting = false;
		f->kind = FRAME_UNNAMED;
		if (!name) {
			if (w->function_start)
				s->stats[SYM_STAT_FUNCTION_STARTS]++;
			else if (w->exact && stand_in_at_start(s, w, f))
				err = -ENOMEM;
			continue;
		}
		raw = frame_table__intern(s->t, name);
		shown = raw ? frame_table__display_name(s->t, raw) : NULL;
		if (!shown) {
			err = -ENOMEM; /* the stand-in stays: an honest name */
			continue;
		}
		f->name = shown;
		f->system_name = raw;
		f->unknown = false;
		f->kind = frame_table__named_kind(s->t, f->module);
		s->stats[SYM_STAT_UNKNOWN_USER]--;
		want_line(s, w->e, w->e->elf, w->vaddr, w->frame);
	}
	s->nuwait = 0;
	return err;
}
