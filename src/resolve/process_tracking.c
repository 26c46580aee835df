// SPDX-License-Identifier: MIT
/*
 * Processes and their address spaces as the symbolizer follows them: the
 * kernel's fork, exec, mmap and exit records in time order, and /proc for
 * processes that began before cprof (read at first sight, and once more a
 * little later), each space's code mappings and its files opened when
 * mapped. The rest of the symbolizer only asks it for the space a sample
 * was taken in (space_for, named_space).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "lib/procfs.h"
#include "lib/u64map.h"
#include "resolve/address_spaces.h"
#include "resolve/mapping_table.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"
#include "lib/stat_cached.h"

/*
 * Long enough for the records of a process's fork to be read (2 ms after
 * their time, see session.c) after its first sample.
 */
#define NOTE_DELAY_NS (5 * 1000000ull)

/* Long enough for a dynamic loader to map the libraries, or a fork to exec. */
#define RECHECK_AFTER_NS (50 * 1000000ull)

/* Appends f; false when out of memory. */
static bool fresh_list__push(struct fresh_list *l, struct fresh f)
{
	size_t cap = l->cap ? 2 * l->cap : 64;
	struct fresh *v;

	if (l->n == l->cap) {
		v = reallocarray(l->v, cap, sizeof(*v));
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = f;
	return true;
}

void space_state__free(void *priv)
{
	struct space_state *st = priv;

	if (!st)
		return;
	u64map__free(st->frames);
	set_perf_map(st, NULL);
	free(st);
}

/* The ELF file behind a code mapping, looked for once, while the mapping exists. */
void open_mapping(struct symbolizer *s, uint32_t pid, struct mapping *m)
{
	if (m->elf_tried)
		return;
	m->elf_tried = true;
	if (m->map.kind == PROC_MAP_FILE)
		m->elf = elf_for_map(s, pid, &m->map);
	else if (m->map.kind == PROC_MAP_SPECIAL && !strcmp(m->map.path, "[vdso]"))
		m->elf = vdso_for_map(s, pid, &m->map);
}

/*
 * Reads the memory map and opens the ELF files of its executable mappings.
 * With JIT memory, the perf map is read now too, while the process surely
 * lives; misses read it again later (jit_name).
 */
static int read_maps(struct symbolizer *s, struct space *sp)
{
	struct mapping_table *t = NULL;
	struct proc_maps *maps = NULL;
	struct mapping *m;
	bool jit = false;
	size_t i, n, ncode = 0;
	int err;

	err = proc_maps__read((int)sp->pid, &maps);
	if (!err)
		err = mapping_table__new(&t);
	n = err ? 0 : proc_maps__count(maps);
	for (i = 0; i < n; i++) {
		const struct proc_map *pm = proc_maps__get(maps, i);

		if (!(pm->perms & PROC_MAP_EXEC))
			continue;
		m = mapping_table__insert(t, pm);
		if (!m) {
			err = -ENOMEM;
			break;
		}
		/* Past the cap, a file is opened when a sample needs it (resolve_user). */
		if (++ncode > LOAD_MAX_EAGER_MAPPINGS)
			continue;
		open_mapping(s, sp->pid, m);
		jit |= jit_memory(&m->map, m->elf);
	}
	proc_maps__free(maps);
	if (err) {
		mapping_table__free(t);
		return err;
	}
	mapping_table__free(sp->maps);
	sp->maps = t;
	if (jit)
		read_perf_map(s, sp);
	return 0;
}

/* Not stat(2): the program may be on FUSE, whose daemon would be asked (lib/stat_cached.h). */
static uint64_t exe_inode(uint32_t pid)
{
	uint64_t maj, min, ino;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	return stat_cached(path, &maj, &min, &ino) == 0 ? ino : 0;
}

/* A process read from /proc gets one more look (symbolizer__recheck_new). */
static void remember_fresh(struct symbolizer *s, uint32_t pid, uint64_t start_time)
{
	/* Without room the process keeps its first read; nothing worse. */
	if (pid)
		fresh_list__push(&s->fresh, (struct fresh){.pid = pid,
							   .start_time = start_time,
							   .seen_ns = clock__mono_ns()});
}

/* A space of pid with the symbolizer's state; NULL when out of memory. */
static struct space *begin_space(struct symbolizer *s, uint32_t pid, uint64_t start,
				 const char *comm, const struct space *from)
{
	struct space_state *st = calloc(1, sizeof(*st));
	struct space *sp = NULL;

	if (st)
		st->frames = u64map__new();
	if (st && st->frames)
		sp = address_spaces__begin(s->spaces, pid, start, comm, from);
	if (!sp) {
		space_state__free(st);
		return NULL;
	}
	st->generation = s->generation;
	st->perf_map_total = &s->perf_map_bytes;
	sp->priv = st;
	return sp;
}

/* The process's PID in its own namespace, read while it lives. */
static void set_ns_pid(struct space *sp, uint32_t ns_pid)
{
	struct space_state *st = sp->priv;

	st->ns_pid = ns_pid;
	st->ns_read = true;
}

/*
 * The process's PID in its own namespace, read while it lives. It is the
 * process's, not one program's: every space since its fork (or since it was
 * read from /proc), through its execs, gets it.
 */
void read_ns_pid(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	struct space *q;
	uint32_t ns = 0;

	if (st->ns_read || !sp->pid)
		return;
	if (procfs__ns_pid(sp->pid, &ns) || ns == sp->pid)
		ns = 0;
	set_ns_pid(sp, ns);
	for (q = sp; q->exec && (q = address_spaces__before(s->spaces, q));)
		set_ns_pid(q, ns);
	for (q = sp; (q = address_spaces__after(s->spaces, q)) && q->exec;)
		set_ns_pid(q, ns);
}

/* Reads name, memory map and files of a process not followed from its beginning. */
static void read_from_proc(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	int err;

	s->stats[SYM_STAT_PROCESSES]++;
	procfs__start_time(sp->pid, &st->start_time);
	st->exe_inode = exe_inode(sp->pid);
	read_ns_pid(s, sp);
	err = read_maps(s, sp);
	/* Its memory map is empty because it has none: a kernel thread has not exited. */
	if (err && procfs__is_kernel_thread(sp->pid)) {
		s->stats[SYM_STAT_KERNEL_THREADS]++;
		err = 0;
	}
	if (err) {
		s->stats[SYM_STAT_PROCESSES_GONE]++;
		st->unread = true;
		pr_debug("PID %u: memory map not read: %s", sp->pid, strerror(-err));
	}
	if (!s->tracking || err)
		remember_fresh(s, sp->pid, st->start_time);
}

/* A process cprof did not see begin: it is read from /proc, while it lives. */
static struct space *read_process(struct symbolizer *s, uint32_t pid)
{
	struct space *sp;
	char comm[64] = "swapper";

	if (pid && procfs__comm(pid, comm, sizeof(comm)))
		comm[0] = '\0';
	sp = begin_space(s, pid, 0, comm, NULL);
	if (!sp)
		return NULL;
	((struct space_state *)sp->priv)->from_proc = true;
	if (pid)
		read_from_proc(s, sp);
	return sp;
}

/*
 * Without the kernel's records a PID is one space, read at first sight; a
 * recycled PID is found by its start time, at most once per interval.
 */
static void check_reuse(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	uint64_t start;

	if (s->tracking || st->verified || !sp->pid)
		return;
	st->verified = true;
	if (procfs__start_time(sp->pid, &start) || !st->start_time || start == st->start_time)
		return;
	/* Its samples until now were the old process's: they are resolved, so start over. */
	st->exe_inode = 0;
	reread_process(s, sp);
	st->start_time = start;
}

/* The space a sample was stamped with, if known. */
static struct space *stamped_space(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = NULL;

	if (s->tracking)
		sp = address_spaces__at(s->spaces, t->pid, t->space);
	/* Id 0 (or no hooks in the kernel): before any fork or exec seen. */
	return sp ? sp : address_spaces__latest(s->spaces, t->pid);
}

/*
 * The space whose name a sample goes under. An exec names the process (its
 * record) before the BPF hook stamps the new space, a little later, at the
 * end of execve: a sample in between, already under the new name, goes under
 * it, as perf files it too. (Its user registers are still the old program's,
 * at its execve call: its frames are looked up in the stamped space.)
 */
static struct space *named_space(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = stamped_space(s, t), *next;

	next = sp ? address_spaces__after(s->spaces, sp) : NULL;
	if (next && next->exec && t->comm && !strncmp(t->comm, next->comm, sizeof(next->comm)) &&
	    strncmp(t->comm, sp->comm, sizeof(sp->comm)))
		return next;
	return sp;
}

/* The stamped space, read from /proc when unknown. */
struct space *space_for(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = stamped_space(s, t);

	if (!sp)
		return read_process(s, t->pid);
	check_reuse(s, sp);
	return sp;
}

/* Notes a process first seen now, to be read later unless its records come first. */
static void remember_note(struct symbolizer *s, uint32_t pid)
{
	if (!fresh_list__push(&s->notes, (struct fresh){.pid = pid, .seen_ns = clock__mono_ns()}))
		read_process(s, pid);
}

/*
 * A process seen by its first sample. Followed, it may well have begun
 * after cprof, and its fork record be on its way behind the sample: it is
 * read from /proc only if no record has made it known a moment later
 * (symbolizer__recheck_new).
 */
void symbolizer__note_process(struct symbolizer *s, uint32_t pid)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	if (sp)
		read_ns_pid(s, sp);
	else if (s->tracking)
		remember_note(s, pid);
	else
		read_process(s, pid);
}

/* The processes noted NOTE_DELAY_NS ago or more that no record has made known. */
static void read_noted(struct symbolizer *s, uint64_t now)
{
	size_t i, kept = 0;

	for (i = 0; i < s->notes.n; i++) {
		struct space *sp = address_spaces__latest(s->spaces, s->notes.v[i].pid);

		if (now - s->notes.v[i].seen_ns < NOTE_DELAY_NS)
			s->notes.v[kept++] = s->notes.v[i];
		else if (sp)
			read_ns_pid(s, sp);
		else
			read_process(s, s->notes.v[i].pid);
	}
	s->notes.n = kept;
}

const char *symbolizer__process_name(struct symbolizer *s, const struct symbolizer_task *task)
{
	struct space *sp = named_space(s, task);

	return sp && sp->comm[0] ? sp->comm : NULL;
}

uint32_t symbolizer__ns_pid(struct symbolizer *s, const struct symbolizer_task *task)
{
	struct space *sp = named_space(s, task);

	/* Not read at its first sight (its records came later): now, if it still runs. */
	if (sp && sp->end == UINT64_MAX)
		read_ns_pid(s, sp);
	return sp ? ((struct space_state *)sp->priv)->ns_pid : 0;
}

void symbolizer__follow(struct symbolizer *s)
{
	s->tracking = true;
}

int symbolizer__set_scope(struct symbolizer *s, const uint32_t *pids, size_t n, bool children)
{
	size_t i;

	if (!s->scope && !(s->scope = u64map__new()))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (u64map__set(s->scope, pids[i], 1))
			return -ENOMEM;
	s->scope_children = children;
	return 0;
}

static bool in_scope(const struct symbolizer *s, uint32_t pid)
{
	uint64_t v;

	return !s->scope || u64map__get(s->scope, pid, &v);
}

/* The newest space of a process in scope, read from /proc if cprof has none. */
static struct space *current_space(struct symbolizer *s, uint32_t pid)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	return sp ? sp : read_process(s, pid);
}

void symbolizer__fork(struct symbolizer *s, uint32_t ppid, uint32_t pid, uint64_t time)
{
	struct space *parent, *child;

	if (!in_scope(s, ppid) && !in_scope(s, pid))
		return;
	if (!in_scope(s, pid) && (!s->scope_children || u64map__set(s->scope, pid, 1)))
		return;
	parent = current_space(s, ppid);
	child = begin_space(s, pid, time, parent ? parent->comm : "", parent);
	if (!child)
		return;
	s->stats[SYM_STAT_SPACES_FOLLOWED]++;
	/*
	 * A child of a namespaced process is namespaced too: read now, before it
	 * may exit. Others are read at their first sample (a clone may still
	 * have begun a namespace).
	 */
	if (parent && ((struct space_state *)parent->priv)->ns_pid)
		read_ns_pid(s, child);
}

void symbolizer__exec(struct symbolizer *s, uint32_t pid, uint64_t time, const char *comm)
{
	struct space *sp, *before;
	struct space_state *old;

	if (!in_scope(s, pid))
		return;
	sp = begin_space(s, pid, time, comm, NULL);
	if (!sp)
		return;
	sp->exec = true;
	s->stats[SYM_STAT_SPACES_FOLLOWED]++;
	/* An exec keeps the PID namespace: its PID there is known if it was before. */
	before = address_spaces__at(s->spaces, pid, time - 1);
	old = before ? before->priv : NULL;
	if (old && old->ns_read) {
		((struct space_state *)sp->priv)->ns_pid = old->ns_pid;
		((struct space_state *)sp->priv)->ns_read = true;
	}
}

void symbolizer__rename(struct symbolizer *s, uint32_t pid, const char *comm)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	if (sp)
		snprintf(sp->comm, sizeof(sp->comm), "%s", comm);
}

/* Empties a space's frame cache; without memory for a new one, it stays. */
static void forget_frames(struct space_state *st)
{
	struct u64map *frames = u64map__new();

	if (!frames)
		return;
	u64map__free(st->frames);
	st->frames = frames;
}

void symbolizer__mmap(struct symbolizer *s, uint32_t pid, uint64_t time, const struct proc_map *m)
{
	struct space_state *st;
	struct mapping *added;
	struct space *sp;

	if (!(m->perms & PROC_MAP_EXEC) || !in_scope(s, pid))
		return;
	sp = address_spaces__at(s->spaces, pid, time);
	/* A process that began before cprof: /proc has this mapping already. */
	if (!sp) {
		read_process(s, pid);
		return;
	}
	st = sp->priv;
	added = mapping_table__own(&sp->maps) ? NULL : mapping_table__insert(sp->maps, m);
	if (!added)
		return;
	s->stats[SYM_STAT_MAPPINGS_FOLLOWED]++;
	/* Addresses resolved before the record was read may be in it now. */
	if (u64map__count(st->frames))
		forget_frames(st);
	/* Now, while the file can be opened through the process: it may exit, or the file go. */
	if (mapping_table__count(sp->maps) <= LOAD_MAX_EAGER_MAPPINGS)
		open_mapping(s, pid, added);
}

void symbolizer__exit(struct symbolizer *s, uint32_t pid, uint64_t time)
{
	address_spaces__exit(s->spaces, pid, time);
}

/*
 * Without the kernel's records, a process that has exited is found by its
 * /proc entry being gone, and forgotten a drain later (its last samples may
 * still be in the active map set); with them, its exit record ends its space.
 */
static void find_gone(struct symbolizer *s, uint64_t now)
{
	size_t pos = 0, idx = 0;
	struct space *sp;

	while ((sp = address_spaces__next(s->spaces, &pos, &idx)))
		if (sp->end == UINT64_MAX && sp->pid && !procfs__pid_exists(sp->pid))
			sp->end = now - 1;
}

/* Without the kernel's records a drain looks for exited processes; with them, a rare one. */
#define GONE_CHECK_EVERY 60

void symbolizer__new_interval(struct symbolizer *s, uint64_t resolved_before)
{
	uint64_t now = clock__mono_ns();
	size_t pos = 0, idx = 0;
	struct space *sp;

	s->perf_map_ns = 0;
	/* A space that ended before then has no sample left to resolve. */
	s->stats[SYM_STAT_SPACES_FORGOTTEN] += address_spaces__forget(s->spaces, resolved_before);
	if (!s->tracking || ++s->intervals % GONE_CHECK_EVERY == 0)
		find_gone(s, now);
	/* Without memory for the check the files stay open until the next drain. */
	close_idle_elfs(s);
	while ((sp = address_spaces__next(s->spaces, &pos, &idx))) {
		struct space_state *st = sp->priv;

		st->refreshed = false;
		st->verified = false;
		st->perf_map_read = false;
	}
}

/* A process read from /proc whose first read failed, read after all: it had not exited. */
static void uncount_gone(struct symbolizer *s, struct space_state *st)
{
	s->stats[SYM_STAT_PROCESSES_GONE]--;
	st->unread = false;
}

/*
 * Reads a process read from /proc once more: its loader may have mapped
 * more since, or (without the kernel's records) it may have run exec, which
 * makes it another program with another name, other addresses and no perf
 * map yet.
 */
void reread_process(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	uint64_t exe = exe_inode(sp->pid);
	struct u64map *frames;
	char comm[64];

	/* An unknown program (exe_inode 0) is taken as changed. */
	if (exe && exe != st->exe_inode) {
		frames = u64map__new();
		if (frames) {
			u64map__free(st->frames);
			st->frames = frames;
		}
		st->exe_inode = exe;
		if (procfs__comm(sp->pid, comm, sizeof(comm)) == 0)
			snprintf(sp->comm, sizeof(sp->comm), "%.15s", comm);
		set_perf_map(st, NULL);
		st->perf_map_bad = 0;
		st->perf_map_gen++;
		/* The new program's map is read afresh; a refusal already counted stays so. */
		st->perf_map_src = (struct perf_map_source){.refused = st->perf_map_src.refused,
							    .stale = st->perf_map_src.stale};
		st->owner_read = false;
		st->owner_ok = false;
	}
	if (read_maps(s, sp) == 0 && st->unread)
		uncount_gone(s, st);
}

void symbolizer__recheck_new(struct symbolizer *s)
{
	uint64_t now = clock__mono_ns();
	size_t i, kept = 0;

	read_noted(s, now);
	for (i = 0; i < s->fresh.n; i++) {
		const struct fresh *f = &s->fresh.v[i];
		struct space *sp;

		if (now - f->seen_ns < RECHECK_AFTER_NS) {
			s->fresh.v[kept++] = *f;
			continue;
		}
		/* Still the process read then (a recycled PID is not), and alive. */
		sp = address_spaces__latest(s->spaces, f->pid);
		if (!sp || !((struct space_state *)sp->priv)->from_proc || sp->end != UINT64_MAX ||
		    ((struct space_state *)sp->priv)->start_time != f->start_time ||
		    !procfs__pid_exists(f->pid))
			continue;
		reread_process(s, sp);
	}
	s->fresh.n = kept;
}
