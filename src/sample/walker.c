// SPDX-License-Identifier: MIT
/*
 * The unwinder's in-kernel walk: a program of its own on the sampling
 * object's maps, loaded on a thread once sampling has begun (the verifier
 * takes tens to hundreds of milliseconds), and loaded again when the
 * unwinder moves its rows to a larger map.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/kernel_caps.h"
#include "sample/sampler_internal.h"
#include "sample/unwinder.h"
#include "unwinder.skel.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

/* Loads w's walk and puts it in walk_progs: from then on samples are walked with it. */
static int load_walk(struct walker *w)
{
	__u32 key = 0;
	int err, fd;

	err = unwinder_bpf__load(w->k);
	if (err)
		return err;
	fd = bpf_program__fd(w->prog);
	if (bpf_map_update_elem(bpf_map__fd(w->k->maps.walk_progs), &key, &fd, BPF_ANY))
		return -errno;
	/* Slot 3: samples of processes without a region set are walked by file too. */
	key = 3;
	if (w->prog == w->k->progs.cprof_walk_file &&
	    bpf_map_update_elem(bpf_map__fd(w->k->maps.walk_progs), &key, &fd, BPF_ANY))
		return -errno;
	return 0;
}

static int open_walker(struct sampler *s, struct walker *w, int rows_fd);

/*
 * The walk by file refused (a kernel whose verifier knows bpf_find_vma but
 * not all it is handed): the loop walk instead, said as a fallback.
 */
static int walk_without_files(struct sampler *s)
{
	struct walker *w = &s->walker;
	pthread_t thread = w->thread;
	int err;

	pr_debug("the walk by file (cprof_walk_file) refused: %s", strerror(-w->err));
	kernel_caps__fell_back(KCAP_FIND_VMA);
	s->cur.by_file = false;
	unwinder_bpf__destroy(w->k);
	err = open_walker(s, w, s->unwinder ? unwinder__rows_fd(s->unwinder) : -1);
	w->thread = thread;
	w->started = true;
	return err ? err : load_walk(w);
}

/*
 * The walk, which costs the verifier tens to hundreds of milliseconds:
 * loaded on a thread once sampling has begun. Until it is in walk_progs,
 * samples go to user space as stack copies and are walked there.
 */
static void *load_walker(void *arg)
{
	struct sampler *s = arg;
	struct walker *w = &s->walker;
	uint64_t t0 = clock__mono_ns();

	w->err = load_walk(w);
	if (w->err && w->prog == w->k->progs.cprof_walk_file)
		w->err = walk_without_files(s);
	if (w->err)
		pr_info("user stacks are walked in user space: the kernel refused the in-kernel "
			"walk "
			"(%s; -v shows the verifier's log)",
			strerror(-w->err));
	else
		pr_debug("the walk (%s): loaded in %.1f ms", bpf_program__name(w->prog),
			 (double)(clock__mono_ns() - t0) / 1e6);
	return NULL;
}

/*
 * The walk by tail calls whose runs reach --max-stack's frames: the deep
 * one costs the verifier four times as much, so only a deep option pays it.
 */
static struct bpf_program *walk_by_tail_calls(const struct sampler *s, struct unwinder_bpf *k)
{
	uint32_t depth = s->unwinder ? unwinder__max_depth(s->unwinder) : CPROF_MAX_STACK_DEPTH;

	return depth > CPROF_WALK_RUNS * CPROF_WALK_FRAMES ? k->progs.cprof_walk_deep
							   : k->progs.cprof_walk;
}

/*
 * Opens a walker on the current instance's maps, the row map rows_fd
 * (-1: the instance's). Not loaded.
 */
static int open_walker(struct sampler *s, struct walker *w, int rows_fd)
{
	struct bpf_map *m, *src;
	struct bpf_program *p;
	int err;

	memset(w, 0, sizeof(*w));
	w->k = sample_object__open_unwinder();
	if (!w->k)
		return -errno;
	bpf_object__for_each_map(m, w->k->obj)
	{
		/* One the sampling object did not create, the walk does not use. */
		src = bpf_object__find_map_by_name(s->cur.obj, bpf_map__name(m));
		if (!src || bpf_map__fd(src) < 0) {
			bpf_map__set_autocreate(m, false);
			continue;
		}
		err = bpf_map__reuse_fd(m, m == w->k->maps.unwind_rows && rows_fd >= 0
						   ? rows_fd
						   : bpf_map__fd(src));
		if (err) {
			pr_debug("the walker cannot share map '%s': %s", bpf_map__name(m),
				 strerror(-err));
			return err;
		}
	}
	/* Where the kernel has bpf_loop (5.17), the walk costs the verifier a tenth of the other.
	 */
	w->prog = s->cur.by_file ? w->k->progs.cprof_walk_file
		  : s->cur.loop	 ? w->k->progs.cprof_walk_loop
				 : walk_by_tail_calls(s, w->k);
	bpf_object__for_each_program(p, w->k->obj) bpf_program__set_autoload(p, p == w->prog);
	return 0;
}

/* Opens the walker on the current instance's maps, and loads it on a thread. */
int walker__start(struct sampler *s)
{
	struct walker *w = &s->walker;
	int err;

	if (!s->cur.uk)
		return 0;
	err = open_walker(s, w, s->unwinder ? unwinder__rows_fd(s->unwinder) : -1);
	if (err)
		return err;
	err = pthread_create(&w->thread, NULL, load_walker, s);
	if (err)
		return -err;
	w->started = true;
	return 0;
}

/* Waits for the walker's first load, if it is under way. */
static void join_walker(struct sampler *s)
{
	if (s->walker.started)
		pthread_join(s->walker.thread, NULL);
	s->walker.started = false;
}

/*
 * The unwinder moved its rows to rows_fd (unwinder__on_grown): the walk is
 * loaded again with that map and takes the old one's place in walk_progs.
 * Before the walk is started it finds the new map by itself; without an
 * in-kernel walk no program reads rows.
 */
int walker__rows_moved(void *ctx, int rows_fd)
{
	struct sampler *s = ctx;
	struct walker next;
	uint64_t t0 = clock__mono_ns();
	int err;

	if (!s->walker.k)
		return 0;
	join_walker(s);
	if (s->walker.err)
		return 0;
	err = open_walker(s, &next, rows_fd);
	if (!err)
		err = load_walk(&next);
	if (err) {
		unwinder_bpf__destroy(next.k);
		return err;
	}
	unwinder_bpf__destroy(s->walker.k);
	s->walker = next;
	pr_debug("the walk (%s): loaded again for a larger row map in %.1f ms",
		 bpf_program__name(next.prog), (double)(clock__mono_ns() - t0) / 1e6);
	return 0;
}

void walker__stop(struct sampler *s)
{
	join_walker(s);
	unwinder_bpf__destroy(s->walker.k);
	s->walker.k = NULL;
}
