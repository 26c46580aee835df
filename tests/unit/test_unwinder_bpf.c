/*
 * What the verifier spends on the walk programs, each alone. Then the BPF
 * unwinder on a live process: glibc's qsort (no frame pointers) sampled at
 * 999 Hz by the sampler with the unwinder's object, its tables
 * and regions loaded as a profile would, each sample's stack walked in the
 * kernel, kept in the in-kernel aggregation and drained (across a flip of
 * the map sets). 99% of the samples must reach _start through main (those
 * inside the sort through qsort_r and glibc's internal msort_with_tmp
 * frames, which have no frame pointers). Needs root (BPF, perf events).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "proc_tables.h"
#include "sample/sampler.h"
#include "sample/unwinder.h"
#include "test.h"
#include "unwind/kernel_btf.h"
#include "unwind/stack_walk.h"
#include "unwind/unwind_rules.h"
#include "unwind_abi.h"
#include "unwinder.skel.h"

#define MAX_WALKS 4000

struct walk {
	struct cprof_ustack u;
	uint64_t count;
};

struct walks {
	pid_t pid;
	struct walk w[MAX_WALKS];
	int n;
	uint64_t samples, walked, unkept, other;
};

static void on_entry(void *ctx, const struct sampler_entry *e)
{
	struct walks *ws = ctx;
	struct walk *w;

	if ((pid_t)e->pid != ws->pid) {
		ws->other += e->count;
		return;
	}
	ws->samples += e->count;
	if (!e->user_walked)
		return;
	ws->walked += e->count;
	if (ws->n == MAX_WALKS) {
		ws->unkept += e->count;
		return;
	}
	w = &ws->w[ws->n++];
	w->count = e->count;
	w->u.n = e->user_n;
	w->u.stop = e->user_stop;
	memcpy(w->u.ips, e->user_ips, e->user_n * sizeof(*e->user_ips));
}

static void ignore(void *ctx, const struct sampler_entry *e)
{
	(void)ctx;
	(void)e;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The process's regions as region set 7, its tables each loaded once. */
static void load_regions(struct unwinder *u, struct proc_tables *p, pid_t pid, uint64_t space)
{
	struct unwinder_table t;
	size_t i;

	CHECK_INT(unwinder__sync_rules(u, p->rules), ==, 0);
	for (i = 0; i < p->nfiles; i++) {
		CHECK_INT(unwinder__add_table(u, p->files[i].table, &t), ==, 0);
		CHECK_INT(unwinder__add_region(u, 7, p->files[i].map->start, p->files[i].map->end,
					       p->files[i].bias, &t),
			  ==, 0);
	}
	CHECK_INT(unwinder__bind(u, (uint32_t)pid, 7, space), ==, 0);
}

static bool has(struct proc_tables *p, const struct cprof_ustack *w, const char *name)
{
	uint32_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(proc_tables__name(p, w->ips[i], i == 0), name))
			return true;
	return false;
}

static bool complete(struct proc_tables *p, const struct cprof_ustack *w)
{
	return w->stop == CPROF_STOP_NONE && w->n && has(p, w, "main") &&
	       !strcmp(proc_tables__name(p, w->ips[w->n - 1], w->n == 1), "_start");
}

static void show(struct proc_tables *p, const struct cprof_ustack *w)
{
	uint32_t i;

	fprintf(stderr, "  stop %u, %u frames:", w->stop, w->n);
	for (i = 0; i < w->n && i < 24; i++)
		fprintf(stderr, " %s", proc_tables__name(p, w->ips[i], i == 0));
	fprintf(stderr, "\n");
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000}, NULL);
}

/*
 * The unwinder's maps and a sampler that walks with them; NULL, or why
 * this machine cannot (the test is then skipped).
 */
static const char *open_walking(const struct unwinder_opts *uo, struct sampler_opts *so,
				struct unwinder **u, struct sampler **s)
{
	if (unwinder__new(uo, u))
		return "cannot create the unwinder's maps";
	so->unwinder = *u;
	CHECK_INT(sampler__new(so, s), ==, 0);
	if (sampler__unwind_status(*s)) {
		sampler__free(*s);
		unwinder__free(*u);
		return "this kernel cannot load the unwinder (it needs Linux 5.5)";
	}
	return NULL;
}

/*
 * glibc's qsort sampled and walked in the kernel. grow: the row map starts
 * with one chunk, and the tables go in once the walk is loaded, so that
 * the map grows under it and the walk is loaded again with the new one.
 */
static void walk_qsort(bool grow)
{
	static struct walks ws;
	const char *fixture = test_build_fixture("libc_qsort");
	struct unwinder_opts uo = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct sampler_opts so = {.hz = 999, .filter_pids = true};
	struct unwinder_stats us;
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	uint64_t ok = 0, in_qsort = 0;
	const char *why;
	int i, shown = 0;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	memset(&ws, 0, sizeof(ws));
	libbpf_set_print(quiet);
	uo.first_rows = grow ? CPROF_UNWIND_CHUNK : 0;
	why = open_walking(&uo, &so, &u, &s);
	if (why)
		SKIP("%s", why);
	ws.pid = proc_tables__run(&p, fixture, "3");
	if (!grow)
		load_regions(u, &p, ws.pid, sampler__space_of(s, (uint32_t)ws.pid));
	CHECK_INT(sampler__add_target(s, (uint32_t)ws.pid), ==, 0);
	CHECK_INT(sampler__start(s), ==, 0);
	if (grow) {
		/* The walk loads on a thread meanwhile; its first load is waited for. */
		sleep_ms(300);
		load_regions(u, &p, ws.pid, sampler__space_of(s, (uint32_t)ws.pid));
		unwinder__stats(u, &us);
		CHECK(us.row_chunks > 1);
		/* What was sampled before the tables went in is not walked here. */
		CHECK_INT(sampler__drain(s, ignore, NULL), ==, 0);
	}
	/* Two drains while sampling: the second instance and a flip of the map sets. */
	sleep_ms(400);
	CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	sleep_ms(400);
	CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	sleep_ms(400);
	sampler__stop(s);
	CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	proc_tables__kill(ws.pid);

	for (i = 0; i < ws.n; i++) {
		in_qsort += has(&p, &ws.w[i].u, "qsort_r") ? ws.w[i].count : 0;
		if (complete(&p, &ws.w[i].u))
			ok += ws.w[i].count;
		else if (shown++ < 5)
			show(&p, &ws.w[i].u);
	}
	fprintf(stderr, "  %llu of %llu samples walked, %llu complete\n",
		(unsigned long long)ws.walked, (unsigned long long)ws.samples,
		(unsigned long long)ok);
	sampler__free(s);
	proc_tables__free(&p);
	unwinder__free(u);
	CHECK_INT(ws.other, ==, 0);
	CHECK(ws.samples >= 300);
	CHECK(ws.walked >= ws.samples * 95 / 100); /* CPU-bound: in user code */
	CHECK(ok >= (ws.walked - ws.unkept) * 99 / 100);
	CHECK(ws.unkept < ws.walked / 10);
	/* Most of the time goes to glibc's sort, under qsort_r. */
	CHECK(in_qsort >= ws.walked / 2);
}

/*
 * The walks remember the regions they found (region_memo), sample after
 * sample: once the process's regions are removed, no walk may still use
 * them. Its samples then stop at their first frame, in no mapping (the
 * process is over a second old, so they are not stack copies).
 */
TEST(unwinder_bpf_forgets_removed_regions)
{
	static struct walks ws;
	const char *fixture = test_build_fixture("libc_qsort");
	struct unwinder_opts uo = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct sampler_opts so = {.hz = 999, .filter_pids = true};
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	uint64_t unmapped = 0;
	const char *why;
	size_t i;
	int k;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	memset(&ws, 0, sizeof(ws));
	libbpf_set_print(quiet);
	why = open_walking(&uo, &so, &u, &s);
	if (why)
		SKIP("%s", why);
	ws.pid = proc_tables__run(&p, fixture, "3");
	load_regions(u, &p, ws.pid, sampler__space_of(s, (uint32_t)ws.pid));
	CHECK_INT(sampler__add_target(s, (uint32_t)ws.pid), ==, 0);
	CHECK_INT(sampler__start(s), ==, 0);
	sleep_ms(1200);
	for (i = 0; i < p.nfiles; i++)
		unwinder__remove_region(u, 7, p.files[i].map->start, p.files[i].map->end);
	CHECK_INT(sampler__drain(s, ignore, NULL), ==, 0);
	for (k = 0; k < 2; k++) {
		sleep_ms(300);
		CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	}
	sampler__stop(s);
	CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	proc_tables__kill(ws.pid);
	for (i = 0; i < (size_t)ws.n; i++) {
		if (ws.w[i].u.stop == CPROF_STOP_NO_MAPPING && ws.w[i].u.n == 1)
			unmapped += ws.w[i].count;
		else if (i < 5)
			show(&p, &ws.w[i].u);
	}
	fprintf(stderr, "  after the removal: %llu of %llu walked samples in no mapping\n",
		(unsigned long long)unmapped, (unsigned long long)ws.walked);
	sampler__free(s);
	proc_tables__free(&p);
	unwinder__free(u);
	CHECK(ws.walked >= 200);
	CHECK_INT(unmapped, ==, ws.walked - ws.unkept);
}

TEST(unwinder_bpf_walks_glibc_qsort_to_start)
{
	walk_qsort(false);
}

TEST(unwinder_bpf_row_map_grows_under_the_walk)
{
	walk_qsort(true);
}

/*
 * The process's tables, each found by its file only (the walk by file): no
 * region set, no binding, as for a process user space has not followed yet.
 * The executable segments from the file's program headers, as table_cache
 * reads them.
 */
static void load_files(struct unwinder *u, struct proc_tables *p)
{
	struct exec_seg segs[TABLE_EXEC_SEGS];
	struct unwinder_table t;
	struct file_id id;
	GElf_Phdr ph;
	uint32_t n;
	size_t i, k, nph;

	CHECK_INT(unwinder__sync_rules(u, p->rules), ==, 0);
	for (i = 0; i < p->nfiles; i++) {
		const struct proc_map *m = p->files[i].map;

		CHECK_INT(unwinder__add_table(u, p->files[i].table, &t), ==, 0);
		if (!m->inode) /* the vDSO: no file the kernel names */
			continue;
		CHECK_INT(elf_getphdrnum(p->files[i].elf, &nph), ==, 0);
		for (k = 0, n = 0; k < nph && n < TABLE_EXEC_SEGS; k++)
			if (gelf_getphdr(p->files[i].elf, (int)k, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				segs[n++] =
					(struct exec_seg){ph.p_offset, ph.p_offset + ph.p_filesz,
							  ph.p_vaddr - ph.p_offset};
		id = (struct file_id){m->dev_major, m->dev_minor, m->inode, 0};
		CHECK_INT(unwinder__add_file(u, &id, segs, n, &t), ==, 0);
	}
}

/*
 * A process that has no region set is walked in the kernel by the files it
 * maps (bpf_find_vma, Linux 5.17+), whole, not sent as stack copies: a
 * PIE program (libc_qsort, under glibc's qsort) and a non-PIE one
 * (known_tree_nopie), whose table addresses are not file offsets.
 */
static void walk_by_file(const char *name)
{
	static struct walks ws;
	const char *fixture = test_build_fixture(name);
	struct unwinder_opts uo = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct sampler_opts so = {.hz = 999, .filter_pids = true};
	uint64_t ok = 0, st0[CPROF_STAT_MAX], st[CPROF_STAT_MAX];
	struct kernel_btf_facts k;
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	const char *why;
	int i, shown = 0;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) != 1)
		SKIP("this kernel has no bpf_find_vma (it needs Linux 5.17)");
	if (kernel_btf__read_vmlinux(&k) || !k.files.found)
		SKIP("no kernel BTF to find a mapping's file with");
	memset(&ws, 0, sizeof(ws));
	libbpf_set_print(quiet);
	why = open_walking(&uo, &so, &u, &s);
	if (why)
		SKIP("%s", why);
	CHECK_INT(unwinder__set_file_offs(u, &k.files), ==, 0);
	ws.pid = proc_tables__run(&p, fixture, "3");
	load_files(u, &p);
	CHECK_INT(sampler__add_target(s, (uint32_t)ws.pid), ==, 0);
	CHECK_INT(sampler__start(s), ==, 0);
	/* The walk loads on a thread: what was sampled before is copied, not walked here. */
	sleep_ms(300);
	CHECK_INT(sampler__drain(s, ignore, NULL), ==, 0);
	CHECK_INT(sampler__read_stats(s, st0), ==, 0);
	sleep_ms(1200);
	sampler__stop(s);
	CHECK_INT(sampler__drain(s, on_entry, &ws), ==, 0);
	CHECK_INT(sampler__read_stats(s, st), ==, 0);
	proc_tables__kill(ws.pid);
	for (i = 0; i < ws.n; i++) {
		if (complete(&p, &ws.w[i].u))
			ok += ws.w[i].count;
		else if (shown++ < 5)
			show(&p, &ws.w[i].u);
	}
	fprintf(stderr, "  %s by file: %llu of %llu samples walked, %llu complete; %llu copied\n",
		name, (unsigned long long)ws.walked, (unsigned long long)ws.samples,
		(unsigned long long)ok,
		(unsigned long long)(st[CPROF_STAT_COPIES] - st0[CPROF_STAT_COPIES]));
	/* In the kernel, not from copies (which this test would not walk). */
	CHECK(st[CPROF_STAT_COPIES] - st0[CPROF_STAT_COPIES] <= ws.samples / 20);
	sampler__free(s);
	proc_tables__free(&p);
	unwinder__free(u);
	CHECK(ws.samples >= 200); /* 1,200 at most: the machine may be busy */
	CHECK(ws.walked >= ws.samples * 95 / 100);
	CHECK(ok >= (ws.walked - ws.unkept) * 95 / 100);
}

TEST(unwinder_bpf_walks_by_file_pie)
{
	walk_by_file("libc_qsort");
}

TEST(unwinder_bpf_walks_by_file_nopie)
{
	walk_by_file("known_tree_nopie");
}

/* The head start's samples of one process, walked in user space as cprof walks them. */
struct head {
	pid_t pid;
	uint64_t before; /* only the head start samples before this */
	struct proc_tables *p;
	struct stack_walk w;
	int n, complete, later, shown;
};

static void on_head_copy(void *ctx, const void *data, uint32_t size)
{
	static struct cprof_copy c;
	struct head *h = ctx;
	struct stack_snapshot snap;
	struct walk_result res;
	struct cprof_ustack u = {0};

	/* A copy the program sent may come padded: its own size is in stack_bytes. */
	CHECK(size >= offsetof(struct cprof_copy, stack));
	memcpy(&c, data, size < sizeof(c) ? size : sizeof(c));
	CHECK(c.stack_bytes <= sizeof(c.stack));
	if ((pid_t)c.pid != h->pid)
		return;
	if (c.time >= h->before) {
		h->later++;
		return;
	}
	snap = (struct stack_snapshot){.pc = c.pc,
				       .sp = c.sp,
				       .fp = c.fp,
				       .lr = c.lr,
				       .stack = c.stack,
				       .stack_size = c.stack_bytes};
	stack_walk__run(&h->w, &snap, &res);
	h->n++;
	u.n = res.n;
	u.stop = res.stop;
	memcpy(u.ips, res.ips, res.n * sizeof(*res.ips));
	if (complete(h->p, &u))
		h->complete++;
	else if (h->shown++ < 5)
		show(h->p, &u);
}

static void no_process(void *ctx, uint32_t pid)
{
	(void)ctx;
	(void)pid;
}

/*
 * The head start: sampling events opened before the sampler exists, whose
 * samples of glibc's qsort (taken before any BPF program) reach user space
 * as stack copies, are counted as the program counts its own, and walk to
 * _start through main.
 */
TEST(sampler_head_start_samples_before_the_program)
{
	static struct head h;
	const char *fixture = test_build_fixture("libc_qsort");
	struct unwinder_opts uo = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct sampler_opts so = {.hz = 999, .on_copy = on_head_copy, .copy_ctx = &h};
	struct sampler_head_start hs;
	struct proc_tables p = {0};
	uint64_t st[CPROF_STAT_MAX];
	struct unwinder *u = NULL;
	struct sampler *s = NULL;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	libbpf_set_print(quiet);
	if (unwinder__new(&uo, &u))
		SKIP("cannot create the unwinder's maps");
	h.pid = proc_tables__run(&p, fixture, "3");
	h.p = &p;
	h.w = (struct stack_walk){unwind_rules__all(p.rules), unwind_rules__count(p.rules), ~0ull,
				  proc_tables__find, &p};
	CHECK_INT(sampler__open_head_start(999, &hs), ==, 0);
	sleep_ms(60);
	so.unwinder = u;
	so.head_start = &hs;
	CHECK_INT(sampler__new(&so, &s), ==, 0);
	CHECK_INT(hs.map_fd, ==, -1); /* taken over */
	if (sampler__unwind_status(s)) {
		sampler__free(s);
		unwinder__free(u);
		proc_tables__kill(h.pid);
		proc_tables__free(&p);
		SKIP("this kernel cannot load the unwinder (it needs Linux 5.5)");
	}
	h.before = clock__mono_ns();
	CHECK_INT(sampler__start(s), ==, 0);
	sleep_ms(200);
	sampler__consume(s, no_process, NULL, true);
	sampler__stop(s);
	sampler__consume(s, no_process, NULL, true);
	CHECK_INT(sampler__read_stats(s, st), ==, 0);
	proc_tables__kill(h.pid);
	fprintf(stderr, "  head start: %d samples of the fixture, %d complete; %d later copies\n",
		h.n, h.complete, h.later);
	CHECK(h.n >= 20);
	CHECK(h.complete >= h.n * 95 / 100);
	CHECK(sampler__head_start_first(s) > 0 && sampler__head_start_first(s) < h.before);
	CHECK(st[CPROF_STAT_TICKS] >= (uint64_t)h.n && st[CPROF_STAT_COPIES] >= (uint64_t)h.n);
	sampler__free(s);
	proc_tables__free(&p);
	unwinder__free(u);
}

/* The verifier's count of instructions it went through, from a log of level 4 (statistics). */
static long processed_insns(const char *log)
{
	const char *p = strstr(log, "processed ");
	long n;

	return p && sscanf(p, "processed %ld insns", &n) == 1 ? n : -1;
}

/* Loads the unwinder's object with only the program name, and returns its count (or -errno). */
static long verify_alone(const char *name, char *log, size_t size)
{
	struct unwinder_bpf *k = unwinder_bpf__open();
	struct bpf_program *p;
	long n;
	int err;

	if (!k)
		return -errno;
	log[0] = '\0';
	bpf_object__for_each_program(p, k->obj)
	{
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
		if (!strcmp(bpf_program__name(p), name)) {
			bpf_program__set_log_buf(p, log, size);
			bpf_program__set_log_level(p, 4);
		}
	}
	err = unwinder_bpf__load(k);
	n = err ? err : processed_insns(log);
	unwinder_bpf__destroy(k);
	return n;
}

/*
 * Each run pays the verifier for the walk: the counts stay well under
 * three times this kernel's (Linux 6.18: 1,915 and 29,422; the loop walk
 * 1,483 before it had a region memo, and 1,749 and 30,247 before the rule
 * memo was one per-CPU value; 4,190 and 36,272 before the row search had
 * a bpf_loop of its own). The row
 * search once let the verifier's precision marks spread and went through
 * 37,860 and 645,660 (see load_u32 in bpf/unwinder.bpf.c).
 */
TEST(unwinder_bpf_walks_verify_cheaply)
{
	static char log[1 << 16];
	long loop, unrolled, deep, file;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) != 1)
		SKIP("this kernel has no bpf_loop (it needs Linux 5.17)");
	libbpf_set_print(quiet);
	loop = verify_alone("cprof_walk_loop", log, sizeof(log));
	unrolled = verify_alone("cprof_walk", log, sizeof(log));
	deep = verify_alone("cprof_walk_deep", log, sizeof(log));
	fprintf(stderr,
		"  verified: the loop walk %ld instructions, the unrolled one %ld, the deep one "
		"%ld\n",
		loop, unrolled, deep);
	CHECK(loop > 0 && loop <= 5500);
	CHECK(unrolled > 0 && unrolled <= 95000);
	CHECK(deep > 0 && deep <= 95000 * CPROF_WALK_FRAMES_DEEP / CPROF_WALK_FRAMES);
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1) {
		file = verify_alone("cprof_walk_file", log, sizeof(log));
		fprintf(stderr, "  verified: the walk by file %ld instructions\n", file);
		CHECK(file > 0 && file <= 9000);
	}
}

/*
 * The unwinder makes its maps from unwind_abi.h's structs, not from the
 * object: it hands them to an object that declares them alike, and
 * refuses one that does not (here, a rule of another size).
 */
TEST(unwinder_shares_its_maps_only_with_their_shape)
{
	struct unwinder_opts uo = {.max_rows = 1 << 10, .max_pages = 1 << 10};
	struct unwinder_bpf *k = NULL;
	struct unwinder *u = NULL;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	libbpf_set_print(quiet);
	if (unwinder__new(&uo, &u))
		SKIP("cannot create the unwinder's maps");
	k = unwinder_bpf__open();
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(unwinder__share(u, k->obj), ==, 0);
		CHECK(bpf_map__fd(k->maps.unwind_regions) >= 0);
		unwinder_bpf__destroy(k);
	}
	k = unwinder_bpf__open();
	CHECK(k != NULL);
	if (k) {
		bpf_map__set_value_size(k->maps.unwind_rules, sizeof(struct cprof_unwind_rule) + 8);
		CHECK_INT(unwinder__share(u, k->obj), ==, -EINVAL);
		unwinder_bpf__destroy(k);
	}
	unwinder__free(u);
}

/*
 * Issue 38, item 3: the reasons only the BPF side gives, each from the code
 * that gives it, on a live process (test_stop_reasons.c has the others).
 */
static struct walks stop_ws;
static const char *stop_fixture;

/* The fixture running under a sampler that walks with the unwinder's maps; NULL, or why not. */
static const char *stop_case_start(const char *fixture, struct proc_tables *p, struct unwinder **u,
				   struct sampler **s)
{
	struct unwinder_opts uo = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct sampler_opts so = {.hz = 999, .filter_pids = true};
	const char *why;

	if (geteuid() != 0)
		return "needs root for BPF";
	stop_fixture = test_build_fixture(fixture);
	memset(&stop_ws, 0, sizeof(stop_ws));
	libbpf_set_print(quiet);
	why = open_walking(&uo, &so, u, s);
	if (!why)
		stop_ws.pid = proc_tables__run(p, stop_fixture, "5");
	return why;
}

static void start_sampling(struct sampler *s)
{
	CHECK_INT(sampler__add_target(s, (uint32_t)stop_ws.pid), ==, 0);
	CHECK_INT(sampler__start(s), ==, 0);
}

/*
 * Samples for a second, once the walk is loaded and what came before is
 * dropped; then the process ends.
 */
static void sample_a_second(struct sampler *s)
{
	sleep_ms(300);
	CHECK_INT(sampler__drain(s, ignore, NULL), ==, 0);
	sleep_ms(1000);
	sampler__stop(s);
	CHECK_INT(sampler__drain(s, on_entry, &stop_ws), ==, 0);
	proc_tables__kill(stop_ws.pid);
	fprintf(stderr, "  %llu of %llu samples walked\n", (unsigned long long)stop_ws.walked,
		(unsigned long long)stop_ws.samples);
}

/* A walk that stopped as wanted, in the reason's own words. */
static bool stopped(const struct cprof_ustack *w, uint32_t want, const char *words,
		    const char *token)
{
	return w->stop == want && !strcmp(stack_walk__stop_name(w->stop), words) &&
	       !strcmp(stack_walk__stop_token(w->stop), token);
}

typedef bool (*stop_fn)(struct proc_tables *p, const struct cprof_ustack *w);

/* The walked samples fn accepts; with shown, the first others are shown. */
static uint64_t count_stops(struct proc_tables *p, stop_fn fn, bool shown)
{
	uint64_t n = 0;
	int i, k = 0;

	for (i = 0; i < stop_ws.n; i++)
		if (fn(p, &stop_ws.w[i].u))
			n += stop_ws.w[i].count;
		else if (shown && k++ < 5)
			show(p, &stop_ws.w[i].u);
	return n;
}

/* Every walked sample is one fn accepts, and there were enough of them. */
static void check_stops(struct proc_tables *p, stop_fn fn)
{
	uint64_t n = count_stops(p, fn, true);

	CHECK(stop_ws.walked >= 100);
	CHECK_INT(n, ==, stop_ws.walked - stop_ws.unkept);
}

static void stop_case_end(struct proc_tables *p, struct unwinder *u, struct sampler *s)
{
	sampler__free(s);
	proc_tables__free(p);
	unwinder__free(u);
}

static bool read_in_the_loop(struct proc_tables *p, const struct cprof_ustack *w)
{
	return stopped(w, CPROF_STOP_READ, "stack memory unreadable", "read") && w->n == 1 &&
	       !strcmp(proc_tables__name(p, w->ips[0], true), "spin_unreadable");
}

/*
 * A hot loop whose stack pointer is at unmapped memory (the bad_stack
 * fixture): the return address its CFI points at cannot be read, and
 * every sample stops there, at its one frame.
 */
TEST(unwinder_bpf_stop_read_on_an_unmapped_stack)
{
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	const char *why;

#if !defined(__x86_64__)
	SKIP("the fixture's loop is x86_64 assembly");
#endif
	why = stop_case_start("bad_stack", &p, &u, &s);
	if (why)
		SKIP("%s", why);
	load_regions(u, &p, stop_ws.pid, sampler__space_of(s, (uint32_t)stop_ws.pid));
	start_sampling(s);
	sample_a_second(s);
	check_stops(&p, read_in_the_loop);
	stop_case_end(&p, u, s);
}

static bool is_exe(const struct proc_file *f)
{
	const char *a = f ? strrchr(f->map->path, '/') : NULL, *b = strrchr(stop_fixture, '/');

	return a && b && !strcmp(a, b);
}

/* Stopped at the program's frame, the first whose file has no table. */
static bool no_table_at_the_program(struct proc_tables *p, const struct cprof_ustack *w)
{
	return stopped(w, CPROF_STOP_NO_TABLE, "no unwind table yet", "no_table") && w->n &&
	       is_exe(proc_tables__file(p, w->ips[w->n - 1] - (w->n > 1)));
}

/* ...after frames in glibc's sort. */
static bool no_table_above_libc(struct proc_tables *p, const struct cprof_ustack *w)
{
	return no_table_at_the_program(p, w) && w->n > 1;
}

/*
 * A process bound to its regions but for its program's (libc_qsort's),
 * whose file the walk by file finds without a table: its walks stop there
 * for want of one. The process is over a second old, so they are not sent
 * as stack copies instead.
 */
TEST(unwinder_bpf_stop_no_table_for_a_file_not_loaded)
{
	struct kernel_btf_facts k;
	struct proc_tables p = {0};
	struct unwinder_table t;
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	const char *why;
	size_t i;

	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) != 1)
		SKIP("this kernel has no bpf_find_vma (it needs Linux 5.17)");
	if (kernel_btf__read_vmlinux(&k) || !k.files.found)
		SKIP("no kernel BTF to find a mapping's file with");
	why = stop_case_start("libc_qsort", &p, &u, &s);
	if (why)
		SKIP("%s", why);
	CHECK_INT(unwinder__set_file_offs(u, &k.files), ==, 0);
	CHECK_INT(unwinder__sync_rules(u, p.rules), ==, 0);
	for (i = 0; i < p.nfiles; i++) {
		if (is_exe(&p.files[i]))
			continue;
		CHECK_INT(unwinder__add_table(u, p.files[i].table, &t), ==, 0);
		CHECK_INT(unwinder__add_region(u, 7, p.files[i].map->start, p.files[i].map->end,
					       p.files[i].bias, &t),
			  ==, 0);
	}
	CHECK_INT(unwinder__bind(u, (uint32_t)stop_ws.pid, 7,
				 sampler__space_of(s, (uint32_t)stop_ws.pid)),
		  ==, 0);
	start_sampling(s);
	sleep_ms(1000);
	sample_a_second(s);
	check_stops(&p, no_table_at_the_program);
	/* Most of the time goes to glibc's sort, walked up to the program. */
	CHECK(count_stops(&p, no_table_above_libc, false) >= stop_ws.walked / 4);
	stop_case_end(&p, u, s);
}

/* The sampler's `events` map, which stack copies go through: a descriptor, or -1. */
static int events_map(void)
{
	struct bpf_map_info info;
	struct dirent *e;
	__u32 len;
	int fd, found = -1;
	DIR *d = opendir("/proc/self/fd");

	CHECK(d != NULL);
	while (d && found < 0 && (e = readdir(d))) {
		fd = atoi(e->d_name);
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (fd > 2 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && !strcmp(info.name, "events"))
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

#define RING_CPUS 1024

/* Rings of one page each, never read, in place of the sampler's on every online CPU. */
struct small_rings {
	int fd[RING_CPUS];
	void *mem[RING_CPUS];
	int n;
};

static void fill_rings(int map_fd, struct small_rings *r)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_type = PERF_SAMPLE_RAW,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int cpu, n = libbpf_num_possible_cpus();

	for (cpu = 0; cpu < n && cpu < RING_CPUS; cpu++) {
		r->fd[r->n] =
			(int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (r->fd[r->n] < 0) /* offline */
			continue;
		r->mem[r->n] =
			mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd[r->n], 0);
		CHECK(r->mem[r->n] != MAP_FAILED);
		CHECK_INT(bpf_map_update_elem(map_fd, &cpu, &r->fd[r->n], BPF_ANY), ==, 0);
		r->n++;
	}
}

static void free_rings(struct small_rings *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < r->n; i++) {
		if (r->mem[i] != MAP_FAILED)
			munmap(r->mem[i], 2 * page);
		close(r->fd[i]);
	}
}

/* Its leaf kept, in one of the process's files. */
static bool copy_lost_at_the_leaf(struct proc_tables *p, const struct cprof_ustack *w)
{
	return stopped(w, CPROF_STOP_COPY_LOST, "stack copy lost (ring full)", "copy_lost") &&
	       w->n == 1 && proc_tables__file(p, w->ips[0]);
}

/*
 * A process with no region set, whose samples go to user space as stack
 * copies, once the rings they go to are full (a page each, never read): the
 * copies are refused, and each sample keeps its leaf and says so.
 */
TEST(unwinder_bpf_stop_copy_lost_when_the_ring_is_full)
{
	static struct small_rings r;
	uint64_t st0[CPROF_STAT_MAX], st[CPROF_STAT_MAX];
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	struct sampler *s = NULL;
	const char *why = stop_case_start("libc_qsort", &p, &u, &s);
	int map_fd;

	if (why)
		SKIP("%s", why);
	memset(&r, 0, sizeof(r));
	map_fd = events_map();
	CHECK(map_fd >= 0);
	/* Copies go through while the rings are the sampler's. */
	start_sampling(s);
	sleep_ms(300);
	CHECK_INT(sampler__read_stats(s, st0), ==, 0);
	CHECK(st0[CPROF_STAT_COPIES] > 0);
	if (map_fd >= 0)
		fill_rings(map_fd, &r);
	CHECK_INT(sampler__read_stats(s, st0), ==, 0);
	sample_a_second(s);
	CHECK_INT(sampler__read_stats(s, st), ==, 0);
	check_stops(&p, copy_lost_at_the_leaf);
	fprintf(stderr, "  %llu copies sent to %d rings of a page, %llu lost\n",
		(unsigned long long)(st[CPROF_STAT_COPIES] - st0[CPROF_STAT_COPIES]), r.n,
		(unsigned long long)(st[CPROF_STAT_COPIES_LOST] - st0[CPROF_STAT_COPIES_LOST]));
	/* A copy is 1 to 17 KiB: a page holds a few at most. */
	CHECK(st[CPROF_STAT_COPIES] - st0[CPROF_STAT_COPIES] <= 4 * (uint64_t)r.n);
	CHECK(st[CPROF_STAT_COPIES_LOST] - st0[CPROF_STAT_COPIES_LOST] >= stop_ws.walked);
	stop_case_end(&p, u, s);
	free_rings(&r);
}
