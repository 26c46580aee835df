// SPDX-License-Identifier: MIT
/*
 * Large maps created on threads before libbpf loads the object: the kernel
 * work of creating a preallocated map (allocating, zeroing and charging
 * every entry to the memory cgroup) is the longest part of cprof's startup,
 * and independent maps can be created on different CPUs at the same time.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/parallel_maps.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

struct job {
	struct bpf_map *map;
	size_t bytes;
	int fd; /* the map, or a negative errno; -1 until created */
};

struct parallel_maps {
	struct job *jobs;
	int njobs;
	int next; /* the next job to take, shared by all threads */
	pthread_t *threads;
	int nthreads;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/*
 * The system call itself, not libbpf's bpf_map_create(), which first probes
 * kernel features (memory cgroup accounting, map names) on the calling
 * thread, in the way of the largest map; libbpf probes them again for its
 * own load anyway. Names are older than the Linux 4.18 cprof needs, and the
 * memlock limit of kernels before 5.11 is raised by session.c. No BTF: the
 * kernel needs none for these maps, and the object's is not loaded yet.
 */
static void create(struct job *j)
{
	const struct bpf_map *m = j->map;
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = bpf_map__type(m);
	attr.key_size = bpf_map__key_size(m);
	attr.value_size = bpf_map__value_size(m);
	attr.max_entries = bpf_map__max_entries(m);
	attr.map_flags = bpf_map__map_flags(m);
	attr.numa_node = bpf_map__numa_node(m);
	attr.map_extra = bpf_map__map_extra(m);
	strncpy(attr.map_name, bpf_map__name(m), sizeof(attr.map_name) - 1);
	fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	j->fd = fd < 0 ? -errno : fd;
}

static void run_jobs(struct parallel_maps *pm)
{
	int i;

	while ((i = __atomic_fetch_add(&pm->next, 1, __ATOMIC_RELAXED)) < pm->njobs)
		create(&pm->jobs[i]);
}

static void *worker(void *arg)
{
	run_jobs(arg);
	return NULL;
}

static void join_all(struct parallel_maps *pm)
{
	int i;

	for (i = 0; i < pm->nthreads; i++)
		pthread_join(pm->threads[i], NULL);
	pm->nthreads = 0;
}

int parallel_maps__start(struct bpf_map *const *maps, int n, struct parallel_maps **out)
{
	struct parallel_maps *pm;
	sigset_t all, old;
	long ncpus;
	int i, err;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->jobs = calloc(n ? n : 1, sizeof(*pm->jobs));
	pm->threads = calloc(n ? n : 1, sizeof(*pm->threads));
	if (!pm->jobs || !pm->threads) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		pm->jobs[pm->njobs++] = (struct job){
			.map = maps[i],
			.bytes = (size_t)bpf_map__max_entries(maps[i]) *
				 (bpf_map__key_size(maps[i]) + bpf_map__value_size(maps[i])),
			.fd = -1,
		};
	/* Largest first: the longest creations start at once, the short ones fill in. */
	qsort(pm->jobs, pm->njobs, sizeof(*pm->jobs), by_size_desc);

	/*
	 * The caller's thread is the last of one per CPU: more would share CPUs
	 * and slow down the largest map, which decides when all are done.
	 */
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* Signals stay with the caller's thread, whose handlers expect them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < pm->njobs && i < ncpus - 1; i++) {
		if (pthread_create(&pm->threads[i], NULL, worker, pm))
			break; /* fewer threads: finish() creates what is left */
		pm->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pr_debug("creating %d maps on %d threads", pm->njobs, pm->nthreads);
	*out = pm;
	return 0;
cleanup:
	parallel_maps__free(pm);
	return err;
}

int parallel_maps__finish(struct parallel_maps *pm)
{
	int i, err = 0;

	run_jobs(pm);
	join_all(pm);
	for (i = 0; i < pm->njobs && !err; i++)
		if (pm->jobs[i].fd < 0) {
			err = pm->jobs[i].fd;
			pr_debug("cannot create map '%s': %s", bpf_map__name(pm->jobs[i].map),
				 strerror(-err));
		}
	/* libbpf keeps a duplicate; ours are closed by parallel_maps__free. */
	for (i = 0; i < pm->njobs && !err; i++) {
		err = bpf_map__reuse_fd(pm->jobs[i].map, pm->jobs[i].fd);
		if (err)
			pr_debug("libbpf did not take map '%s': %s", bpf_map__name(pm->jobs[i].map),
				 strerror(-err));
	}
	return err;
}

void parallel_maps__free(struct parallel_maps *pm)
{
	int i;

	if (!pm)
		return;
	join_all(pm);
	for (i = 0; i < pm->njobs; i++)
		if (pm->jobs[i].fd >= 0)
			close(pm->jobs[i].fd);
	free(pm->jobs);
	free(pm->threads);
	free(pm);
}
