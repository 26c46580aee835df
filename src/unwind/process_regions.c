// SPDX-License-Identifier: MIT
/*
 * Region sets as sorted arrays: a process has tens of code mappings, rarely
 * a few hundred, and a sorted array is what gets copied on write; an mmap
 * moves at most that many 32-byte entries. Processes are found by pid in a
 * hash map, and a table's record hangs on its cached_table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/load_budget.h"
#include "lib/range.h"
#include "lib/sigbus.h"
#include "lib/u64map.h"
#include "unwind/exec_bias.h"
#include "unwind/process_regions.h"

#define LOG_MODULE "unwind"
#include "lib/log.h"

/* A file's table as the regions use it; one cache reference, however many regions. */
struct table_ref {
	struct cached_table *ct;
	uint64_t regions; /* of all sets, with the table or not */
	uint64_t tabled;  /* of those, given to the sink with the table: it has the table */
	/*
	 * Every process maps a library alike: the last mapping's file range
	 * and its bias less (start - offset), so that the next one need not
	 * read the ELF headers.
	 */
	bool memo;
	uint64_t memo_offset, memo_size, memo_delta;
};

struct region {
	uint64_t start, end; /* first: range_first_ending_after */
	uint64_t bias;
	struct table_ref *ref; /* NULL: not a file, or not opened */
	bool table;	       /* given to the sink with its table */
	bool pending;	       /* given to the sink while its table is built */
};

struct region_set {
	uint32_t id;
	uint32_t procs; /* bound to it */
	struct region *arr;
	size_t n, cap;
};

struct proc {
	struct region_set *set;
	uint64_t space; /* the last bound with, for a copy's bind */
};

struct process_regions {
	struct table_cache *cache;
	struct region_sink sink;
	struct u64map *procs; /* pid -> struct proc */
	uint32_t max_sets;
	uint32_t next_id; /* the lowest never handed out */
	/*
	 * Freed ids, oldest first, in a ring that grows to max_sets as ids are
	 * freed (not made whole at the start: a quarter of a MB to zero for
	 * profiles that free none): an id is reused as late as can be, as a
	 * walk in flight may still read the set it was.
	 */
	uint32_t *free_ids;
	uint32_t free_head, nfree, free_cap;
	struct process_regions_stats stats;
};

int process_regions__new(struct table_cache *cache, const struct region_sink *sink,
			 uint32_t max_sets, struct process_regions **out)
{
	struct process_regions *p;

	*out = NULL;
	if (!max_sets)
		return -EINVAL;
	/* table_cache__get reads ELF only for a table it does not have yet; the biases always. */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cache = cache;
	p->sink = *sink;
	p->max_sets = max_sets;
	p->next_id = 1;
	p->procs = u64map__new();
	if (!p->procs) {
		process_regions__free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

static int id_alloc(struct process_regions *p, uint32_t *id)
{
	if (p->next_id <= p->max_sets) {
		*id = p->next_id++;
		return 0;
	}
	if (!p->nfree)
		return -ENOSPC;
	*id = p->free_ids[p->free_head];
	p->free_head = (p->free_head + 1) % p->free_cap;
	p->nfree--;
	return 0;
}

/* The ring of freed ids, twice as large (up to max_sets), oldest first from 0. */
static int grow_free_ids(struct process_regions *p)
{
	uint32_t cap = p->free_cap ? p->free_cap * 2 : 64, i;
	uint32_t *ids;

	if (cap > p->max_sets)
		cap = p->max_sets;
	ids = malloc(cap * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < p->nfree; i++)
		ids[i] = p->free_ids[(p->free_head + i) % p->free_cap];
	free(p->free_ids);
	p->free_ids = ids;
	p->free_head = 0;
	p->free_cap = cap;
	return 0;
}

/* Without memory to grow the ring, the id is not reused: one set fewer to hand out. */
static void id_free(struct process_regions *p, uint32_t id)
{
	if (p->nfree == p->free_cap && grow_free_ids(p))
		return;
	p->free_ids[(p->free_head + p->nfree) % p->free_cap] = id;
	p->nfree++;
}

/* Takes the reference table_cache__get gave; -ENOMEM (given back). */
static int ref_get(struct process_regions *p, struct cached_table *ct, struct table_ref **out)
{
	struct table_ref *r = ct->user;

	if (r) {
		/* The record holds one: this one goes back (never the last). */
		table_cache__put(p->cache, ct);
		r->regions++;
		*out = r;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		table_cache__put(p->cache, ct);
		return -ENOMEM;
	}
	r->ct = ct;
	r->regions = 1;
	ct->user = r;
	*out = r;
	return 0;
}

/* Another region like r (a copy, a piece). */
static void region_hold(struct process_regions *p, const struct region *r)
{
	if (!r->ref)
		return;
	r->ref->regions++;
	r->ref->tabled += r->table;
	p->stats.regions_pending += r->pending;
}

/*
 * After r left the sink: the table leaves it with the last region that
 * has it, and goes back to the cache with the last region of its file.
 */
static void region_release(struct process_regions *p, const struct region *r)
{
	struct table_ref *t = r->ref;

	if (!t)
		return;
	p->stats.regions_pending -= r->pending;
	if (r->table && !--t->tabled) {
		p->sink.unload_table(p->sink.ctx, t->ct);
		p->stats.tables_loaded--;
	}
	if (--t->regions)
		return;
	t->ct->user = NULL;
	table_cache__put(p->cache, t->ct);
	free(t);
}

struct bias_args {
	int fd;
	const struct proc_map *m;
	uint64_t *bias;
	Elf *elf; /* for the caller to end */
};

/* The program headers are read from a mapping the file's owner may truncate (sigbus.h). */
static int bias_mapped(void *arg)
{
	struct bias_args *a = arg;

	a->elf = elf_begin(a->fd, ELF_C_READ_MMAP, NULL);
	return a->elf ? exec_bias(a->elf, a->m, a->bias) : -ENOEXEC;
}

static int file_bias(struct table_ref *r, int fd, const struct proc_map *m, uint64_t *bias)
{
	uint64_t size = m->end - m->start;
	Elf *elf;
	int err;

	if (!r->memo || r->memo_offset != m->offset || r->memo_size != size) {
		struct bias_args a = {fd, m, bias, NULL};

		err = sigbus__call(bias_mapped, &a);
		elf = a.elf;
		elf_end(elf);
		if (err)
			return err;
		r->memo = true;
		r->memo_offset = m->offset;
		r->memo_size = size;
		r->memo_delta = *bias - (m->start - m->offset);
	}
	*bias = m->start - m->offset + r->memo_delta;
	return 0;
}

/* r's file's table is being built: r waits for it (process_regions__table_ready). */
static int pending_region(struct process_regions *p, int fd, const struct proc_map *m,
			  struct region *r)
{
	int err = file_bias(r->ref, fd, m, &r->bias);

	if (err) {
		pr_debug("%s: no executable segment at offset %#llx: %s", m->path,
			 (unsigned long long)m->offset, strerror(-err));
		p->stats.regions_no_table++;
		return 0;
	}
	r->pending = true;
	p->stats.regions_pending++;
	p->stats.regions_waited++;
	return 0;
}

/* The table of the file m maps, into r; a file that cannot give one leaves r without. */
static int file_region(struct process_regions *p, uint32_t pid, const struct proc_map *m,
		       struct region *r)
{
	/* The generation is not in /proc/PID/maps; the kernel's mmap records have it, but both
	 * must name a file alike. */
	const struct file_id id = {m->dev_major, m->dev_minor, m->inode, 0};
	struct cached_table *ct;
	int fd, err;

	fd = p->sink.open_file(p->sink.ctx, pid, m);
	if (fd < 0) {
		pr_debug("pid %u: %s: not opened: %s", pid, m->path, strerror(-fd));
		p->stats.regions_not_opened++;
		return 0;
	}
	err = table_cache__get(p->cache, &id, fd, &ct);
	if (!err)
		err = ref_get(p, ct, &r->ref);
	if (err)
		goto cleanup;
	if (ct->pending) {
		err = pending_region(p, fd, m, r);
		goto cleanup;
	}
	if (!ct->table) {
		pr_debug("%s: no table: %s", m->path, strerror(-ct->err));
		p->stats.regions_no_table++;
		goto cleanup;
	}
	err = file_bias(r->ref, fd, m, &r->bias);
	if (err) {
		pr_debug("%s: no executable segment at offset %#llx: %s", m->path,
			 (unsigned long long)m->offset, strerror(-err));
		p->stats.regions_no_table++;
		err = 0;
		goto cleanup;
	}
	/* Tried again for each new mapping after a refusal: the sink may have room now. */
	if (!r->ref->tabled) {
		err = p->sink.load_table(p->sink.ctx, ct);
		if (err) {
			pr_debug("%s: table not loaded: %s", m->path, strerror(-err));
			p->stats.regions_table_full++;
			err = 0;
			goto cleanup;
		}
		p->stats.tables_loaded++;
	}
	r->table = true;
	r->ref->tabled++;
cleanup:
	close(fd);
	return err;
}

/* The region of a code mapping, into set s; 0 or -ENOMEM. */
static int region_make(struct process_regions *p, const struct region_set *s, uint32_t pid,
		       const struct proc_map *m, struct region *r)
{
	*r = (struct region){.start = m->start, .end = m->end};
	p->stats.regions_made++;
	if (s->n >= LOAD_MAX_EAGER_MAPPINGS) {
		p->stats.regions_over_cap++;
		return 0;
	}
	/* The vDSO has CFI too: the sink opens an image of it (file identity 0:0, inode 0). */
	if (m->kind == PROC_MAP_FILE ||
	    (m->kind == PROC_MAP_SPECIAL && m->path && !strcmp(m->path, "[vdso]")))
		return file_region(p, pid, m, r);
	/* JIT code: frame-pointer steps. */
	p->stats.regions_not_file++;
	return 0;
}

/* Code a sampled PC may be in. */
static bool is_code(const struct proc_map *m)
{
	if (!(m->perms & PROC_MAP_EXEC) || m->end <= m->start)
		return false;
	/* In the kernel's half: calls into it trap and are emulated, no user PC is ever there. */
	return !(m->kind == PROC_MAP_SPECIAL && m->path && !strcmp(m->path, "[vsyscall]"));
}

/* Gives r to the sink; false (r let go) when the sink refuses it. */
static bool region_add(struct process_regions *p, const struct region_set *s, struct region *r)
{
	int err = p->sink.add_region(p->sink.ctx, s->id, r->start, r->end, r->bias,
				     r->table || r->pending ? r->ref->ct : NULL);

	if (!err)
		return true;
	pr_debug("set %u: region %#llx-%#llx refused: %s", s->id, (unsigned long long)r->start,
		 (unsigned long long)r->end, strerror(-err));
	p->stats.regions_refused++;
	region_release(p, r);
	return false;
}

static int set_new(struct process_regions *p, struct region_set **out)
{
	struct region_set *s;
	uint32_t id;
	int err;

	*out = NULL;
	err = id_alloc(p, &id);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s) {
		id_free(p, id);
		return -ENOMEM;
	}
	s->id = id;
	p->stats.sets++;
	*out = s;
	return 0;
}

/* Removes s's regions from the sink and frees s, whatever its processes. */
static void set_free(struct process_regions *p, struct region_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		p->sink.remove_region(p->sink.ctx, s->id, s->arr[i].start, s->arr[i].end);
		region_release(p, &s->arr[i]);
	}
	p->stats.regions -= s->n;
	p->stats.sets--;
	id_free(p, s->id);
	free(s->arr);
	free(s);
}

/* A process lets s go; the last frees it. */
static void set_put(struct process_regions *p, struct region_set *s)
{
	if (s && !--s->procs)
		set_free(p, s);
}

static int set_reserve(struct region_set *s, size_t more)
{
	size_t cap = s->cap ? s->cap : 8;
	struct region *arr;

	if (s->n + more <= s->cap)
		return 0;
	while (cap < s->n + more)
		cap *= 2;
	arr = reallocarray(s->arr, cap, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	s->arr = arr;
	s->cap = cap;
	return 0;
}

static size_t first_ending_after(const struct region_set *s, uint64_t addr)
{
	return range_first_ending_after(s->arr, s->n, sizeof(*s->arr), addr);
}

static bool set_overlaps(const struct region_set *s, uint64_t start, uint64_t end)
{
	size_t i = first_ending_after(s, start);

	return i < s->n && s->arr[i].start < end;
}

/* A copy of s, bound to no process, with room for one more mapping; 0, -ENOMEM or -ENOSPC. */
static int set_copy(struct process_regions *p, const struct region_set *s, struct region_set **out)
{
	struct region_set *c;
	struct region r;
	size_t i;
	int err;

	err = set_new(p, &c);
	if (!err)
		err = set_reserve(c, s->n + 2);
	if (err) {
		set_free(p, c);
		return err;
	}
	for (i = 0; i < s->n; i++) {
		r = s->arr[i];
		region_hold(p, &r);
		if (region_add(p, c, &r))
			c->arr[c->n++] = r;
	}
	p->stats.regions += c->n;
	p->stats.copies++;
	*out = c;
	return 0;
}

/*
 * Puts fresh (NULL: nothing) at [start, end) of s, cutting what was there:
 * the regions it overlaps leave the sink, then their parts outside it come
 * back with fresh, in address order. Room for two more regions must be
 * reserved (one region cut in two around fresh).
 */
static void set_replace(struct process_regions *p, struct region_set *s, uint64_t start,
			uint64_t end, struct region *fresh)
{
	struct region put[3];
	size_t i, j, k, n = 0, kept = 0;

	i = first_ending_after(s, start);
	for (j = i; j < s->n && s->arr[j].start < end; j++)
		;
	/* The bias is of addresses, not offsets: a piece keeps its region's. */
	if (i < j && s->arr[i].start < start) {
		put[n] = s->arr[i];
		put[n].end = start;
		region_hold(p, &put[n++]);
	}
	if (fresh)
		put[n++] = *fresh;
	if (i < j && s->arr[j - 1].end > end) {
		put[n] = s->arr[j - 1];
		put[n].start = end;
		region_hold(p, &put[n++]);
	}
	/* After the holds: a table the pieces or fresh keep is not unloaded and loaded again. */
	for (k = i; k < j; k++) {
		p->sink.remove_region(p->sink.ctx, s->id, s->arr[k].start, s->arr[k].end);
		region_release(p, &s->arr[k]);
	}
	for (k = 0; k < n; k++)
		if (region_add(p, s, &put[k]))
			put[kept++] = put[k];
	memmove(&s->arr[i + kept], &s->arr[j], (s->n - j) * sizeof(*s->arr));
	memcpy(&s->arr[i], put, kept * sizeof(*put));
	s->n = s->n - (j - i) + kept;
	p->stats.regions = p->stats.regions - (j - i) + kept;
}

static struct proc *proc_of(const struct process_regions *p, uint32_t pid)
{
	uint64_t v;

	return u64map__get(p->procs, pid, &v) ? (struct proc *)(uintptr_t)v : NULL;
}

static int proc_new(struct process_regions *p, uint32_t pid, struct proc **out)
{
	struct proc *pr = calloc(1, sizeof(*pr));

	if (!pr || u64map__set(p->procs, pid, (uint64_t)(uintptr_t)pr)) {
		free(pr);
		return -ENOMEM;
	}
	p->stats.processes++;
	*out = pr;
	return 0;
}

static void proc_forget(struct process_regions *p, uint32_t pid, struct proc *pr)
{
	p->sink.unbind(p->sink.ctx, pid);
	set_put(p, pr->set);
	u64map__delete(p->procs, pid);
	free(pr);
	p->stats.processes--;
}

/* Binds pid to s, then lets its old set go: its walks always have a set. */
static void proc_bind(struct process_regions *p, uint32_t pid, struct proc *pr,
		      struct region_set *s, uint64_t space)
{
	struct region_set *old = pr->set;
	int err;

	s->procs++;
	pr->set = s;
	pr->space = space;
	err = p->sink.bind(p->sink.ctx, pid, s->id, space);
	if (err) {
		pr_debug("pid %u: not bound to set %u: %s", pid, s->id, strerror(-err));
		p->stats.binds_refused++;
		/* Not left on its old set, which may be freed and its id reused. */
		p->sink.unbind(p->sink.ctx, pid);
	}
	set_put(p, old);
}

void process_regions__free(struct process_regions *p)
{
	size_t pos = 0;
	uint64_t pid, v;
	struct proc *pr;

	if (!p)
		return;
	while (p->procs && u64map__next(p->procs, &pos, &pid, &v)) {
		pr = (struct proc *)(uintptr_t)v;
		p->sink.unbind(p->sink.ctx, (uint32_t)pid);
		set_put(p, pr->set);
		free(pr);
	}
	u64map__free(p->procs);
	free(p->free_ids);
	free(p);
}

int process_regions__snapshot(struct process_regions *p, uint32_t pid, uint64_t space,
			      const struct proc_maps *maps)
{
	struct proc *pr = proc_of(p, pid);
	struct region_set *s;
	const struct proc_map *m;
	struct region r;
	size_t i;
	int err;

	err = set_new(p, &s);
	for (i = 0; !err && i < proc_maps__count(maps); i++) {
		m = proc_maps__get(maps, i);
		if (!is_code(m))
			continue;
		err = set_reserve(s, 2);
		if (!err)
			err = region_make(p, s, pid, m, &r);
		/* Through the cutting insert: the maps do not overlap, but nothing here needs it.
		 */
		if (!err)
			set_replace(p, s, m->start, m->end, &r);
	}
	if (!err && !pr)
		err = proc_new(p, pid, &pr);
	if (err) {
		set_free(p, s);
		if (pr)
			proc_forget(p, pid, pr);
		return err;
	}
	proc_bind(p, pid, pr, s, space);
	return 0;
}

int process_regions__fork(struct process_regions *p, uint32_t ppid, uint32_t pid)
{
	struct proc *parent = proc_of(p, ppid), *child = proc_of(p, pid);
	int err;

	/* A thread: it has its process's set already. */
	if (pid == ppid)
		return 0;
	if (!parent) {
		if (child)
			proc_forget(p, pid, child);
		return 0;
	}
	if (!child) {
		err = proc_new(p, pid, &child);
		if (err) {
			/* The kernel bound it to the parent's set, which may be freed and reused.
			 */
			p->sink.unbind(p->sink.ctx, pid);
			return err;
		}
	}
	/* The old set goes after the new one is held: it may be the same. */
	parent->set->procs++;
	set_put(p, child->set);
	child->set = parent->set;
	child->space = parent->space;
	return 0;
}

int process_regions__exec(struct process_regions *p, uint32_t pid, uint64_t space)
{
	struct proc *pr = proc_of(p, pid);
	struct region_set *s;
	int err;

	if (!pr)
		return 0;
	err = set_new(p, &s);
	if (err) {
		proc_forget(p, pid, pr);
		return err;
	}
	proc_bind(p, pid, pr, s, space);
	return 0;
}

int process_regions__mmap(struct process_regions *p, uint32_t pid, const struct proc_map *m)
{
	struct proc *pr = proc_of(p, pid);
	struct region r, *fresh = NULL;
	struct region_set *s;
	int err;

	if (!pr)
		return 0;
	if (m->end <= m->start)
		return -EINVAL;
	if (is_code(m))
		fresh = &r;
	else if (!set_overlaps(pr->set, m->start, m->end))
		return 0;
	s = pr->set;
	if (s->procs > 1)
		err = set_copy(p, s, &s);
	else
		err = set_reserve(s, 2);
	if (!err && fresh)
		err = region_make(p, s, pid, m, fresh);
	if (err) {
		if (s != pr->set)
			set_free(p, s);
		return err;
	}
	set_replace(p, s, m->start, m->end, fresh);
	if (s != pr->set)
		proc_bind(p, pid, pr, s, pr->space);
	return 0;
}

void process_regions__exit(struct process_regions *p, uint32_t pid)
{
	struct proc *pr = proc_of(p, pid);

	if (pr)
		proc_forget(p, pid, pr);
}

/* r waited for its table, now built or not: its table, if it can have it. */
static void region_ready(struct process_regions *p, struct region *r)
{
	struct table_ref *t = r->ref;
	int err;

	r->pending = false;
	p->stats.regions_pending--;
	if (!t->ct->table) {
		p->stats.regions_no_table++;
		return;
	}
	if (!t->tabled) {
		err = p->sink.load_table(p->sink.ctx, t->ct);
		if (err) {
			p->stats.regions_table_full++;
			return;
		}
		p->stats.tables_loaded++;
	}
	r->table = true;
	t->tabled++;
}

/* The regions of s that waited for t, again in the sink with what they have now. */
static void set_ready(struct process_regions *p, struct region_set *s, const struct table_ref *t)
{
	size_t i, kept = 0;
	struct region r;

	for (i = 0; i < s->n; i++) {
		r = s->arr[i];
		if (r.ref == t && r.pending) {
			p->sink.remove_region(p->sink.ctx, s->id, r.start, r.end);
			region_ready(p, &r);
			/* Refused: it leaves the set, as a region the sink never took. */
			if (!region_add(p, s, &r))
				continue;
		}
		s->arr[kept++] = r;
	}
	p->stats.regions -= s->n - kept;
	s->n = kept;
}

void process_regions__table_ready(struct process_regions *p, struct cached_table *ct)
{
	const struct table_ref *t = ct->user;
	size_t pos = 0;
	uint64_t pid, v;

	/* Every set has a process: a set shared by several is seen again, with nothing left. */
	while (t && u64map__next(p->procs, &pos, &pid, &v))
		set_ready(p, ((struct proc *)(uintptr_t)v)->set, t);
}

bool process_regions__tracked(const struct process_regions *p, uint32_t pid)
{
	return proc_of(p, pid) != NULL;
}

uint32_t process_regions__set(const struct process_regions *p, uint32_t pid)
{
	struct proc *pr = proc_of(p, pid);

	return pr ? pr->set->id : 0;
}

void process_regions__stats(const struct process_regions *p, struct process_regions_stats *out)
{
	*out = p->stats;
}

int process_regions__find(const struct process_regions *p, uint32_t pid, uint64_t pc,
			  struct region_code *out)
{
	struct proc *pr = proc_of(p, pid);
	const struct region *r;
	ptrdiff_t i;

	if (!pr)
		return -ESRCH;
	i = range_find(pr->set->arr, pr->set->n, sizeof(*pr->set->arr), pc);
	if (i < 0)
		return -ENOENT;
	r = &pr->set->arr[i];
	out->table = r->ref ? r->ref->ct->table : NULL;
	out->bias = r->bias;
	out->pending = r->pending;
	return 0;
}
