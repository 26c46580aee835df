// SPDX-License-Identifier: MIT
/*
 * Unit tests of the startup pieces that need the kernel: maps created on
 * threads and adopted by libbpf (parallel_maps.c), and sampling handed from
 * one set of events to another (perf_attach.c). They skip without root.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/parallel_maps.h"
#include "sample/perf_attach.h"
#include "sampler.skel.h"
#include "test.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The embedded object with small maps, opened but not loaded. */
static struct sampler_bpf *open_small(void)
{
	struct sampler_bpf *k;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	libbpf_set_print(quiet);
	k = sampler_bpf__open();
	CHECK(k);
	bpf_map__set_max_entries(k->maps.stacks0, 64);
	bpf_map__set_max_entries(k->maps.stacks1, 64);
	bpf_map__set_max_entries(k->maps.counts0, 64);
	bpf_map__set_max_entries(k->maps.counts1, 64);
	bpf_map__set_max_entries(k->maps.targets, 64);
	return k;
}

static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_map_get_info_by_fd(fd, info, &len);
}

TEST(parallel_maps_are_adopted_by_libbpf)
{
	struct sampler_bpf *k = open_small();
	struct bpf_map *maps[] = {k->maps.stacks0, k->maps.counts0, k->maps.seen,
				  k->maps.stacks1, k->maps.counts1, k->maps.spaces};
	__u32 ids[6];
	struct bpf_map_info info;
	struct parallel_maps *pm;
	int i, n = sizeof(maps) / sizeof(maps[0]);

	/* More maps than threads on small machines: the caller's thread helps. */
	CHECK_INT(parallel_maps__start(maps, n, &pm), ==, 0);
	CHECK_INT(parallel_maps__finish(pm), ==, 0);
	for (i = 0; i < n; i++) {
		CHECK_INT(map_info(bpf_map__fd(maps[i]), &info), ==, 0);
		CHECK_INT(info.type, ==, bpf_map__type(maps[i]));
		CHECK_INT(info.max_entries, ==, bpf_map__max_entries(maps[i]));
		CHECK_INT(info.key_size, ==, bpf_map__key_size(maps[i]));
		CHECK_INT(info.value_size, ==, bpf_map__value_size(maps[i]));
		CHECK_STR(info.name, bpf_map__name(maps[i]));
		ids[i] = info.id;
	}
	parallel_maps__free(pm);
	/* libbpf keeps its duplicates, loads the programs against them, creates none of them. */
	CHECK_INT(sampler_bpf__load(k), ==, 0);
	for (i = 0; i < n; i++) {
		CHECK_INT(map_info(bpf_map__fd(maps[i]), &info), ==, 0);
		CHECK_INT(info.id, ==, ids[i]);
	}
	sampler_bpf__destroy(k);
}

TEST(parallel_maps_failure_hands_nothing_over)
{
	struct sampler_bpf *k = open_small();
	struct bpf_map *maps[] = {k->maps.stacks0, k->maps.counts0};
	struct bpf_map_info info;
	struct parallel_maps *pm;

	/* The kernel refuses a hash map with no entries. */
	bpf_map__set_max_entries(k->maps.counts0, 0);
	CHECK_INT(parallel_maps__start(maps, 2, &pm), ==, 0);
	CHECK_INT(parallel_maps__finish(pm), ==, -EINVAL);
	/* stacks0 was created, yet libbpf still holds its placeholder, not our map. */
	CHECK(map_info(bpf_map__fd(k->maps.stacks0), &info) != 0);
	parallel_maps__free(pm);
	sampler_bpf__destroy(k);
}

TEST(parallel_maps_free_without_finish)
{
	struct sampler_bpf *k = open_small();
	struct bpf_map *maps[] = {k->maps.stacks0, k->maps.stacks1, k->maps.seen};
	struct parallel_maps *pm;

	/* The threads are waited for, their maps closed: nothing leaks, nothing crashes. */
	CHECK_INT(parallel_maps__start(maps, 3, &pm), ==, 0);
	parallel_maps__free(pm);
	parallel_maps__free(NULL);
	sampler_bpf__destroy(k);
}

static __u64 run_count(struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	CHECK_INT(bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len), ==, 0);
	return info.run_cnt;
}

/* Waits up to a second for the program to run more than `than` times. */
static __u64 runs_beyond(struct bpf_program *prog, __u64 than)
{
	struct timespec ts = {0, 5000000};
	__u64 n = 0;
	int i;

	for (i = 0; i < 200 && (n = run_count(prog)) <= than; i++)
		nanosleep(&ts, NULL);
	return n;
}

/* Perf events this process holds open. */
static int perf_event_fds(void)
{
	char target[64];
	struct dirent *d;
	int n = 0;
	ssize_t len;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	CHECK(dir);
	while ((d = readdir(dir))) {
		len = readlinkat(dirfd(dir), d->d_name, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strcmp(target, "anon_inode:[perf_event]") == 0;
	}
	closedir(dir);
	return n;
}

TEST(perf_attach_hands_sampling_over)
{
	struct sampler_bpf *k = open_small();
	struct perf_attach *from, *to;
	__u64 before;
	int stats_fd, ncpus, fds;

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		SKIP("no BPF_ENABLE_STATS (Linux 5.8+): run counts do not move");
	CHECK_INT(sampler_bpf__load(k), ==, 0);
	CHECK_INT(perf_attach__open(999, true, &from), ==, 0);
	CHECK_INT(perf_attach__open(999, false, &to), ==, 0);
	CHECK(perf_attach__cpu_count(from) > 0);
	ncpus = perf_attach__cpu_count(from);
	CHECK_INT(perf_attach__cpu_count(to), ==, ncpus);
	CHECK_INT(perf_attach__attach(from, k->progs.cprof_sample), ==, 0);
	before = runs_beyond(k->progs.cprof_sample, 0);
	CHECK(before > 0);
	fds = perf_event_fds();
	CHECK_INT(perf_attach__handover(from, to, k->progs.cprof_sample), ==, 0);
	/* The old events are closed; sampling goes on through the new ones. */
	CHECK_INT(perf_event_fds(), ==, fds - ncpus);
	CHECK(runs_beyond(k->progs.cprof_sample, before) > before);
	perf_attach__free(from);
	before = run_count(k->progs.cprof_sample);
	CHECK(runs_beyond(k->progs.cprof_sample, before) > before);
	perf_attach__free(to);
	close(stats_fd);
	sampler_bpf__destroy(k);
}
