// SPDX-License-Identifier: MIT
/*
 * The unwinder's maps, kept current; see region_feed.h.
 *
 * A region set is valid for one address space, the id the BPF hooks give
 * each fork and exec (`spaces`): a sample taken in another space is not
 * walked with it. Binding a process therefore needs its space's id, read
 * from the kernel: before reading /proc/PID/maps for a snapshot (if the
 * process execs in between, the set is bound to the older id and samples of
 * the new program find no table, rather than a wrong one), and right after
 * the exec record for an exec, checked to be that exec's (the BPF hook runs
 * just after the kernel stamps the record). A copy on write keeps the id
 * the kernel holds (a forked child's, which user space never read).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define LOG_MODULE "unwind"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/proc_maps.h"
#include "sample/task_mapping.h"
#include "sample/region_feed.h"
#include "sample/sampler.h"
#include "sample/unwinder.h"

#define MAX_SETS 65536
/* An exec's record and its BPF hook are microseconds apart; another exec, much more. */
#define EXEC_SPACE_SLACK_NS 10000000ull
/* The longest exec (record to hook) whose window region_feed__space_of trusts. */
#define EXEC_WINDOW_NS 3000000ull
/* How long an exited process's regions are kept for its late stack copies. */
#define EXIT_GRACE_NS 500000000ull
/* Never the id of a space: a process bound with it has no valid set (no table yet). */
#define NO_SPACE UINT64_MAX

struct region_feed {
	struct unwinder *unwinder;
	struct sampler *sampler;
	struct table_cache *cache;
	struct process_regions *regions;
	struct u64map *loaded; /* cached_table * -> struct unwinder_table *, in the maps */
	bool keep_space;       /* binds now come from a copy on write */
	bool follow_all;       /* every process that execs, not only those seen or forked */
	int vdso_fd, vdso_err; /* our vDSO's image as a file, or why there is none */
	/*
	 * pid -> the time from which its regions follow the kernel's records
	 * (its fork or exec); a process read from /proc has none, only the
	 * space it was read in (snap_space).
	 */
	struct u64map *exact_since, *snap_space;
	/*
	 * pid -> the end of its last exec (its space id, from the BPF hook):
	 * from the exec's record (exact_since) to there, the kernel is loading
	 * the new program while the user registers are still the old one's.
	 */
	struct u64map *exec_end;
	struct u64map *exits; /* pid -> the time of its exit, not applied yet */
	uint64_t snapshots_failed, stale_execs;
	uint64_t files, files_refused; /* tables given to the walk by file, or refused by its map */
};

/*
 * The vDSO as a file: our own image, the same as every 64-bit process's
 * (one per kernel), in a memory file made once.
 */
static int open_vdso(struct region_feed *f)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_maps *maps = NULL;
	const struct proc_map *m;
	int fd, err = -ENOENT;

	if (f->vdso_fd >= 0 || f->vdso_err)
		return f->vdso_fd >= 0 ? dup(f->vdso_fd) : f->vdso_err;
	if (base && proc_maps__read(getpid(), &maps) == 0 && (m = proc_maps__find(maps, base)) &&
	    m->start == base) {
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd < 0)
			err = -errno;
		else if (write(fd, (const void *)base, m->end - m->start) !=
			 (ssize_t)(m->end - m->start)) {
			err = -EIO;
			close(fd);
		} else {
			f->vdso_fd = fd;
			err = 0;
		}
	}
	proc_maps__free(maps);
	if (err) {
		pr_debug("[vdso]: no image of it: %s", strerror(-err));
		f->vdso_err = err;
		return err;
	}
	return dup(f->vdso_fd);
}

static int sink_open(void *ctx, uint32_t pid, const struct proc_map *m)
{
	struct region_feed *f = ctx;

	if (m->kind == PROC_MAP_SPECIAL)
		return open_vdso(f);
	return proc_map__open(pid, m);
}

/*
 * The table found by its file too (the walk by file), for processes user
 * space has not followed yet. The vDSO (an image, inode 0) is no file the
 * kernel names; a map full of files leaves the table to the region sets.
 */
static void add_file(struct region_feed *f, const struct cached_table *ct,
		     const struct unwinder_table *ut)
{
	int err;

	if (!ct->id.inode || !ct->nexec)
		return;
	err = unwinder__add_file(f->unwinder, &ct->id, ct->exec, ct->nexec, ut);
	if (!err)
		f->files++;
	else if (err != -EOPNOTSUPP)
		f->files_refused++;
}

static int sink_load_table(void *ctx, const struct cached_table *ct)
{
	struct region_feed *f = ctx;
	struct unwinder_table *ut;
	int err;

	/* Without the in-kernel walk, tables serve the walks of copies only. */
	if (!f->unwinder)
		return 0;
	ut = malloc(sizeof(*ut));
	if (!ut)
		return -ENOMEM;
	err = unwinder__sync_rules(f->unwinder, table_cache__rules(f->cache));
	if (!err)
		err = unwinder__add_table(f->unwinder, ct->table, ut);
	if (!err)
		err = u64map__set(f->loaded, (uintptr_t)ct, (uintptr_t)ut);
	if (!err)
		add_file(f, ct, ut);
	if (err) {
		if (err != -ENOSPC)
			pr_debug("cannot load an unwind table: %s", strerror(-err));
		free(ut);
	}
	return err;
}

static struct unwinder_table *loaded_table(struct region_feed *f, const struct cached_table *ct)
{
	uint64_t v;

	if (!ct || !u64map__get(f->loaded, (uintptr_t)ct, &v))
		return NULL;
	return (struct unwinder_table *)(uintptr_t)v;
}

static void sink_unload_table(void *ctx, const struct cached_table *ct)
{
	struct region_feed *f = ctx;
	struct unwinder_table *ut = loaded_table(f, ct);

	if (!ut)
		return;
	if (ct->id.inode && ct->nexec)
		unwinder__remove_file(f->unwinder, &ct->id);
	unwinder__remove_table(f->unwinder, ut);
	u64map__delete(f->loaded, (uintptr_t)ct);
	free(ut);
}

static int sink_add_region(void *ctx, uint32_t set, uint64_t start, uint64_t end, uint64_t bias,
			   const struct cached_table *ct)
{
	struct region_feed *f = ctx;

	if (!f->unwinder)
		return 0;
	if (ct && ct->pending)
		return unwinder__add_pending_region(f->unwinder, set, start, end);
	return unwinder__add_region(f->unwinder, set, start, end, bias, loaded_table(f, ct));
}

static void sink_remove_region(void *ctx, uint32_t set, uint64_t start, uint64_t end)
{
	struct region_feed *f = ctx;

	if (f->unwinder)
		unwinder__remove_region(f->unwinder, set, start, end);
}

static int sink_bind(void *ctx, uint32_t pid, uint32_t set, uint64_t space)
{
	struct region_feed *f = ctx;
	int err;

	if (!f->unwinder)
		return 0;
	if (!f->keep_space)
		return unwinder__bind(f->unwinder, pid, set, space);
	err = unwinder__rebind(f->unwinder, pid, set);
	/* Not bound in the kernel: an exec came first, and its record will follow. */
	return err == -ENOENT ? 0 : err;
}

static void sink_unbind(void *ctx, uint32_t pid)
{
	struct region_feed *f = ctx;

	if (f->unwinder)
		unwinder__unbind(f->unwinder, pid);
}

int region_feed__new(struct unwinder *u, struct sampler *s, struct table_store *store,
		     struct region_feed **out)
{
	struct region_feed *f = calloc(1, sizeof(*f));
	struct region_sink sink = {
		.ctx = f,
		.open_file = sink_open,
		.load_table = sink_load_table,
		.unload_table = sink_unload_table,
		.add_region = sink_add_region,
		.remove_region = sink_remove_region,
		.bind = sink_bind,
		.unbind = sink_unbind,
	};
	int err = -ENOMEM;

	*out = NULL;
	if (!f)
		return err;
	f->unwinder = u;
	f->sampler = s;
	f->vdso_fd = -1;
	f->loaded = u64map__new();
	f->exact_since = u64map__new();
	f->snap_space = u64map__new();
	f->exits = u64map__new();
	f->exec_end = u64map__new();
	if (f->loaded && f->exact_since && f->snap_space && f->exits && f->exec_end)
		err = table_cache__new(store, &f->cache);
	if (!err)
		err = process_regions__new(f->cache, &sink, MAX_SETS, &f->regions);
	if (err) {
		region_feed__free(f);
		return err;
	}
	*out = f;
	return 0;
}

void region_feed__set_budget(struct region_feed *f, struct load_budget *budget)
{
	table_cache__set_budget(f->cache, budget);
}

void region_feed__free(struct region_feed *f)
{
	uint64_t key, v;
	size_t pos = 0;

	if (!f)
		return;
	process_regions__free(f->regions);
	while (f->loaded && u64map__next(f->loaded, &pos, &key, &v))
		free((void *)(uintptr_t)v);
	u64map__free(f->loaded);
	u64map__free(f->exact_since);
	u64map__free(f->snap_space);
	u64map__free(f->exits);
	u64map__free(f->exec_end);
	table_cache__free(f->cache);
	if (f->vdso_fd >= 0)
		close(f->vdso_fd);
	free(f);
}

void region_feed__note_process(struct region_feed *f, uint32_t pid)
{
	struct proc_maps *maps = NULL;
	uint64_t space;
	int err;

	if (!pid || process_regions__tracked(f->regions, pid))
		return;
	/* Read first: see the top of this file. */
	space = sampler__space_of(f->sampler, pid);
	err = proc_maps__read((int)pid, &maps);
	if (err) {
		f->snapshots_failed++;
		return;
	}
	err = process_regions__snapshot(f->regions, pid, space, maps);
	if (err)
		pr_debug("PID %u: no region set: %s", pid, strerror(-err));
	u64map__delete(f->exact_since, pid);
	u64map__set(f->snap_space, pid, space);
	proc_maps__free(maps);
}

void region_feed__note_command(struct region_feed *f, uint32_t pid)
{
	uint64_t space;
	int err;

	if (!pid || process_regions__tracked(f->regions, pid))
		return;
	space = sampler__space_of(f->sampler, pid);
	err = process_regions__snapshot(f->regions, pid, space, NULL);
	if (err)
		pr_debug("PID %u: no region set: %s", pid, strerror(-err));
	u64map__delete(f->exact_since, pid);
	u64map__set(f->snap_space, pid, space);
}

bool region_feed__tracked(const struct region_feed *f, uint32_t pid)
{
	return process_regions__tracked(f->regions, pid);
}

static void exit_now(struct region_feed *f, uint32_t pid)
{
	process_regions__exit(f->regions, pid);
	u64map__delete(f->exact_since, pid);
	u64map__delete(f->snap_space, pid);
	u64map__delete(f->exec_end, pid);
}

/* Applies pid's deferred exit, if it has one. */
static void finish_exit(struct region_feed *f, uint32_t pid)
{
	if (u64map__delete(f->exits, pid))
		exit_now(f, pid);
}

/*
 * An exit is applied EXIT_GRACE_NS later: a stack copy reaches user space
 * through another ring than the records, and one taken just before its
 * process exited may come after the exit record; it is walked with the
 * regions the process had.
 */
static void defer_exit(struct region_feed *f, uint32_t pid, uint64_t t)
{
	if (u64map__set(f->exits, pid, t ? t : 1))
		exit_now(f, pid);
}

void region_feed__reap(struct region_feed *f, uint64_t now)
{
	uint32_t gone[64];
	uint64_t pid, t;
	size_t pos = 0, n = 0, i;

	/* Collected first: deleting while iterating moves entries. */
	do {
		n = 0;
		pos = 0;
		while (n < 64 && u64map__next(f->exits, &pos, &pid, &t))
			if (t + EXIT_GRACE_NS < now)
				gone[n++] = (uint32_t)pid;
		for (i = 0; i < n; i++)
			finish_exit(f, gone[i]);
	} while (n == 64);
}

/* From t on, pid's regions are exactly what the kernel's records made them. */
static void since(struct region_feed *f, uint32_t pid, uint64_t t)
{
	u64map__delete(f->snap_space, pid);
	u64map__delete(f->exec_end, pid);
	if (process_regions__tracked(f->regions, pid))
		u64map__set(f->exact_since, pid, t ? t : 1);
	else
		u64map__delete(f->exact_since, pid);
}

/* A process untracked so far, from its exec on: an empty set its mmaps fill. */
static int track_from_exec(struct region_feed *f, uint32_t pid, uint64_t space)
{
	struct proc_maps *none = NULL;
	int err = proc_maps__parse("", 0, &none);

	if (!err)
		err = process_regions__snapshot(f->regions, pid, space, none);
	proc_maps__free(none);
	return err;
}

static void apply_exec(struct region_feed *f, const struct task_event *ev)
{
	uint64_t space = sampler__space_of(f->sampler, ev->pid);
	bool tracked = process_regions__tracked(f->regions, ev->pid);

	if (!tracked && !f->follow_all)
		return;
	if (space < ev->time || space - ev->time > EXEC_SPACE_SLACK_NS) {
		/* A later exec already happened: its own record will bind the right set. */
		f->stale_execs++;
		space = NO_SPACE;
	}
	if (tracked)
		process_regions__exec(f->regions, ev->pid, space);
	else if (track_from_exec(f, ev->pid, space))
		return;
	since(f, ev->pid, ev->time);
	if (space != NO_SPACE)
		u64map__set(f->exec_end, ev->pid, space);
}

static void apply_mmap(struct region_feed *f, const struct task_event *ev)
{
	char name[4096 + 16];
	struct proc_map m;

	if (!process_regions__tracked(f->regions, ev->pid) ||
	    !task_event__mapping(ev, &m, name, sizeof(name)))
		return;
	f->keep_space = true;
	process_regions__mmap(f->regions, ev->pid, &m);
	f->keep_space = false;
}

void region_feed__apply(struct region_feed *f, const struct task_event *ev)
{
	/* A pid used again: its former process is gone for good. */
	if (task_event__process_fork(ev) || (ev->type == TASK_EVENT_COMM && ev->exec))
		finish_exit(f, ev->pid);
	switch (ev->type) {
	case TASK_EVENT_FORK:
		if (ev->pid != ev->tid)
			break;
		process_regions__fork(f->regions, ev->ppid, ev->pid);
		since(f, ev->pid, ev->time);
		break;
	case TASK_EVENT_EXIT:
		if (ev->pid == ev->tid && process_regions__tracked(f->regions, ev->pid))
			defer_exit(f, ev->pid, ev->time);
		break;
	case TASK_EVENT_COMM:
		if (ev->exec)
			apply_exec(f, ev);
		break;
	case TASK_EVENT_MMAP:
		apply_mmap(f, ev);
		break;
	case TASK_EVENT_LOST:
		break;
	}
}

int region_feed__load_off_loop(struct region_feed *f)
{
	return table_cache__load_off_loop(f->cache, TABLE_CACHE_SYNC_CFI_BYTES);
}

int region_feed__fd(const struct region_feed *f)
{
	return table_cache__fd(f->cache);
}

void region_feed__pick_up(struct region_feed *f)
{
	struct cached_table *ct;

	while ((ct = table_cache__take(f->cache)))
		process_regions__table_ready(f->regions, ct);
}

size_t region_feed__stop_builds(struct region_feed *f, uint64_t deadline_ns)
{
	size_t left = table_cache__stop(f->cache, deadline_ns);

	/* Those that ended in time give their regions a table, for the last copies. */
	region_feed__pick_up(f);
	return left;
}

void region_feed__follow_all(struct region_feed *f)
{
	f->follow_all = true;
}

void region_feed__stats(const struct region_feed *f, struct region_feed_stats *out)
{
	memset(out, 0, sizeof(*out));
	process_regions__stats(f->regions, &out->regions);
	table_cache__stats(f->cache, &out->tables);
	out->snapshots_failed = f->snapshots_failed;
	out->stale_execs = f->stale_execs;
	out->files = f->files;
	out->files_refused = f->files_refused;
}

struct walk_ctx {
	struct region_feed *f;
	uint32_t pid;
};

static int find_code(void *arg, uint64_t pc, struct walk_code *out)
{
	const struct walk_ctx *w = arg;
	struct region_code rc;

	if (process_regions__find(w->f->regions, w->pid, pc, &rc))
		return -ENOENT;
	if (rc.pending)
		return -EAGAIN;
	*out = (struct walk_code){rc.table, rc.bias};
	return 0;
}

/*
 * Taken while the kernel loaded the new program, with the old one's user
 * registers: in the kernel, between the exec's record and its end. The end
 * is the space id the exec hook left, which a second exec right after
 * (env, a shell's exec) overwrites: an exec takes well under
 * EXEC_WINDOW_NS, and a longer window is not taken for this exec's. from:
 * the exec record's time, when true.
 */
static bool in_exec(struct region_feed *f, const struct cprof_copy *c, uint64_t *from)
{
	uint64_t end;

	return c->kern_bytes && u64map__get(f->exec_end, c->pid, &end) && c->time < end &&
	       u64map__get(f->exact_since, c->pid, from) && *from <= c->time &&
	       end - *from <= EXEC_WINDOW_NS;
}

uint64_t region_feed__space_of(struct region_feed *f, const struct cprof_copy *c)
{
	uint64_t from;

	/* Its registers are the old program's: named in the space before the exec. */
	if ((c->flags & CPROF_COPY_FROM_PERF) && in_exec(f, c, &from))
		return from - 1;
	return c->space;
}

/*
 * Whether pid's regions are those of the space the copy was taken in. A
 * copy from a perf sample has no space id, only its time: a snapshot fits
 * if its space had begun by then (had the process exec'd since, the exec's
 * record, applied before the copy is walked, would have ended the
 * snapshot's reign).
 */
static bool regions_fit(struct region_feed *f, const struct cprof_copy *c)
{
	uint64_t v, from;

	if (u64map__get(f->exact_since, c->pid, &v))
		return v <= c->time && !in_exec(f, c, &from);
	if (!u64map__get(f->snap_space, c->pid, &v))
		return false;
	return c->flags & CPROF_COPY_FROM_PERF ? v <= c->time : v == c->space;
}

/*
 * How long a copy's walk waits for a table being built (within the loop's
 * slice for builds, table_cache__wait): a small file's takes a few ms, and
 * the first samples of a process begun then are walked whole.
 */
#define WALK_WAIT_NS 20000000ull

/* The walk, with the tables of the moment (the dictionary grows as they come). */
static void walk_now(struct region_feed *f, struct walk_ctx *ctx, const struct stack_snapshot *snap,
		     struct walk_result *out)
{
	struct unwind_rules *rules = table_cache__rules(f->cache);
	struct stack_walk w = {
		.rules = unwind_rules__all(rules),
		.nrules = unwind_rules__count(rules),
		.ra_mask = f->unwinder ? unwinder__ra_mask(f->unwinder) : ~0ull,
		.find = find_code,
		.arg = ctx,
	};

	stack_walk__run(&w, snap, out);
}

void region_feed__walk(struct region_feed *f, const struct cprof_copy *c, struct walk_result *out)
{
	uint64_t until = clock__mono_ns() + WALK_WAIT_NS;
	struct walk_ctx ctx = {f, c->pid};
	struct stack_snapshot snap = {
		.pc = c->pc,
		.sp = c->sp,
		.fp = c->fp,
		.lr = c->lr,
		.stack = c->stack,
		.stack_size = c->stack_bytes,
		.gregs_valid = c->gregs_valid,
	};

	memcpy(snap.gregs, c->gregs, sizeof(snap.gregs));
	if (!regions_fit(f, c)) {
		memset(out, 0, sizeof(*out));
		out->ips[0] = c->pc;
		out->n = 1;
		out->stop = CPROF_STOP_NO_TABLE;
		return;
	}
	walk_now(f, &ctx, &snap, out);
	/* Stopped at a table being built: walked again once one has come. */
	while (out->stop == CPROF_STOP_NO_TABLE && clock__mono_ns() < until &&
	       table_cache__wait(f->cache, until - clock__mono_ns())) {
		region_feed__pick_up(f);
		walk_now(f, &ctx, &snap, out);
	}
}
