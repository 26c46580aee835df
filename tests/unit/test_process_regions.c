// SPDX-License-Identifier: MIT
/*
 * Region sets against a fake sink that holds what the BPF maps would and
 * checks every call: no region overlaps another of its set, a region's
 * table is loaded before it and unloaded after the last, removals name
 * regions it has.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc_tables.h"
#include "test.h"
#include "unwind/process_regions.h"

#define FAKE_MAX 1024

struct fake_region {
	uint32_t set;
	uint64_t start, end, bias;
	const struct cached_table *ct;
};

struct fake_bind {
	uint32_t pid, set;
	uint64_t space;
};

struct fake {
	struct fake_region regions[FAKE_MAX];
	size_t nregions;
	const struct cached_table *tables[FAKE_MAX];
	size_t ntables;
	struct fake_bind binds[FAKE_MAX];
	size_t nbinds;
	unsigned int loads, unloads, bind_calls, unbind_calls, adds, removes;
	int load_err, add_err, bind_err; /* what the next calls return */
};

static size_t fake_table(const struct fake *f, const struct cached_table *ct)
{
	size_t i;

	for (i = 0; i < f->ntables && f->tables[i] != ct; i++)
		;
	return i;
}

static int fake_open(void *ctx, uint32_t pid, const struct proc_map *m)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);

	(void)ctx;
	(void)pid;
	return fd < 0 ? -errno : fd;
}

static int fake_load(void *ctx, const struct cached_table *ct)
{
	struct fake *f = ctx;

	f->loads++;
	CHECK(ct->table != NULL);
	CHECK(fake_table(f, ct) == f->ntables);
	if (f->load_err)
		return f->load_err;
	f->tables[f->ntables++] = ct;
	return 0;
}

static void fake_unload(void *ctx, const struct cached_table *ct)
{
	struct fake *f = ctx;
	size_t i = fake_table(f, ct);

	f->unloads++;
	CHECK(i < f->ntables);
	f->tables[i] = f->tables[--f->ntables];
	for (i = 0; i < f->nregions; i++)
		CHECK(f->regions[i].ct != ct);
}

static int fake_add(void *ctx, uint32_t set, uint64_t start, uint64_t end, uint64_t bias,
		    const struct cached_table *ct)
{
	struct fake *f = ctx;
	size_t i;

	f->adds++;
	CHECK(set > 0 && start < end);
	/* A pending table is in no map: the region says it waits for one. */
	CHECK(!ct || ct->pending || fake_table(f, ct) < f->ntables);
	for (i = 0; i < f->nregions; i++)
		CHECK(f->regions[i].set != set || f->regions[i].end <= start ||
		      f->regions[i].start >= end);
	if (f->add_err)
		return f->add_err;
	CHECK(f->nregions < FAKE_MAX);
	f->regions[f->nregions++] = (struct fake_region){set, start, end, bias, ct};
	return 0;
}

static void fake_remove(void *ctx, uint32_t set, uint64_t start, uint64_t end)
{
	struct fake *f = ctx;
	size_t i;

	f->removes++;
	for (i = 0; i < f->nregions; i++)
		if (f->regions[i].set == set && f->regions[i].start == start &&
		    f->regions[i].end == end)
			break;
	CHECK(i < f->nregions);
	f->regions[i] = f->regions[--f->nregions];
}

static struct fake_bind *fake_bound(struct fake *f, uint32_t pid)
{
	size_t i;

	for (i = 0; i < f->nbinds; i++)
		if (f->binds[i].pid == pid)
			return &f->binds[i];
	return NULL;
}

static void fake_unbind(void *ctx, uint32_t pid)
{
	struct fake *f = ctx;
	struct fake_bind *b = fake_bound(f, pid);

	f->unbind_calls++;
	if (b)
		*b = f->binds[--f->nbinds];
}

static int fake_bind(void *ctx, uint32_t pid, uint32_t set, uint64_t space)
{
	struct fake *f = ctx;

	f->bind_calls++;
	CHECK(set > 0);
	if (f->bind_err)
		return f->bind_err;
	fake_unbind(ctx, pid);
	f->unbind_calls--;
	f->binds[f->nbinds++] = (struct fake_bind){pid, set, space};
	return 0;
}

/* What the kernel's fork hook does before user space hears of the fork. */
static void fake_kernel_fork(struct fake *f, uint32_t ppid, uint32_t pid)
{
	struct fake_bind *b = fake_bound(f, ppid);

	fake_unbind(f, pid);
	f->unbind_calls--;
	if (b)
		f->binds[f->nbinds++] = (struct fake_bind){pid, b->set, b->space};
}

static uint32_t bound_set(struct fake *f, uint32_t pid)
{
	struct fake_bind *b = fake_bound(f, pid);

	return b ? b->set : 0;
}

static const struct fake_region *fake_find(const struct fake *f, uint32_t set, uint64_t start)
{
	size_t i;

	for (i = 0; i < f->nregions; i++)
		if (f->regions[i].set == set && f->regions[i].start == start)
			return &f->regions[i];
	return NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct fake_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* "start-end" of set's regions in the sink, ":T" after those with a table, ":P" pending. */
static const char *layout(const struct fake *f, uint32_t set)
{
	static struct fake_region r[FAKE_MAX];
	static char buf[4096];
	size_t i, n = 0, off = 0;

	for (i = 0; i < f->nregions; i++)
		if (f->regions[i].set == set)
			r[n++] = f->regions[i];
	qsort(r, n, sizeof(*r), by_start);
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%llx-%llx%s", i ? " " : "",
				(unsigned long long)r[i].start, (unsigned long long)r[i].end,
				!r[i].ct	   ? ""
				: r[i].ct->pending ? ":P"
						   : ":T");
	return buf;
}

/* The model and the sink agree. */
static void check_sync(struct process_regions *p, struct fake *f)
{
	struct process_regions_stats st;

	process_regions__stats(p, &st);
	CHECK_U64(st.regions, ==, f->nregions);
	CHECK_U64(st.tables_loaded, ==, f->ntables);
}

static void check_empty(struct fake *f)
{
	CHECK_U64(f->nregions, ==, 0);
	CHECK_U64(f->ntables, ==, 0);
	CHECK_U64(f->nbinds, ==, 0);
}

struct env {
	struct fake f;
	struct table_cache *cache;
	struct process_regions *p;
};

static void env_new(struct env *e, uint32_t max_sets)
{
	const struct region_sink sink = {
		.ctx = &e->f,
		.open_file = fake_open,
		.load_table = fake_load,
		.unload_table = fake_unload,
		.add_region = fake_add,
		.remove_region = fake_remove,
		.bind = fake_bind,
		.unbind = fake_unbind,
	};

	memset(&e->f, 0, sizeof(e->f));
	CHECK_INT(table_cache__new(NULL, &e->cache), ==, 0);
	CHECK_INT(process_regions__new(e->cache, &sink, max_sets, &e->p), ==, 0);
}

/* Frees p: the sink must be left empty, and every table given back to the cache. */
static void env_free(struct env *e)
{
	struct table_cache_stats st;

	process_regions__free(e->p);
	check_empty(&e->f);
	table_cache__stats(e->cache, &st);
	CHECK_U64(st.tables, ==, 0);
	table_cache__free(e->cache);
}

/* libc's executable segment, as a loader maps it. */
struct libc_file {
	const char *path;
	struct stat st;
	uint64_t offset; /* of the mapping: the segment's, page-aligned */
	uint64_t size;
	uint64_t delta; /* p_offset - p_vaddr */
};

static void libc_file(struct libc_file *l)
{
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int fd;

	l->path = test_system_libc();
	CHECK_INT(stat(l->path, &l->st), ==, 0);
	fd = open(l->path, O_RDONLY);
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf && !elf_getphdrnum(elf, &n));
	l->size = 0;
	for (i = 0; i < n && !l->size; i++) {
		CHECK(gelf_getphdr(elf, (int)i, &ph));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		l->offset = ph.p_offset & ~0xfffull;
		l->size = (ph.p_offset + ph.p_filesz - l->offset + 0xfff) & ~0xfffull;
		l->delta = ph.p_offset - ph.p_vaddr;
	}
	CHECK(l->size);
	elf_end(elf);
	close(fd);
}

static struct proc_map file_map(const char *path, const struct stat *st, uint64_t start,
				uint64_t end, uint64_t offset)
{
	return (struct proc_map){
		.start = start,
		.end = end,
		.offset = offset,
		.inode = st ? st->st_ino : 0,
		.dev_major = st ? major(st->st_dev) : 0,
		.dev_minor = st ? minor(st->st_dev) : 0,
		.perms = PROC_MAP_READ | PROC_MAP_EXEC | PROC_MAP_PRIVATE,
		.kind = PROC_MAP_FILE,
		.path = path,
	};
}

static struct proc_map libc_map(const struct libc_file *l, uint64_t start)
{
	return file_map(l->path, &l->st, start, start + l->size, l->offset);
}

static uint64_t libc_bias(const struct libc_file *l, uint64_t start)
{
	return start - l->offset + l->delta;
}

/* "start-end:T", the layout of libc's region at start. */
static const char *libc_span(const struct libc_file *l, uint64_t start)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%llx-%llx:T", (unsigned long long)start,
		 (unsigned long long)(start + l->size));
	return buf;
}

/* set's layout is first, then libc's region at lib. */
static void check_layout(const struct fake *f, uint32_t set, const char *first,
			 const struct libc_file *l, uint64_t lib)
{
	char want[512];

	snprintf(want, sizeof(want), "%s %s", first, libc_span(l, lib));
	CHECK_STR(layout(f, set), want);
}

static struct proc_map anon_map(uint64_t start, uint64_t end, unsigned int perms)
{
	return (struct proc_map){
		.start = start,
		.end = end,
		.perms = perms | PROC_MAP_READ | PROC_MAP_PRIVATE,
		.kind = PROC_MAP_ANON,
	};
}

#define CODE PROC_MAP_EXEC
#define DATA PROC_MAP_WRITE

/* A snapshot of pid made of an anonymous code region at each [starts[i], starts[i] + 0x10000). */
static void snapshot_anon(struct env *e, uint32_t pid, uint64_t space, const uint64_t *starts,
			  size_t n)
{
	char text[1024];
	struct proc_maps *maps;
	size_t i, off = 0;

	for (i = 0; i < n; i++)
		off += snprintf(text + off, sizeof(text) - off, "%llx-%llx r-xp 00000000 00:00 0\n",
				(unsigned long long)starts[i],
				(unsigned long long)starts[i] + 0x10000);
	CHECK_INT(proc_maps__parse(text, off, &maps), ==, 0);
	CHECK_INT(process_regions__snapshot(e->p, pid, space, maps), ==, 0);
	proc_maps__free(maps);
}

static void mmap_ok(struct env *e, uint32_t pid, struct proc_map m)
{
	CHECK_INT(process_regions__mmap(e->p, pid, &m), ==, 0);
	check_sync(e->p, &e->f);
}

/* An env with a process pid of anonymous code at starts and libc at lib; returns its set. */
static uint32_t env_with_libc(struct env *e, struct libc_file *l, uint32_t pid, uint64_t space,
			      const uint64_t *starts, size_t n, uint64_t lib)
{
	libc_file(l);
	env_new(e, 65536);
	snapshot_anon(e, pid, space, starts, n);
	mmap_ok(e, pid, libc_map(l, lib));
	return bound_set(&e->f, pid);
}

TEST(process_regions_snapshot_of_a_live_process)
{
	struct process_regions_stats st;
	const struct fake_region *r;
	struct proc_tables pt = {0};
	uint64_t inodes[PROC_TABLES_MAX_FILES];
	size_t i, j, nfiles = 0;
	bool libc = false;
	struct env e;
	pid_t pid;

	if (access("/bin/sleep", X_OK))
		SKIP("no /bin/sleep");
	pid = proc_tables__run(&pt, "/bin/sleep", "5");
	proc_tables__kill(pid);
	env_new(&e, 65536);
	CHECK_INT(process_regions__snapshot(e.p, pid, 42, pt.maps), ==, 0);
	check_sync(e.p, &e.f);
	CHECK(process_regions__tracked(e.p, pid));
	CHECK_INT(bound_set(&e.f, pid), ==, process_regions__set(e.p, pid));
	CHECK_U64(fake_bound(&e.f, pid)->space, ==, 42);

	/* Each file's region has its table, at the bias the walk tests use (the vDSO aside). */
	for (i = 0; i < pt.nfiles; i++) {
		if (pt.files[i].map->kind != PROC_MAP_FILE)
			continue;
		r = fake_find(&e.f, bound_set(&e.f, pid), pt.files[i].map->start);
		CHECK(r && r->ct && r->ct->table);
		CHECK_U64(r->bias, ==, pt.files[i].bias);
		libc |= strstr(pt.files[i].map->path, "libc.so") != NULL;
		for (j = 0; j < nfiles && inodes[j] != pt.files[i].map->inode; j++)
			;
		if (j == nfiles)
			inodes[nfiles++] = pt.files[i].map->inode;
	}
	CHECK(libc);
	/* One load a file; the vDSO without a table; no [vsyscall]. */
	CHECK_U64(e.f.loads, ==, nfiles);
	for (i = 0; i < proc_maps__count(pt.maps); i++) {
		const struct proc_map *m = proc_maps__get(pt.maps, i);

		r = fake_find(&e.f, bound_set(&e.f, pid), m->start);
		if (m->kind == PROC_MAP_SPECIAL && !strcmp(m->path, "[vdso]"))
			CHECK(r && !r->ct);
		if (m->kind == PROC_MAP_SPECIAL && !strcmp(m->path, "[vsyscall]"))
			CHECK(!r);
		if (!(m->perms & PROC_MAP_EXEC))
			CHECK(!r);
	}

	/* Another process of the same files: its own set, no load. */
	CHECK_INT(process_regions__snapshot(e.p, pid + 1000000, 43, pt.maps), ==, 0);
	CHECK_U64(e.f.loads, ==, nfiles);
	CHECK(bound_set(&e.f, pid + 1000000) != bound_set(&e.f, pid));
	CHECK_STR(layout(&e.f, bound_set(&e.f, pid)), layout(&e.f, bound_set(&e.f, pid + 1000000)));
	check_sync(e.p, &e.f);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.sets, ==, 2);
	CHECK_U64(st.processes, ==, 2);
	CHECK_U64(st.tables_loaded, ==, nfiles);

	process_regions__exit(e.p, pid);
	CHECK_U64(e.f.unloads, ==, 0);
	process_regions__exit(e.p, pid + 1000000);
	CHECK_U64(e.f.unloads, ==, nfiles);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.sets, ==, 0);
	CHECK_U64(st.processes, ==, 0);
	check_empty(&e.f);
	env_free(&e);
	proc_tables__free(&pt);
}

TEST(process_regions_fork_shares_until_mmap)
{
	const uint64_t starts[] = {0x10000, 0x30000};
	struct process_regions_stats st;
	struct libc_file l;
	struct env e;
	uint32_t parent_set, child_set;
	unsigned int binds;

	parent_set = env_with_libc(&e, &l, 10, 77, starts, 2, 0x7f0000000000);
	check_layout(&e.f, parent_set, "10000-20000 30000-40000", &l, 0x7f0000000000);
	binds = e.f.bind_calls;

	/* The kernel binds the child; the module only takes note. */
	fake_kernel_fork(&e.f, 10, 11);
	CHECK_INT(process_regions__fork(e.p, 10, 11), ==, 0);
	CHECK_INT(process_regions__set(e.p, 11), ==, parent_set);
	CHECK_INT(e.f.bind_calls, ==, binds);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.sets, ==, 1);

	/* The child's first mapping: a copy, bound with the parent's space. */
	mmap_ok(&e, 11, anon_map(0x50000, 0x60000, CODE));
	child_set = process_regions__set(e.p, 11);
	CHECK(child_set != parent_set);
	CHECK_INT(bound_set(&e.f, 11), ==, child_set);
	CHECK_U64(fake_bound(&e.f, 11)->space, ==, 77);
	CHECK_INT(bound_set(&e.f, 10), ==, parent_set);
	check_layout(&e.f, parent_set, "10000-20000 30000-40000", &l, 0x7f0000000000);
	check_layout(&e.f, child_set, "10000-20000 30000-40000 50000-60000", &l, 0x7f0000000000);
	CHECK_U64(e.f.loads, ==, 1);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.copies, ==, 1);
	CHECK_U64(st.sets, ==, 2);

	/* Each alone now: no more copies. */
	mmap_ok(&e, 11, anon_map(0x60000, 0x70000, CODE));
	mmap_ok(&e, 10, anon_map(0x60000, 0x70000, CODE));
	process_regions__stats(e.p, &st);
	CHECK_U64(st.copies, ==, 1);
	CHECK_INT(process_regions__set(e.p, 10), ==, parent_set);
	CHECK_INT(process_regions__set(e.p, 11), ==, child_set);

	/* A grandchild, and the parent exits: the set lives on with the child. */
	fake_kernel_fork(&e.f, 11, 12);
	CHECK_INT(process_regions__fork(e.p, 11, 12), ==, 0);
	process_regions__exit(e.p, 10);
	CHECK_STR(layout(&e.f, parent_set), "");
	process_regions__exit(e.p, 11);
	CHECK(layout(&e.f, child_set)[0] != '\0');
	CHECK_U64(e.f.ntables, ==, 1);
	process_regions__exit(e.p, 12);
	check_empty(&e.f);
	env_free(&e);
}

TEST(process_regions_mmap_cuts)
{
	const uint64_t starts[] = {0x10000, 0x30000, 0x50000};
	const uint64_t lib = 0x7f0000000000;
	const struct fake_region *r;
	unsigned int adds, removes;
	struct libc_file l;
	struct env e;
	uint32_t set;

	set = env_with_libc(&e, &l, 20, 0, starts, 3, lib);

	/* Inside one: split around the new one. */
	mmap_ok(&e, 20, anon_map(0x14000, 0x18000, CODE));
	check_layout(&e.f, set, "10000-14000 14000-18000 18000-20000 30000-40000 50000-60000", &l,
		     lib);
	/* Over a right end, then a left end. */
	mmap_ok(&e, 20, anon_map(0x1c000, 0x24000, CODE));
	mmap_ok(&e, 20, anon_map(0x2c000, 0x34000, CODE));
	check_layout(&e.f, set,
		     "10000-14000 14000-18000 18000-1c000 1c000-24000 2c000-34000 34000-40000 "
		     "50000-60000",
		     &l, lib);
	/* Over several, whole and in part. */
	mmap_ok(&e, 20, anon_map(0x16000, 0x30000, CODE));
	check_layout(&e.f, set,
		     "10000-14000 14000-16000 16000-30000 30000-34000 34000-40000 50000-60000", &l,
		     lib);

	/* Data over code: cut, nothing added. Data elsewhere: not a call. */
	mmap_ok(&e, 20, anon_map(0x33000, 0x58000, DATA));
	check_layout(&e.f, set, "10000-14000 14000-16000 16000-30000 30000-33000 58000-60000", &l,
		     lib);
	adds = e.f.adds;
	removes = e.f.removes;
	mmap_ok(&e, 20, anon_map(0x40000, 0x50000, DATA));
	CHECK_INT(e.f.adds, ==, adds);
	CHECK_INT(e.f.removes, ==, removes);

	/* The library's pieces keep its table and bias; the table stays loaded throughout. */
	mmap_ok(&e, 20, anon_map(lib + 0x1000, lib + 0x2000, DATA));
	r = fake_find(&e.f, set, lib);
	CHECK(r && r->end == lib + 0x1000 && r->ct);
	CHECK_U64(r->bias, ==, libc_bias(&l, lib));
	r = fake_find(&e.f, set, lib + 0x2000);
	CHECK(r && r->ct);
	CHECK_U64(r->bias, ==, libc_bias(&l, lib));
	CHECK_U64(e.f.loads, ==, 1);
	CHECK_U64(e.f.unloads, ==, 0);
	/* Covered whole: the table goes with its last region. */
	mmap_ok(&e, 20, anon_map(lib, lib + l.size, DATA));
	CHECK_U64(e.f.unloads, ==, 1);
	CHECK_U64(e.f.ntables, ==, 0);
	/* The library again over a leftover: loaded again, bias of the new place. */
	mmap_ok(&e, 20, libc_map(&l, 0x12000));
	r = fake_find(&e.f, set, 0x12000);
	CHECK(r && r->ct);
	CHECK_U64(r->bias, ==, libc_bias(&l, 0x12000));
	CHECK_U64(e.f.loads, ==, 2);
	/* Bad mappings. */
	{
		struct proc_map bad = anon_map(0x5000, 0x5000, CODE);

		CHECK_INT(process_regions__mmap(e.p, 20, &bad), ==, -EINVAL);
	}
	check_sync(e.p, &e.f);
	env_free(&e);
}

TEST(process_regions_exec_and_untracked)
{
	const uint64_t starts[] = {0x10000};
	struct process_regions_stats st;
	struct proc_map code = anon_map(0x90000, 0xa0000, CODE);
	struct libc_file l;
	struct env e;
	uint32_t set;

	set = env_with_libc(&e, &l, 30, 1, starts, 1, 0x7f0000000000);
	fake_kernel_fork(&e.f, 30, 31);
	CHECK_INT(process_regions__fork(e.p, 30, 31), ==, 0);

	/* The child runs exec: its own empty set; the parent's stays. */
	CHECK_INT(process_regions__exec(e.p, 31, 5), ==, 0);
	CHECK(bound_set(&e.f, 31) != set);
	CHECK_U64(fake_bound(&e.f, 31)->space, ==, 5);
	CHECK_STR(layout(&e.f, bound_set(&e.f, 31)), "");
	CHECK(layout(&e.f, set)[0] != '\0');
	/* Then the parent: its old set goes, with the library. */
	CHECK_INT(process_regions__exec(e.p, 30, 6), ==, 0);
	CHECK_STR(layout(&e.f, set), "");
	CHECK_U64(e.f.ntables, ==, 0);
	CHECK_U64(e.f.nregions, ==, 0);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.sets, ==, 2);
	mmap_ok(&e, 30, code);
	CHECK_STR(layout(&e.f, bound_set(&e.f, 30)), "90000-a0000");

	/* An untracked process: nothing, nor for its children. */
	{
		unsigned int calls = e.f.adds + e.f.bind_calls + e.f.unbind_calls;

		CHECK_INT(process_regions__exec(e.p, 99, 1), ==, 0);
		CHECK_INT(process_regions__mmap(e.p, 99, &code), ==, 0);
		CHECK_INT(process_regions__fork(e.p, 99, 100), ==, 0);
		process_regions__exit(e.p, 99);
		CHECK(!process_regions__tracked(e.p, 99));
		CHECK(!process_regions__tracked(e.p, 100));
		CHECK_INT(e.f.adds + e.f.bind_calls + e.f.unbind_calls, ==, calls);
	}
	/* A tracked pid reused by an untracked parent's child: forgotten, and unbound. */
	CHECK_INT(process_regions__fork(e.p, 99, 31), ==, 0);
	CHECK(!process_regions__tracked(e.p, 31));
	CHECK_INT(bound_set(&e.f, 31), ==, 0);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.processes, ==, 1);
	CHECK_U64(st.sets, ==, 1);
	env_free(&e);
}

TEST(process_regions_tables_that_cannot_go_in)
{
	const char *not_elf = test_write_tmp("not_elf", "hello\n", 6);
	struct process_regions_stats st;
	const struct fake_region *r;
	struct stat not_elf_st;
	struct libc_file l;
	struct env e;
	uint32_t set;

	libc_file(&l);
	CHECK_INT(stat(not_elf, &not_elf_st), ==, 0);
	env_new(&e, 65536);
	snapshot_anon(&e, 40, 0, NULL, 0);
	set = bound_set(&e.f, 40);
	CHECK(set);

	/* The maps are full: the region goes in without its table. */
	e.f.load_err = -ENOSPC;
	mmap_ok(&e, 40, libc_map(&l, 0x7f0000000000));
	r = fake_find(&e.f, set, 0x7f0000000000);
	CHECK(r && !r->ct);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_table_full, ==, 1);
	CHECK_U64(st.tables_loaded, ==, 0);
	/* Room again: the next mapping of the file loads it; the first stays without. */
	e.f.load_err = 0;
	mmap_ok(&e, 40, libc_map(&l, 0x7e0000000000));
	CHECK(fake_find(&e.f, set, 0x7e0000000000)->ct);
	CHECK(!fake_find(&e.f, set, 0x7f0000000000)->ct);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.tables_loaded, ==, 1);
	CHECK_U64(st.regions_table_full, ==, 1);

	/* A file that cannot be opened, one without CFI. */
	mmap_ok(&e, 40, file_map("/nonexistent/lib.so", NULL, 0x10000, 0x20000, 0));
	mmap_ok(&e, 40, file_map(not_elf, &not_elf_st, 0x30000, 0x40000, 0));
	CHECK(!fake_find(&e.f, set, 0x10000)->ct);
	CHECK(!fake_find(&e.f, set, 0x30000)->ct);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_not_opened, ==, 1);
	CHECK_U64(st.regions_no_table, ==, 1);
	CHECK_U64(st.regions_made, ==, 4);

	/* The sink refuses a region: left out of the model too. */
	e.f.add_err = -E2BIG;
	mmap_ok(&e, 40, anon_map(0x50000, 0x60000, CODE));
	e.f.add_err = 0;
	CHECK(!fake_find(&e.f, set, 0x50000));
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_refused, ==, 1);
	/* A region cut whose pieces are refused: gone, its table with it if last. */
	e.f.add_err = -E2BIG;
	mmap_ok(&e, 40, anon_map(0x7e0000001000, 0x7e0000002000, DATA));
	e.f.add_err = 0;
	CHECK(!fake_find(&e.f, set, 0x7e0000000000));
	CHECK_U64(e.f.ntables, ==, 0);

	/* A refused bind leaves the process unbound, not on a set that may go. */
	fake_kernel_fork(&e.f, 40, 41);
	CHECK_INT(process_regions__fork(e.p, 40, 41), ==, 0);
	e.f.bind_err = -ENOMEM;
	mmap_ok(&e, 41, anon_map(0x90000, 0xa0000, CODE));
	e.f.bind_err = 0;
	CHECK_INT(bound_set(&e.f, 41), ==, 0);
	CHECK(process_regions__tracked(e.p, 41));
	process_regions__stats(e.p, &st);
	CHECK_U64(st.binds_refused, ==, 1);
	env_free(&e);
}

TEST(process_regions_set_ids_run_out)
{
	const uint64_t starts[] = {0x10000};
	struct process_regions_stats st;
	struct proc_map code = anon_map(0x90000, 0xa0000, CODE);
	struct proc_maps *maps;
	struct env e;
	uint32_t set1, set2;

	env_new(&e, 2);
	snapshot_anon(&e, 1, 0, starts, 1);
	snapshot_anon(&e, 2, 0, starts, 1);
	set1 = bound_set(&e.f, 1);
	set2 = bound_set(&e.f, 2);
	CHECK(set1 && set2 && set1 != set2);

	CHECK_INT(proc_maps__parse("10000-20000 r-xp 00000000 00:00 0\n", 34, &maps), ==, 0);
	CHECK_INT(process_regions__snapshot(e.p, 3, 0, maps), ==, -ENOSPC);
	CHECK(!process_regions__tracked(e.p, 3));
	CHECK_INT(bound_set(&e.f, 3), ==, 0);
	check_sync(e.p, &e.f);

	/* A copy on write that cannot be: the mapping is not applied, the child still shares. */
	fake_kernel_fork(&e.f, 1, 4);
	CHECK_INT(process_regions__fork(e.p, 1, 4), ==, 0);
	CHECK_INT(process_regions__mmap(e.p, 4, &code), ==, -ENOSPC);
	CHECK_INT(process_regions__set(e.p, 4), ==, set1);
	CHECK_STR(layout(&e.f, set1), "10000-20000");
	/* An exec that cannot have a set: the process is let go. */
	CHECK_INT(process_regions__exec(e.p, 4, 0), ==, -ENOSPC);
	CHECK(!process_regions__tracked(e.p, 4));
	CHECK_INT(bound_set(&e.f, 4), ==, 0);
	check_sync(e.p, &e.f);

	/* A freed id serves again. */
	process_regions__exit(e.p, 2);
	CHECK_INT(process_regions__snapshot(e.p, 3, 0, maps), ==, 0);
	CHECK_INT(bound_set(&e.f, 3), ==, set2);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.sets, ==, 2);
	CHECK_U64(st.processes, ==, 2);
	proc_maps__free(maps);
	/* Freed with processes still tracked: the sink is emptied. */
	env_free(&e);
}

/* Freed ids serve again oldest first, past the ring's first size (it grows as ids are freed). */
TEST(process_regions_set_ids_reused_oldest_first)
{
	const uint64_t starts[] = {0x10000};
	uint32_t sets[100], i;
	struct env e;

	env_new(&e, 100);
	for (i = 0; i < 100; i++) {
		snapshot_anon(&e, 1 + i, 0, starts, 1);
		sets[i] = bound_set(&e.f, 1 + i);
		CHECK(sets[i]);
	}
	for (i = 0; i < 70; i++)
		process_regions__exit(e.p, 1 + i);
	for (i = 0; i < 70; i++) {
		snapshot_anon(&e, 201 + i, 0, starts, 1);
		CHECK_INT(bound_set(&e.f, 201 + i), ==, sets[i]);
	}
	check_sync(e.p, &e.f);
	env_free(&e);
}

/* Waits for the cache's builds (up to 20 s each), and gives the tables to the regions. */
static void take_tables(struct env *e)
{
	struct pollfd pfd = {.fd = table_cache__fd(e->cache), .events = POLLIN};
	struct table_cache_stats st;
	struct cached_table *ct;
	int waits = 200;

	for (;;) {
		while ((ct = table_cache__take(e->cache)))
			process_regions__table_ready(e->p, ct);
		table_cache__stats(e->cache, &st);
		if (!st.pending || !waits--)
			break;
		poll(&pfd, 1, 100);
	}
	CHECK_U64(st.pending, ==, 0);
	check_sync(e->p, &e->f);
}

/* "start-end:P" of libc's region at start, pending. */
static const char *libc_pending(const struct libc_file *l, uint64_t start)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%llx-%llx:P", (unsigned long long)start,
		 (unsigned long long)(start + l->size));
	return buf;
}

/*
 * Tables built off the loop: a region waits for its file's table, the walk
 * stopping there (pending), in every set that has it, copies and pieces
 * too; when the build ends they all get it, a file without CFI none, and a
 * sink without room leaves them without.
 */
TEST(process_regions_regions_wait_for_their_table)
{
	const char *not_elf = test_write_tmp("not_elf_wait", "hello\n", 6);
	const uint64_t lib = 0x7f0000000000, lib2 = 0x7e0000000000;
	struct process_regions_stats st;
	const struct fake_region *r;
	struct region_code rc;
	struct stat not_elf_st;
	struct libc_file l;
	char want[256];
	struct env e;
	uint32_t set, set41;

	libc_file(&l);
	CHECK_INT(stat(not_elf, &not_elf_st), ==, 0);
	env_new(&e, 65536);
	CHECK_INT(table_cache__load_off_loop(e.cache, 0), ==, 0);
	snapshot_anon(&e, 40, 0, NULL, 0);
	set = bound_set(&e.f, 40);
	mmap_ok(&e, 40, libc_map(&l, lib));
	CHECK_STR(layout(&e.f, set), libc_pending(&l, lib));
	CHECK_U64(e.f.loads, ==, 0);
	CHECK_INT(process_regions__find(e.p, 40, lib + 0x100, &rc), ==, 0);
	CHECK(rc.pending && !rc.table);
	CHECK_U64(rc.bias, ==, libc_bias(&l, lib));

	/* A child that maps more: a copy with the pending region; a cut keeps both pieces waiting.
	 */
	fake_kernel_fork(&e.f, 40, 41);
	CHECK_INT(process_regions__fork(e.p, 40, 41), ==, 0);
	mmap_ok(&e, 41, libc_map(&l, lib2));
	set41 = bound_set(&e.f, 41);
	CHECK(set41 != set);
	mmap_ok(&e, 40, anon_map(lib + 0x1000, lib + 0x2000, DATA));
	mmap_ok(&e, 40, file_map(not_elf, &not_elf_st, 0x30000, 0x40000, 0));
	/* Four waiting (libc in each set, its two pieces in 40's); a file not ELF has no bias. */
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_pending, ==, 4);
	CHECK_U64(st.regions_waited, ==, 2);
	CHECK_U64(st.regions_no_table, ==, 1);
	CHECK_U64(st.tables_loaded, ==, 0);

	take_tables(&e);
	/* One load for libc's four regions. */
	CHECK_U64(e.f.loads, ==, 1);
	snprintf(want, sizeof(want), "30000-40000 %llx-%llx:T %llx-%llx:T", (unsigned long long)lib,
		 (unsigned long long)lib + 0x1000, (unsigned long long)lib + 0x2000,
		 (unsigned long long)lib + l.size);
	CHECK_STR(layout(&e.f, set), want);
	snprintf(want, sizeof(want), "%llx-%llx:T", (unsigned long long)lib2,
		 (unsigned long long)lib2 + l.size);
	check_layout(&e.f, set41, want, &l, lib);
	r = fake_find(&e.f, set41, lib);
	CHECK(r && r->bias == libc_bias(&l, lib));
	CHECK_INT(process_regions__find(e.p, 41, lib2 + 0x100, &rc), ==, 0);
	CHECK(!rc.pending && rc.table);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_pending, ==, 0);
	CHECK_U64(st.regions_no_table, ==, 1);
	CHECK_U64(st.tables_loaded, ==, 1);
	env_free(&e);
}

TEST(process_regions_ready_tables_that_cannot_go_in)
{
	const uint64_t lib = 0x7f0000000000, lib2 = 0x7e0000000000;
	struct process_regions_stats st;
	struct libc_file l;
	char want[64];
	struct env e;
	uint32_t set;

	libc_file(&l);
	env_new(&e, 65536);
	CHECK_INT(table_cache__load_off_loop(e.cache, 0), ==, 0);
	snapshot_anon(&e, 40, 0, NULL, 0);
	set = bound_set(&e.f, 40);
	mmap_ok(&e, 40, libc_map(&l, lib));
	/* The maps are full when the table comes: the region stays, without it. */
	e.f.load_err = -ENOSPC;
	take_tables(&e);
	e.f.load_err = 0;
	snprintf(want, sizeof(want), "%llx-%llx", (unsigned long long)lib,
		 (unsigned long long)lib + l.size);
	CHECK_STR(layout(&e.f, set), want);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_table_full, ==, 1);
	CHECK_U64(st.regions_pending, ==, 0);
	CHECK_U64(st.tables_loaded, ==, 0);
	env_free(&e);

	/* The sink refuses the region that comes back with its table: it leaves the set. */
	env_new(&e, 65536);
	CHECK_INT(table_cache__load_off_loop(e.cache, 0), ==, 0);
	snapshot_anon(&e, 40, 0, NULL, 0);
	set = bound_set(&e.f, 40);
	mmap_ok(&e, 40, libc_map(&l, lib2));
	e.f.add_err = -E2BIG;
	take_tables(&e);
	e.f.add_err = 0;
	CHECK_STR(layout(&e.f, set), "");
	CHECK_U64(e.f.ntables, ==, 0);
	process_regions__stats(e.p, &st);
	CHECK_U64(st.regions_refused, ==, 1);
	CHECK_U64(st.regions, ==, 0);
	env_free(&e);
}

/* A process gone before its table: the build ends unseen, the sink left empty. */
TEST(process_regions_exit_before_the_table)
{
	struct libc_file l;
	struct env e;

	libc_file(&l);
	env_new(&e, 65536);
	CHECK_INT(table_cache__load_off_loop(e.cache, 0), ==, 0);
	snapshot_anon(&e, 40, 0, NULL, 0);
	mmap_ok(&e, 40, libc_map(&l, 0x7f0000000000));
	process_regions__exit(e.p, 40);
	check_empty(&e.f);
	take_tables(&e);
	CHECK_U64(e.f.loads, ==, 0);
	env_free(&e);
}
