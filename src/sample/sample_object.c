// SPDX-License-Identifier: MIT
/*
 * The BPF object that samples: the sampler's (user stacks by frame
 * pointers) or the unwinder's (by CFI tables). Sized and configured before
 * the load, loaded with the programs this kernel can verify, and measured
 * (the bytes its preallocated maps hold).
 */
#include <errno.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/kernel_caps.h"
#include "sample/lazy_maps.h"
#include "sample/sampler_internal.h"
#include "sample/unwinder.h"
#include "sampler.skel.h"
#include "unwinder.skel.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

/* The hash maps whose entries the kernel can allocate as they are added. */
static void allocate_lazily(struct sample_object *k)
{
	struct bpf_map *maps[] = {MAP(k, counts0), MAP(k, counts1), MAP(k, targets)};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (maps[i])
			lazy_maps__apply(maps[i]);
}

/* Sizes, and which programs the object loads. */
void sample_object__configure(struct sampler *s, struct sample_object *k)
{
	bool fork = s->cfg.fork_layout != CPROF_FORK_NONE;

	for (int set = 0; set < 2; set++) {
		bpf_map__set_max_entries(set ? MAP(k, stacks1) : MAP(k, stacks0),
					 s->opts.stack_entries);
		bpf_map__set_max_entries(set ? MAP(k, counts1) : MAP(k, counts0),
					 s->opts.count_entries);
		/* The unwinder's object keeps every stack by its hash: no stack map. */
		if (k->uk)
			bpf_map__set_autocreate(set ? MAP(k, stacks1) : MAP(k, stacks0), false);
	}
	if (k->uk)
		bpf_map__set_autocreate(MAP(k, spill), false);
	/* Unused without a PID filter; a full-size hash map costs startup time to allocate. */
	if (!s->opts.filter_pids)
		bpf_map__set_max_entries(MAP(k, targets), 1);
	if (s->lazy)
		allocate_lazily(k);
	bpf_program__set_autoload(PROG(k, cprof_fork_static_comm),
				  fork && s->cfg.fork_layout == CPROF_FORK_STATIC_COMM);
	bpf_program__set_autoload(PROG(k, cprof_fork_dynamic_comm),
				  fork && s->cfg.fork_layout == CPROF_FORK_DYNAMIC_COMM);
	bpf_program__set_autoload(PROG(k, cprof_exec), fork);
	bpf_program__set_autoload(PROG(k, cprof_exit), fork);
}

/*
 * The skeleton's open code is some 1.3 KB inlined where it is called: one
 * copy of it, for the sampling object and the walker's.
 */
struct unwinder_bpf *sample_object__open_unwinder(void)
{
	return unwinder_bpf__open();
}

/* Opens the unwinder's object when there is an unwinder, else the sampler's. */
int sample_object__open(struct sampler *s, struct sample_object *i)
{
	memset(i, 0, sizeof(*i));
	if (s->unwinder) {
		i->uk = sample_object__open_unwinder();
		if (!i->uk)
			return -errno;
		i->obj = i->uk->obj;
		return unwinder__share(s->unwinder, i->obj);
	}
	i->sk = sampler_bpf__open();
	if (!i->sk)
		return -errno;
	i->obj = i->sk->obj;
	return 0;
}

/* Puts program p in slot key of the instance's walk_progs. */
static int set_walk_prog(struct sample_object *i, __u32 key, const struct bpf_program *p)
{
	int fd = bpf_program__fd(p);

	return bpf_map_update_elem(FD(i, walk_progs), &key, &fd, BPF_ANY) ? -errno : 0;
}

/*
 * Whether the walk can find tables by file: bpf_find_vma (and the task
 * as BTF, 5.11) in perf_event programs. Noted as a fallback where not.
 */
static bool has_find_vma(void)
{
	if (kernel_caps__has(KCAP_FIND_VMA) &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1 &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_current_task_btf,
				    NULL) == 1)
		return true;
	kernel_caps__fell_back(KCAP_FIND_VMA);
	return false;
}

/*
 * Loads it. The unwinder's walk goes on through the programs in walk_progs:
 * the walk itself, slot 0, which the walker loads in the background (see
 * walker__start), the last step, slot 1, which records into the map sets
 * and so comes with each instance, and the stack copy, slot 2, which the
 * other three hand samples to that user space walks.
 */
int sample_object__load(struct sample_object *i)
{
	struct bpf_program *keep;
	uint64_t t0 = clock__mono_ns();
	int err;

	if (i->sk)
		return sampler_bpf__load(i->sk);
	/* Refused as the verifier before 5.5 refuses it (bpf_probe_read_user), when emulated. */
	if (!kernel_caps__has(KCAP_UNWINDER))
		return -EINVAL;
	i->loop = kernel_caps__has(KCAP_BPF_LOOP) &&
		  libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
	if (!i->loop)
		kernel_caps__fell_back(KCAP_BPF_LOOP);
	i->by_file = has_find_vma();
	/* Both came with 5.17; the walk by file is a loop walk. */
	if (i->by_file && !i->loop) {
		kernel_caps__fell_back(KCAP_FIND_VMA);
		i->by_file = false;
	}
	keep = i->loop ? PROG(i, cprof_keep_loop) : PROG(i, cprof_keep);
	bpf_program__set_autoload(PROG(i, cprof_walk), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_deep), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_loop), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_file), false);
	bpf_program__set_autoload(PROG(i, cprof_keep), keep == PROG(i, cprof_keep));
	bpf_program__set_autoload(PROG(i, cprof_keep_loop), keep == PROG(i, cprof_keep_loop));
	err = unwinder_bpf__load(i->uk);
	pr_debug("the unwinder's object (%s): loaded in %.1f ms", bpf_program__name(keep),
		 (double)(clock__mono_ns() - t0) / 1e6);
	if (err)
		return err;
	err = set_walk_prog(i, 2, PROG(i, cprof_copy));
	return err ? err : set_walk_prog(i, 1, keep);
}

void sample_object__destroy(struct sample_object *i)
{
	sampler_bpf__destroy(i->sk);
	unwinder_bpf__destroy(i->uk);
	memset(i, 0, sizeof(*i));
}

struct bpf_program *sample_object__sample_prog(const struct sample_object *i)
{
	return i->uk ? PROG(i, cprof_unwind_sample) : PROG(i, cprof_sample);
}

/* The maps worth a thread each (see parallel_maps.h): the large ones the run uses. */
int sample_object__big_maps(const struct sampler *s, const struct sample_object *k,
			    struct bpf_map *big[BIG_MAPS])
{
	struct bpf_map *const want[BIG_MAPS] = {
		k->uk ? NULL : MAP(k, stacks0),
		k->uk ? NULL : MAP(k, stacks1),
		MAP(k, counts0),
		MAP(k, counts1),
		MAP(k, seen),
		k->uk ? MAP(k, known_stacks) : NULL,
		s->opts.filter_pids ? MAP(k, targets) : NULL,
		s->cfg.fork_layout != CPROF_FORK_NONE ? MAP(k, spaces) : NULL,
	};
	int i, n = 0;

	for (i = 0; i < BIG_MAPS; i++)
		if (want[i])
			big[n++] = want[i];
	return n;
}

/* The bytes a preallocated map holds (0 for one that allocates as it fills). */
static uint64_t map_bytes(const struct bpf_map *m, int ncpus)
{
	uint64_t n;

	if (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC)
		return 0;
	n = (uint64_t)(bpf_map__key_size(m) + bpf_map__value_size(m)) * bpf_map__max_entries(m);
	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return n * (uint64_t)ncpus;
	default:
		return n;
	}
}

uint64_t sampler__map_bytes(const struct sampler *s)
{
	const struct bpf_map *m;
	uint64_t n = 0;

	if (!s->cur.obj)
		return 0;
	bpf_object__for_each_map(m, s->cur.obj)
	{
		if (bpf_map__fd(m) >= 0)
			n += map_bytes(m, s->ncpus_possible);
	}
	return n;
}
