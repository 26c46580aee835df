// SPDX-License-Identifier: MIT
/*
 * The sampler's lifecycle: the BPF object opened, its maps made on threads
 * (parallel_maps.c) while the events, hooks and buffers are opened, loaded
 * (or the sampler's object when the unwinder's is refused), started,
 * stopped and freed. The pieces it drives, one job each:
 *
 *   sample_object.c  the BPF object that samples: sized, loaded, measured
 *   load_errors.c    why a load failed, in words a user can act on
 *   task_hooks.c     the fork, exec and exit hooks
 *   skipped_runs.c   runs of a program the kernel skipped
 *   copy_rings.c     the sampling events' own rings: the head start, copies
 *   notifications.c  the program's perf buffers, read by sampler__consume
 *   walker.c         the unwinder's in-kernel walk, loaded on a thread
 *   drain.c          the map sets flipped, drained and cleared
 *   stack_cache.c    the drain's cache of the stack map
 *   targets.c        the processes a PID-filtered run samples
 *
 * Their shared state is struct sampler (sampler_internal.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/kernel_caps.h"
#include "lib/u64map.h"
#include "sample/event_reader.h"
#include "sample/lazy_maps.h"
#include "sample/load_errors.h"
#include "sample/map_take.h"
#include "sample/parallel_maps.h"
#include "sample/perf_attach.h"
#include "sample/sampler_internal.h"
#include "sample/skipped_runs.h"
#include "sample/stack_cache.h"
#include "sample/task_hooks.h"
#include "sample/unwinder.h"
#include "sample/walked_stacks.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

int sampler__write_config(struct sampler *s)
{
	__u32 zero = 0;
	int err;

	err = bpf_map_update_elem(FD(&s->cur, config), &zero, &s->cfg, BPF_ANY);
	if (err) {
		err = -errno;
		pr_err("cannot update the configuration map: %s", strerror(-err));
	}
	return err;
}

static uint32_t known_stacks_size(const struct sampler *s)
{
	return 2 * s->opts.count_entries;
}

/*
 * Creates maps on other threads while fn(s) runs on this one. Returns the
 * first map's error (unexplained), else fn's (which fn has logged).
 */
static int create_maps_while(struct bpf_map *const *maps, int n, int (*fn)(struct sampler *s),
			     struct sampler *s, bool *explained)
{
	struct parallel_maps *pm = NULL;
	int err, fn_err;

	*explained = false;
	err = parallel_maps__start(maps, n, &pm);
	if (err) {
		pr_err("cannot create the BPF maps: %s", strerror(-err));
		*explained = true;
		return err;
	}
	fn_err = fn(s);
	err = parallel_maps__finish(pm);
	parallel_maps__free(pm);
	/* fn has said why it failed, most often the maps' reason too (RLIMIT_MEMLOCK): once. */
	if (fn_err) {
		*explained = true;
		err = fn_err;
	}
	return err;
}

/*
 * What the object needs besides its maps, done while they are created;
 * done once, when the unwinder's object is refused and the sampler's
 * tried next.
 */
static int prepare_first(struct sampler *s)
{
	int err;

	/* The first tick comes sooner: see perf_attach.c. */
	if (!s->pa && !s->copy && !s->copies) {
		err = perf_attach__open(s->opts.hz, true, &s->pa);
		if (err)
			return err;
	}
	if (!s->reader) {
		task_hooks__open(s->hooks);
		err = notifications__open(s);
	} else {
		err = bpf_map__reuse_fd(MAP(&s->cur, events), s->events_fd);
	}
	if (!err && !s->pa)
		err = copy_rings__open(s);
	return err;
}

/*
 * The object and its maps. *explained: the error was logged; else the
 * caller explains it, or tries the sampler's object instead.
 */
static int load_first(struct sampler *s, bool *explained)
{
	struct sample_object *k = &s->cur;
	struct bpf_map *big[BIG_MAPS];
	int err;

	*explained = false;
	err = sample_object__open(s, k);
	if (err)
		return err;
	sample_object__configure(s, k);
	err = create_maps_while(big, sample_object__big_maps(s, k, big), prepare_first, s,
				explained);
	if (*explained)
		return err;
	if (!err)
		err = sample_object__load(k);
	return err;
}

/* The fork, exec and exit hooks, and what is lost without them, said once. */
static int init_hooks(struct sampler *s)
{
	int err = task_hooks__new(&s->hooks);

	if (err)
		return err;
	s->cfg.fork_layout = task_hooks__layout(s->hooks);
	if (s->cfg.fork_layout != CPROF_FORK_NONE)
		return 0;
	if (s->cfg.follow_children)
		pr_warn("children started during the profile are not followed: cannot read "
			"the sched_process_fork tracepoint (is tracefs available?)");
	else
		pr_warn("cannot read the sched_process_fork tracepoint (is tracefs "
			"available?): a sample taken before its process's exec may be "
			"named after the program it ran next");
	return 0;
}

static int init(struct sampler *s, const struct sampler_opts *opts)
{
	int n;

	s->events_fd = -1;
	s->walked_fd = -1;
	s->copies_map_fd = -1;
	perf_sample__layout(&s->layout);
	s->copy_buf = malloc(sizeof(*s->copy_buf));
	if (!s->copy_buf)
		return -ENOMEM;
	s->opts = *opts;
	s->opts.head_start = NULL;
	copy_rings__take_head_start(s, opts->head_start);
	s->unwinder = opts->unwinder;
	s->unwind_err = s->unwinder ? 0 : -ENOENT;
	s->copy = opts->copy_samples && !s->unwinder;
	s->cfg.copy_samples = s->copy;
	if (!s->opts.stack_entries)
		s->opts.stack_entries = CPROF_DEFAULT_STACK_ENTRIES;
	if (!s->opts.count_entries)
		s->opts.count_entries = CPROF_DEFAULT_COUNT_ENTRIES;
	s->lazy = lazy_maps__supported();
	s->ncpus_possible = libbpf_num_possible_cpus();
	if (s->ncpus_possible <= 0) {
		n = s->ncpus_possible ? s->ncpus_possible : -EINVAL;
		pr_err("cannot read the number of possible CPUs: %s", strerror(-n));
		return n;
	}
	s->cfg.filter_pids = opts->filter_pids;
	s->cfg.include_idle = opts->include_idle;
	/* Forks are watched in every mode: see `spaces` in the BPF program. */
	s->cfg.follow_children = opts->filter_pids && opts->follow_children;
	return init_hooks(s);
}

/* From now on samples come with stack copies, to be walked in user space. */
static void use_copies(struct sampler *s)
{
	s->copy = true;
	s->cfg.copy_samples = 1;
	/*
	 * Opened without rings: opened again with them. The head start's have
	 * them, and are disabled here until the program is attached (freeing
	 * what adopted them disables them): from now on the program chooses.
	 */
	perf_attach__free(s->pa);
	s->pa = NULL;
}

/*
 * The unwinder's object refused (err; before Linux 5.5, or a verifier that
 * refuses the walk): the sampler's, whose samples are stack copies.
 */
static int load_without_unwinder(struct sampler *s, int err, bool *explained)
{
	pr_debug("cannot load the unwinder: %s; user stacks walked from stack copies",
		 strerror(-err));
	kernel_caps__fell_back(KCAP_UNWINDER);
	s->unwind_err = err;
	s->unwinder = NULL;
	event_reader__free(s->walked_reader);
	s->walked_reader = NULL;
	use_copies(s);
	sample_object__destroy(&s->cur);
	return load_first(s, explained);
}

/* What the drain keeps between drains (walked stacks with the unwinder's object only). */
static int new_drain_state(struct sampler *s)
{
	int err = map_take__new(sizeof(struct cprof_key), sizeof(__u64), &s->take);

	if (!err)
		err = stack_cache__new(s->opts.stack_entries, &s->stacks);
	if (!err && s->cur.uk)
		err = walked_stacks__new(known_stacks_size(s), &s->walked);
	return err;
}

int sampler__new(const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *s;
	bool explained;
	int err;

	*out = NULL;
	load_errors__route_libbpf();
	err = load_errors__check_privileges();
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = init(s, opts);
	if (err)
		goto cleanup;
	err = load_first(s, &explained);
	if (err && !explained && s->unwinder)
		err = load_without_unwinder(s, err, &explained);
	if (err) {
		if (!explained)
			load_errors__explain(err);
		goto cleanup;
	}
	err = sampler__write_config(s);
	if (!err)
		err = new_drain_state(s);
	if (err)
		goto cleanup;
	if (s->unwinder)
		unwinder__on_grown(s->unwinder, walker__rows_moved, s);
	*out = s;
	return 0;
cleanup:
	sampler__free(s);
	return err;
}

int sampler__unwind_status(const struct sampler *s)
{
	return s->unwind_err;
}

bool sampler__copies(const struct sampler *s)
{
	return s->copy;
}

uint64_t sampler__space_of(struct sampler *s, uint32_t pid)
{
	__u64 space = 0;

	if (bpf_map_lookup_elem(FD(&s->cur, spaces), &pid, &space))
		return 0;
	return space;
}

int sampler__start(struct sampler *s)
{
	int err;

	task_hooks__attach(s->hooks, s->cur.obj, s->cfg.follow_children);
	/*
	 * The command's process waits to be released before it execs; until its
	 * exec (which the hook sees) it runs cprof's code, which is not sampled.
	 * Without the hook its samples from before the exec are taken as before.
	 */
	if (s->command_pid && task_hooks__exec_attached(s->hooks)) {
		err = targets__set(s, s->command_pid, CPROF_TARGET_BEFORE_EXEC);
		if (err)
			return err;
	}
	err = perf_attach__attach(s->pa, sample_object__sample_prog(&s->cur));
	if (err)
		return err;
	s->started = true;
	err = walker__start(s);
	if (err)
		pr_info("user stacks are walked in user space: cannot load the in-kernel walk: %s",
			strerror(-err));
	return 0;
}

void sampler__skipped(const struct sampler *s, uint64_t *samples, uint64_t *hooks)
{
	*samples = 0;
	if (s->cur.obj)
		*samples = skipped_runs__prog(bpf_program__fd(sample_object__sample_prog(&s->cur)));
	*hooks = task_hooks__skipped(s->hooks);
}

void sampler__stop(struct sampler *s)
{
	if (!s || s->stopped)
		return;
	perf_attach__free(s->pa);
	s->pa = NULL;
	perf_attach__free(s->next_pa);
	s->next_pa = NULL;
	task_hooks__detach(s->hooks);
	s->stopped = true;
}

int sampler__cpu_count(const struct sampler *s)
{
	return perf_attach__cpu_count(s->pa);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->unwinder)
		unwinder__on_grown(s->unwinder, NULL, NULL);
	sampler__stop(s);
	walker__stop(s);
	event_reader__free(s->copies);
	if (s->copies_map_fd >= 0)
		close(s->copies_map_fd);
	free(s->copy_buf);
	event_reader__free(s->reader);
	if (s->events_fd >= 0)
		close(s->events_fd);
	event_reader__free(s->walked_reader);
	if (s->walked_fd >= 0)
		close(s->walked_fd);
	task_hooks__free(s->hooks);
	sample_object__destroy(&s->cur);
	stack_cache__free(s->stacks);
	map_take__free(s->take);
	walked_stacks__free(s->walked);
	free(s->early_pids);
	u64map__free(s->head_seen);
	free(s->spills);
	free(s->counted);
	free(s);
}
