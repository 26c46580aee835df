// SPDX-License-Identifier: MIT
/*
 * Unwind tables by file identity; see table_cache.h.
 *
 * A build off the loop (table_cache__load_off_loop) interns its rules in
 * a dictionary of its own, never the shared one the loop reads and gives
 * the BPF program: its rule ids are made the shared dictionary's when the
 * loop takes the table back, one lookup per distinct rule and a rewrite of
 * each row, far less than the build.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MODULE "unwind"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "lib/sigbus.h"
#include "lib/u64map.h"
#include "unwind/elf_cfi.h"
#include "unwind/go_pcsp.h"
#include "unwind/table_cache.h"
#include "unwind/kept_tables.h"
#include "unwind/table_loader.h"
#include "store/table_store.h"
#include "unwind/unwind_rule.h"

/* What a build gives: the table or why there is none, and the file's code segments. */
struct build_result {
	struct unwind_table *t;
	struct unwind_table_stats stats;
	struct exec_seg exec[TABLE_EXEC_SEGS];
	uint32_t nexec;
	int err;
	bool loaded; /* from the store */
	uint64_t ns;
};

/*
 * A file to build from, opened on the caller's thread: its ELF image is
 * mapped and needs no descriptor (ELF_C_FDDONE), so that a thousand
 * queued builds hold no thousand descriptors.
 */
struct build_source {
	Elf *elf; /* NULL: not ELF, or not mapped */
	int fd;	  /* while opening */
	struct stat st;
	bool have_st;
};

struct entry;

/* A build on the loader's thread: all it touches is its own, but the store (locked). */
struct build_job {
	struct entry *e; /* the loop's (see finish_job) */
	struct build_source src;
	struct table_store *store;
	/*
	 * The run's deadline as it was when posted, moved to the end of the
	 * run by table_cache__stop, for the build under way to notice.
	 */
	struct load_budget own;
	struct unwind_rules *rules; /* the job's own dictionary */
	uint64_t posted;	    /* CLOCK_MONOTONIC ns */
	struct build_result res;
};

struct entry {
	struct cached_table t; /* first: the public part */
	struct file_id id;
	uint64_t refs;
	struct build_job *job; /* while t.pending (job->e is this entry) */
	struct entry *next_same_hash;
};

struct table_cache {
	struct table_store *store;  /* borrowed; NULL: none */
	struct load_budget *budget; /* borrowed; NULL: none */
	struct unwind_rules *rules;
	struct u64map *index;	     /* hash of file_id -> chain of struct entry */
	struct table_loader *loader; /* NULL: tables are built on the caller's thread */
	/* Pending entries no one holds, freed when their job ends (or with the cache). */
	struct entry *orphans;
	bool stopped;			   /* table_cache__stop was called */
	uint64_t sync_bytes;		   /* of CFI, past which a file is posted */
	uint64_t slice_start, slice_spent; /* the loop's builds: this slice's, ns */
	uint64_t wait_spent;		   /* ... and its waits for builds (table_cache__wait) */
	struct table_cache_stats stats;
};

static uint64_t id_hash(const struct file_id *id)
{
	return hash_u64(((uint64_t)id->dev_major << 32 | id->dev_minor) ^
			hash_u64(id->inode ^ hash_u64(id->generation)));
}

static bool same_file(const struct file_id *a, const struct file_id *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->inode == b->inode && a->generation == b->generation;
}

int table_cache__new(struct table_store *store, struct table_cache **out)
{
	struct table_cache *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	*out = NULL;
	if (!c)
		return err;
	c->store = store;
	c->index = u64map__new();
	if (c->index)
		err = unwind_rules__new(&c->rules);
	if (err) {
		table_cache__free(c);
		return err;
	}
	*out = c;
	return 0;
}

static void free_entry(struct entry *e)
{
	unwind_table__free((struct unwind_table *)e->t.table);
	free(e);
}

void table_cache__free(struct table_cache *c)
{
	struct entry *e, *next;
	uint64_t key, v;
	size_t pos = 0;

	if (!c)
		return;
	/* First: the jobs it drops point at no entry freed below. */
	table_cache__stop(c, clock__mono_ns() + TABLE_LOADER_STOP_NS);
	table_loader__free(c->loader);
	while (c->index && u64map__next(c->index, &pos, &key, &v)) {
		for (e = (struct entry *)(uintptr_t)v; e; e = next) {
			next = e->next_same_hash;
			free_entry(e);
		}
	}
	for (e = c->orphans; e; e = next) {
		next = e->next_same_hash;
		free_entry(e);
	}
	u64map__free(c->index);
	unwind_rules__free(c->rules);
	free(c);
}

struct unwind_rules *table_cache__rules(struct table_cache *c)
{
	return c->rules;
}

void table_cache__set_budget(struct table_cache *c, struct load_budget *budget)
{
	c->budget = budget;
}

static int source_open_mapped(void *arg)
{
	struct build_source *s = arg;

	/* elf_begin reads the header from the mapping: under sigbus__call. */
	s->elf =
		elf_version(EV_CURRENT) == EV_NONE ? NULL : elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	if (s->elf)
		elf_cntl(s->elf, ELF_C_FDDONE);
	return 0;
}

static void source_open(int fd, struct build_source *s)
{
	s->have_st = !fstat(fd, &s->st);
	s->fd = fd;
	/* Cut short by a SIGBUS: not an ELF file we can read (the mapping is let go with it). */
	if (sigbus__call(source_open_mapped, s))
		s->elf = NULL;
	s->fd = -1;
}

static void source_close(struct build_source *s)
{
	elf_end(s->elf);
	s->elf = NULL;
}

/* The file's table from the store, if it has it: 0, or -ENOENT. */
static int load(struct table_store *store, struct unwind_rules *rules, const struct build_source *s,
		struct table_file_id *id, struct unwind_table **t, struct unwind_table_stats *stats)
{
	memset(id, 0, sizeof(*id));
	if (!store || !s->have_st)
		return -ENOENT;
	kept_source__of(&id->file, &s->st);
	id->build_id_len = (uint32_t)elf_build_id(s->elf, id->file.size, id->build_id);
	return table_store__load(store, id, rules, t, stats);
}

/* A file over a cap, or whose build the deadline cut off, is counted for the summary. */
static void count_refusal(struct table_cache *c, int err)
{
	if (!c->budget)
		return;
	c->budget->cfi_refused += err == -EFBIG;
	c->budget->cfi_abandoned += err == -ETIME;
}

/*
 * Go's function table, for a file whose Go code has no CFI: a Go program
 * without .debug_frame (stripped, or never had one). Go writes no
 * .eh_frame; one that a Go program has is its C code's (cgo).
 */
static int go_source(Elf *elf, const struct elf_cfi *cfi, struct go_pcsp **out)
{
	size_t size;
	const char *image;
	int err;

	*out = NULL;
	if (cfi->has_debug_frame)
		return 0;
	image = elf_rawfile(elf, &size);
	err = image ? go_pcsp__open(image, size, cfi->arch, out) : -ENOENT;
	return err == -ENOENT ? 0 : err;
}

/* The file's executable segments, the first TABLE_EXEC_SEGS, into t. */
static void exec_segs(Elf *elf, struct build_result *t)
{
	GElf_Phdr ph;
	size_t i, n;

	t->nexec = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && t->nexec < TABLE_EXEC_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		t->exec[t->nexec++] = (struct exec_seg){ph.p_offset, ph.p_offset + ph.p_filesz,
							ph.p_vaddr - ph.p_offset};
	}
}

/* A build's inputs, and what it made so far (kept when a SIGBUS cuts it off). */
struct build_args {
	struct table_store *store;
	struct load_budget *budget;
	struct unwind_rules *rules;
	const struct build_source *s;
	const atomic_bool *stop;
	struct build_result *r;
	struct unwind_sources src;
};

/* build_table's steps, which read the file's mapping; its error. */
static int build_steps(void *arg)
{
	struct build_args *a = arg;
	struct build_result *r = a->r;
	struct table_file_id id;
	struct elf_cfi cfi;
	Elf *elf = a->s->elf;
	int err = 0;

	if (a->stop && atomic_load(a->stop))
		err = -ETIME;
	else if (!elf)
		err = -ENOEXEC;
	if (!err)
		exec_segs(elf, r);
	r->loaded = !err && !load(a->store, a->rules, a->s, &id, &r->t, &r->stats);
	if (!err && !r->loaded)
		err = load_budget__over(a->budget) ? -ETIME : elf_cfi__read(elf, &cfi);
	/* Refused whole: a table without the big section would unwind its code as having none. */
	if (!err && !r->loaded && cfi.over_cap)
		err = -EFBIG;
	if (!err && !r->loaded) {
		elf_cfi__sources(&cfi, NULL, &a->src);
		a->src.budget = a->budget;
		err = go_source(elf, &cfi, &a->src.go);
	}
	if (!err && !r->loaded) {
		err = unwind_table__build(&a->src, a->rules, &r->t, &r->stats);
		if (!err && a->store && !(a->stop && atomic_load(a->stop)))
			table_store__save(a->store, &id, r->t, a->rules, &r->stats);
	}
	return err;
}

/*
 * Reads the file's CFI into r, its rule ids those of rules; a file without
 * any is an answer, not an error. stop (NULL: none) set: the run is over,
 * the store may be gone, nothing is begun. A file truncated under the
 * build (its owner's doing) ends it with -EIO and no table.
 */
static void build_table(struct table_store *store, struct load_budget *budget,
			struct unwind_rules *rules, const struct build_source *s,
			const atomic_bool *stop, struct build_result *r)
{
	uint64_t t0 = clock__mono_ns();
	struct build_args a = {store, budget, rules, s, stop, r, {0}};

	r->err = sigbus__call(build_steps, &a);
	if (r->err == -EIO && r->t) {
		unwind_table__free(r->t);
		r->t = NULL;
	}
	go_pcsp__free(a.src.go);
	r->ns = clock__mono_ns() - t0;
}

/* A build's result becomes e's table, counted; -ENOMEM (r freed). */
static int apply(struct table_cache *c, struct entry *e, struct build_result *r)
{
	if (r->err == -ENOMEM)
		return -ENOMEM;
	count_refusal(c, r->err);
	memcpy(e->t.exec, r->exec, sizeof(r->exec));
	e->t.nexec = r->nexec;
	e->t.stats = r->stats;
	e->t.table = r->t;
	e->t.err = r->err;
	e->t.build_ns = r->ns;
	c->stats.built++;
	c->stats.loaded += r->loaded;
	c->stats.build_ns += r->ns;
	c->stats.no_cfi += !r->t;
	c->stats.bytes += unwind_table__bytes(r->t);
	if (c->stats.bytes > c->stats.peak_bytes)
		c->stats.peak_bytes = c->stats.bytes;
	return 0;
}

/* Reads the file's CFI into e, on this thread. */
static int build(struct table_cache *c, struct entry *e, struct build_source *s)
{
	struct build_result r = {0};

	build_table(c->store, c->budget, c->rules, s, NULL, &r);
	source_close(s);
	return apply(c, e, &r);
}

static void job_run(void *arg, const atomic_bool *stop)
{
	struct build_job *j = arg;

	build_table(j->store, &j->own, j->rules, &j->src, stop, &j->res);
	source_close(&j->src);
}

static void job_free(void *arg)
{
	struct build_job *j = arg;

	source_close(&j->src);
	unwind_table__free(j->res.t);
	unwind_rules__free(j->rules);
	free(j);
}

/* e's table, built on the loader's thread from s (the job's now): pending until taken. */
static int post(struct table_cache *c, struct entry *e, struct build_source *s, uint64_t cost)
{
	struct build_job *j = calloc(1, sizeof(*j));
	int err = -ENOMEM;

	if (!j) {
		source_close(s);
		return err;
	}
	j->src = *s;
	j->posted = clock__mono_ns();
	j->store = c->store;
	if (c->budget) {
		atomic_init(&j->own.deadline_ns, atomic_load(&c->budget->deadline_ns));
		j->own.stop_requested = c->budget->stop_requested;
	}
	err = unwind_rules__new(&j->rules);
	if (!err)
		err = table_loader__post(c->loader, j, cost);
	if (err) {
		job_free(j);
		return err;
	}
	j->e = e;
	e->job = j;
	e->t.pending = true;
	c->stats.pending++;
	return 0;
}

/*
 * The job's table, its rule ids made the shared dictionary's; a rule that
 * finds no room there becomes the rule that says so, as in a build. 0 or
 * -ENOMEM.
 */
static int remap_rules(struct table_cache *c, struct build_job *j)
{
	const struct cprof_unwind_rule room = unwind_rule_stop(CPROF_STOP_NO_RULE_ROOM);
	const struct cprof_unwind_rule *all = unwind_rules__all(j->rules);
	size_t i, n = unwind_rules__count(j->rules);
	struct unwind_table *t = j->res.t;
	uint32_t *ids, rule;
	int err = 0;

	if (!t)
		return 0;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		err = unwind_rules__id(c->rules, &all[i], &ids[i]);
		if (err == -ENOSPC)
			err = unwind_rules__id(c->rules, &room, &ids[i]);
	}
	for (i = 0; i < t->nrows && !err; i++) {
		rule = t->rows[i] >> CPROF_UNWIND_PAGE_SHIFT;
		t->rows[i] = cprof_unwind_row(t->rows[i], rule < n ? ids[rule] : CPROF_RULE_NO_CFI);
	}
	free(ids);
	return err;
}

/* A job the loader ended: its entry's table, if anyone still holds it. */
static struct entry *finish_job(struct table_cache *c, struct build_job *j)
{
	struct entry *e = j->e, **pp;

	c->stats.pending--;
	pr_debug("table of inode %llu: %s after %.1f ms, %.1f ms of them building it",
		 (unsigned long long)e->id.inode, j->res.t ? "built" : "none",
		 (double)(clock__mono_ns() - j->posted) / 1e6, (double)j->res.ns / 1e6);
	e->job = NULL;
	e->t.pending = false;
	if (!e->refs) {
		for (pp = &c->orphans; *pp != e; pp = &(*pp)->next_same_hash)
			;
		*pp = e->next_same_hash;
		free_entry(e);
		e = NULL;
	} else if (remap_rules(c, j) || apply(c, e, &j->res)) {
		/* Out of memory: the file counts as one without a table. */
		unwind_table__free(j->res.t);
		e->t.err = -ENOMEM;
		c->stats.no_cfi++;
	}
	j->res.t = NULL;
	job_free(j);
	return e;
}

int table_cache__load_off_loop(struct table_cache *c, uint64_t sync_bytes)
{
	c->sync_bytes = sync_bytes;
	if (c->loader)
		return 0;
	return table_loader__new(job_run, job_free, &c->loader);
}

int table_cache__fd(const struct table_cache *c)
{
	return c->loader ? table_loader__fd(c->loader) : -1;
}

struct cached_table *table_cache__take(struct table_cache *c)
{
	struct build_job *j;
	struct entry *e;

	while (c->loader && (j = table_loader__take(c->loader)))
		if ((e = finish_job(c, j)))
			return &e->t;
	return NULL;
}

/* The builds posted and not taken back end at their next look at the clock. */
static void end_builds(struct table_cache *c)
{
	uint64_t now = clock__mono_ns(), key, v;
	struct entry *e;
	size_t pos = 0;

	while (u64map__next(c->index, &pos, &key, &v))
		for (e = (struct entry *)(uintptr_t)v; e; e = e->next_same_hash)
			if (e->job)
				load_budget__end_by(&e->job->own, now);
	for (e = c->orphans; e; e = e->next_same_hash)
		load_budget__end_by(&e->job->own, now);
}

/*
 * Whether the loop's slices have room (new ones each
 * TABLE_CACHE_SLICE_EVERY_NS): for builds (spent), or for waits.
 */
static bool slice_room(struct table_cache *c, uint64_t now, const uint64_t *spent)
{
	if (now - c->slice_start >= TABLE_CACHE_SLICE_EVERY_NS) {
		c->slice_start = now;
		c->slice_spent = 0;
		c->wait_spent = 0;
	}
	return *spent < TABLE_CACHE_SLICE_NS;
}

bool table_cache__wait(struct table_cache *c, uint64_t max_ns)
{
	uint64_t t0 = clock__mono_ns(), room;
	bool done;

	if (!c->loader || !c->stats.pending || c->stopped || !slice_room(c, t0, &c->wait_spent))
		return false;
	room = TABLE_CACHE_SLICE_NS - c->wait_spent;
	done = table_loader__wait_one(c->loader, t0 + (max_ns < room ? max_ns : room));
	c->wait_spent += clock__mono_ns() - t0;
	return done;
}

size_t table_cache__stop(struct table_cache *c, uint64_t deadline_ns)
{
	size_t left;

	if (!c->loader)
		return 0;
	/* Once: after it, jobs left behind may be gone. */
	if (!c->stopped)
		end_builds(c);
	c->stopped = true;
	left = table_loader__stop(c->loader, deadline_ns);
	c->stats.pending -= left;
	c->stats.left_behind += left;
	if (c->budget) {
		c->budget->cfi_abandoned += left;
		c->budget->cfi_left_behind += left;
	}
	return left;
}

/*
 * e's table from the file at fd: built on this thread if it is cheap (its
 * CFI bytes, from its section headers) and the slice has room, as every
 * build was before the loader: a process's first samples then find its
 * libraries' tables. Else posted to the loader.
 */
static int make_table(struct table_cache *c, struct entry *e, int fd)
{
	uint64_t cost, t0 = clock__mono_ns();
	struct build_source s;
	int err;

	source_open(fd, &s);
	if (c->loader) {
		cost = s.elf ? elf_cfi__claimed_bytes(s.elf) : 0;
		if (cost > c->sync_bytes || !slice_room(c, t0, &c->slice_spent))
			return post(c, e, &s, cost);
	}
	err = build(c, e, &s);
	c->slice_spent += clock__mono_ns() - t0;
	return err;
}

/* e, made and not handed out, goes: freed when its build ends if it has one under way. */
static void drop_new(struct table_cache *c, struct entry *e)
{
	if (!e->t.pending) {
		free_entry(e);
		return;
	}
	e->refs = 0;
	e->next_same_hash = c->orphans;
	c->orphans = e;
}

int table_cache__get(struct table_cache *c, const struct file_id *id, int fd,
		     struct cached_table **out)
{
	uint64_t h = id_hash(id), v = 0;
	struct entry *head = NULL, *e;
	int err;

	if (u64map__get(c->index, h, &v))
		head = (struct entry *)(uintptr_t)v;
	for (e = head; e; e = e->next_same_hash) {
		if (same_file(&e->id, id)) {
			e->refs++;
			*out = &e->t;
			return 0;
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->id = *id;
	e->t.id = *id;
	e->refs = 1;
	err = make_table(c, e, fd);
	if (!err) {
		e->next_same_hash = head;
		err = u64map__set(c->index, h, (uint64_t)(uintptr_t)e);
	}
	if (err) {
		drop_new(c, e);
		return err;
	}
	c->stats.tables++;
	*out = &e->t;
	return 0;
}

bool table_cache__put(struct table_cache *c, struct cached_table *t)
{
	struct entry *e = (struct entry *)t, **pp, *head;
	uint64_t h, v;

	if (!t || --e->refs)
		return false;
	h = id_hash(&e->id);
	if (!u64map__get(c->index, h, &v))
		return false;
	head = (struct entry *)(uintptr_t)v;
	for (pp = &head; *pp && *pp != e; pp = &(*pp)->next_same_hash)
		;
	if (*pp)
		*pp = e->next_same_hash;
	if (head)
		u64map__set(c->index, h, (uint64_t)(uintptr_t)head);
	else
		u64map__delete(c->index, h);
	c->stats.tables--;
	c->stats.bytes -= unwind_table__bytes(e->t.table);
	/* Its job still points at it: freed when the job ends. */
	if (e->t.pending) {
		e->next_same_hash = c->orphans;
		c->orphans = e;
	} else {
		free_entry(e);
	}
	return true;
}

void table_cache__stats(const struct table_cache *c, struct table_cache_stats *out)
{
	*out = c->stats;
}
