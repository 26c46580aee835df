// SPDX-License-Identifier: MIT
/*
 * The BPF unwinder on a live process: glibc's qsort (no frame pointers)
 * sampled at 999 Hz, its tables and regions loaded as a profile would,
 * each sample's stack walked in the kernel. 99% of the walks must reach
 * _start through main (those inside the sort through qsort_r and glibc's
 * internal msort_with_tmp frames, which have no frame pointers). Needs root
 * (BPF, perf events).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "proc_tables.h"
#include "sample/unwinder.h"
#include "test.h"

#define MAX_WALKS 400

struct walks {
	struct cprof_walk w[MAX_WALKS];
	int n;
};

static void on_walk(void *ctx, int cpu, void *data, __u32 size)
{
	struct walks *ws = ctx;

	(void)cpu;
	if (size >= sizeof(struct cprof_walk) && ws->n < MAX_WALKS)
		memcpy(&ws->w[ws->n++], data, sizeof(struct cprof_walk));
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int open_sampling(pid_t pid)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 999,
		.freq = 1,
		.disabled = 1,
	};

	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void load_regions(struct unwinder *u, struct proc_tables *p, pid_t pid)
{
	struct unwinder_table t;
	size_t i;

	CHECK_INT(unwinder__sync_rules(u, p->rules), ==, 0);
	for (i = 0; i < p->nfiles; i++) {
		CHECK_INT(unwinder__add_table(u, p->files[i].table, &t), ==, 0);
		CHECK_INT(unwinder__add_region(u, pid, p->files[i].map->start, p->files[i].map->end,
					       p->files[i].bias, &t),
			  ==, 0);
	}
}

static bool has(struct proc_tables *p, const struct cprof_walk *w, const char *name)
{
	uint32_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(proc_tables__name(p, w->ips[i], i == 0), name))
			return true;
	return false;
}

static bool complete(struct proc_tables *p, const struct cprof_walk *w)
{
	return w->stop == CPROF_STOP_NONE && w->n && has(p, w, "main") &&
	       !strcmp(proc_tables__name(p, w->ips[w->n - 1], w->n == 1), "_start");
}

static void show(struct proc_tables *p, const struct cprof_walk *w)
{
	uint32_t i;

	fprintf(stderr, "  stop %u, %u frames:", w->stop, w->n);
	for (i = 0; i < w->n && i < 24; i++)
		fprintf(stderr, " %s", proc_tables__name(p, w->ips[i], i == 0));
	fprintf(stderr, "\n");
}

TEST(unwinder_bpf_walks_glibc_qsort_to_start)
{
	static struct walks ws;
	const char *fixture = test_build_fixture("libc_qsort");
	struct unwinder_opts o = {.max_rows = 1 << 20, .max_pages = 1 << 14};
	struct perf_buffer *pb = NULL;
	struct proc_tables p = {0};
	struct unwinder *u = NULL;
	uint64_t until;
	int i, fd, ok = 0, shown = 0, in_qsort = 0;
	pid_t pid;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	libbpf_set_print(quiet);
	if (unwinder__new(&o, &u) == -EOPNOTSUPP)
		SKIP("this kernel cannot load the unwinder (it needs Linux 5.5)");
	CHECK(u != NULL);
	pid = proc_tables__run(&p, fixture, "3");
	load_regions(u, &p, pid);
	pb = perf_buffer__new(unwinder__events_fd(u), 64, on_walk, NULL, &ws, NULL);
	CHECK(pb != NULL);
	fd = open_sampling(pid);
	CHECK(fd >= 0);
	CHECK_INT(ioctl(fd, PERF_EVENT_IOC_SET_BPF, unwinder__sample_fd(u)), ==, 0);
	CHECK_INT(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), ==, 0);
	for (until = clock__mono_ns() + 1000000000ull; clock__mono_ns() < until;)
		perf_buffer__poll(pb, 100);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_buffer__consume(pb);
	close(fd);
	proc_tables__kill(pid);

	for (i = 0; i < ws.n; i++) {
		in_qsort += has(&p, &ws.w[i], "qsort_r");
		if (complete(&p, &ws.w[i]))
			ok++;
		else if (shown++ < 5)
			show(&p, &ws.w[i]);
	}
	fprintf(stderr, "  %d of %d walks complete\n", ok, ws.n);
	perf_buffer__free(pb);
	proc_tables__free(&p);
	unwinder__free(u);
	CHECK(ws.n >= 100);
	CHECK(ok >= ws.n * 99 / 100);
	/* Most of the time goes to glibc's sort, under qsort_r. */
	CHECK(in_qsort >= ws.n / 2);
}
