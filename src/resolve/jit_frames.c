// SPDX-License-Identifier: MIT
/*
 * JIT code in memory no ELF file backs: named from the process's perf map,
 * read when the process is first seen and again on a miss, at most once
 * per interval, within a drain's time and the run's memory for maps; and
 * at a profile's end from the maps that came late (jit_late.h). Runtimes
 * keep adding to their maps, hence the reads on a miss.
 */
#include <errno.h>
#include <string.h>

#include "lib/clock.h"
#include "resolve/mapping_table.h"
#include "resolve/perf_map.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/jit_late.h"
#include "resolve/symbolizer_internal.h"

/* Replaces the space's perf map (NULL: none), keeping the symbolizer's total. */
void set_perf_map(struct space_state *st, struct perf_map *pm)
{
	if (st->perf_map_total)
		*st->perf_map_total += perf_map__bytes(pm) - perf_map__bytes(st->perf_map);
	perf_map__free(st->perf_map);
	st->perf_map = pm;
}

/*
 * (Re)reads the process's perf map; a process that is gone keeps the one
 * read last. Its name holds the PID the process has in its namespace,
 * which is read first if it is not known yet: a map looked for under the
 * host's PID is not found, and the frames of that interval stayed unnamed.
 */
/*
 * What reading perf maps may cost a drain: each read is capped (perf_map.c),
 * but many processes may each have a capped map, and -d must hold. Reads
 * past it wait for the next drain.
 */
#define PERF_MAP_DRAIN_BUDGET_NS (100 * 1000000ull)
/*
 * What all perf maps together may hold. A host's JIT processes rarely
 * hold more than a few MiB of map each; a hostile process holds at most
 * one capped map (some 25 MB), and many of them must not exhaust memory.
 */
#define PERF_MAPS_RUN_BYTES (128ull << 20)

void read_perf_map(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	struct perf_map_source *src = &st->perf_map_src;
	enum proc_file_refusal was = src->refused;
	bool was_capped = src->capped, was_stale = src->stale;
	struct perf_map *pm = NULL;
	uint64_t t0;
	int got;

	read_ns_pid(s, sp);
	if (!sp->pid)
		return;
	/* While it surely lives: its map may only come when it exits (name_jit_frames). */
	if (!st->owner_read) {
		st->owner_read = true;
		st->owner_ok = !perf_map__owner(sp->pid, st->ns_pid, &st->owner_id);
	}
	if (s->perf_map_ns >= PERF_MAP_DRAIN_BUDGET_NS) {
		s->stats[SYM_STAT_PERF_MAP_READS_POSTPONED]++;
		return;
	}
	/* A map already held may be replaced; a new one must fit. */
	if (!st->perf_map && s->perf_map_bytes >= PERF_MAPS_RUN_BYTES) {
		if (!st->perf_map_over)
			s->stats[SYM_STAT_PERF_MAPS_OVER_BUDGET]++;
		st->perf_map_over = true;
		return;
	}
	t0 = clock__mono_ns();
	got = perf_map__reread(sp->pid, st->ns_pid, src, &pm);
	s->perf_map_ns += clock__mono_ns() - t0;
	/* A refusal is counted once per process, not at every miss that meets it again. */
	if (src->refused && src->refused != was)
		s->stats[SYM_STAT_PERF_MAP_REFUSED_LINK + src->refused - PROC_FILE_LINK]++;
	if (src->stale && !was_stale)
		s->stats[SYM_STAT_PERF_MAPS_NOT_ITS]++;
	if (got <= 0)
		return;
	if (src->capped && !was_capped)
		s->stats[SYM_STAT_PERF_MAPS_CAPPED]++;
	s->stats[SYM_STAT_PERF_MAP_BAD_LINES] += perf_map__bad_lines(pm) - st->perf_map_bad;
	st->perf_map_bad = perf_map__bad_lines(pm);
	set_perf_map(st, pm);
	st->perf_map_gen++;
}

/*
 * Executable memory that is no ELF file's: anonymous (also when named with
 * PR_SET_VMA_ANON_NAME) or a file that is not ELF (a memfd). JIT code lives
 * there; [vsyscall] and the like do not.
 */
bool jit_memory(const struct proc_map *m, const struct elf_symtab *elf)
{
	if (!(m->perms & PROC_MAP_EXEC) || elf)
		return false;
	return m->kind == PROC_MAP_ANON || m->kind == PROC_MAP_FILE ||
	       (m->kind == PROC_MAP_SPECIAL && !strncmp(m->path, "[anon", 5));
}

/*
 * A JIT frame's name from the perf map. A miss reads the map again, at most
 * once per interval: the runtime may have compiled that code since.
 */
const char *jit_name(struct symbolizer *s, struct space *sp, uint64_t addr)
{
	struct space_state *st = sp->priv;
	const char *name = perf_map__lookup(st->perf_map, addr);

	if (name || st->perf_map_read || sp->end != UINT64_MAX)
		return name;
	st->perf_map_read = true;
	read_perf_map(s, sp);
	return perf_map__lookup(st->perf_map, addr);
}

static bool maps_jvm(struct space *sp)
{
	size_t i, n = mapping_table__count(sp->maps);

	for (i = 0; i < n; i++) {
		const struct proc_map *m = &mapping_table__get(sp->maps, i)->map;

		if (m->kind == PROC_MAP_FILE && !strcmp(path_base_name(m->path), "libjvm.so"))
			return true;
	}
	return false;
}

/* The index + 1 of sp's process among this profile's JIT owners; 0: unknown (or no memory). */
uint32_t jit_owner_of(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;

	if (!st->owner_ok)
		return 0;
	if (st->owner && st->owner_gen == s->generation)
		return st->owner;
	st->owner = jit_late__add_owner(s->jit_late, &st->owner_id, maps_jvm(sp));
	st->owner_gen = s->generation;
	return st->owner;
}

/* jit_late's answer for a waiting JIT frame: its name from a map that came late, or none. */
static int name_jit_frame(void *ctx, uint32_t frame, const char *name)
{
	struct symbolizer *s = ctx;
	struct symbolizer_frame *f = frame_table__frame(s->t, frame);
	const char *raw, *shown;

	if (!f)
		return 0;
	f->waiting = false;
	if (f->kind == FRAME_WAITING)
		f->kind = FRAME_UNNAMED;
	if (!name || !f->unknown)
		return 0;
	raw = frame_table__intern(s->t, name);
	shown = raw ? frame_table__display_name(s->t, raw) : NULL;
	if (!shown)
		return -ENOMEM; /* the stand-in stays: an honest name */
	f->name = shown;
	f->system_name = raw;
	f->unknown = false;
	f->kind = frame_table__named_kind(s->t, f->module);
	s->stats[SYM_STAT_UNKNOWN_USER]--;
	s->stats[SYM_STAT_EXIT_FRAMES_NAMED]++;
	return 0;
}

/* The JIT frames no perf map named while their process was read (jit_late.h). */
int name_jit_frames(struct symbolizer *s)
{
	struct jit_late_stats st = {0};
	int err, i;

	err = jit_late__name(s->jit_late, s->ask_jvms, &st, name_jit_frame, s);
	s->stats[SYM_STAT_EXIT_MAPS_READ] += st.maps_read;
	s->stats[SYM_STAT_EXIT_MAPS_OTHER_NS] += st.other_ns;
	s->stats[SYM_STAT_EXIT_MAPS_LATE] += st.late;
	s->stats[SYM_STAT_PERF_MAPS_NOT_ITS] += st.not_its;
	for (i = PROC_FILE_LINK; i < PROC_FILE_REFUSALS; i++)
		s->stats[SYM_STAT_PERF_MAP_REFUSED_LINK + i - PROC_FILE_LINK] += st.refused[i];
	s->stats[SYM_STAT_PERF_MAP_BAD_LINES] += st.bad_lines;
	s->stats[SYM_STAT_PERF_MAPS_CAPPED] += st.capped;
	s->stats[SYM_STAT_JVMS_ASKED] += st.jvms_asked;
	s->stats[SYM_STAT_JVMS_FAILED] += st.jvms_failed;
	s->stats[SYM_STAT_JVMS_UNASKED] += st.jvms_unasked;
	return err;
}

void symbolizer__ask_jvms(struct symbolizer *s, bool ask)
{
	s->ask_jvms = ask;
}
