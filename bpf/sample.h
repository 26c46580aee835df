/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * What every sampling program does, whichever walks the user stack: the
 * maps of the in-kernel aggregation, the start of a sample (targets, idle,
 * comm, address space, map set), recording a sample's stacks and count,
 * and the hooks that follow processes (fork, exec, exit). Included by
 * bpf/sampler.bpf.c (frame pointers, Linux 4.18+) and bpf/unwinder.bpf.c
 * (CFI tables, Linux 5.5+), so both objects have the same maps and user
 * space drains either the same way.
 *
 * The includer may define, before including, what its hooks add:
 *   CPROF_ON_FORK(parent, child, now), CPROF_ON_EXEC(pid),
 *   CPROF_ON_THREAD_EXIT(tid).
 */
#ifndef CPROF_BPF_SAMPLE_H
#define CPROF_BPF_SAMPLE_H

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "sampler_abi.h"

#ifndef CPROF_ON_FORK
#define CPROF_ON_FORK(parent, child, now)
#endif
#ifndef CPROF_ON_EXEC
#define CPROF_ON_EXEC(pid)
#endif
#ifndef CPROF_ON_THREAD_EXIT
#define CPROF_ON_THREAD_EXIT(tid)
#endif

#define STACK_VALUE_SIZE (CPROF_MAX_STACK_DEPTH * sizeof(__u64))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, CPROF_DEFAULT_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, STACK_VALUE_SIZE);
} stacks0 SEC(".maps"), stacks1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_DEFAULT_COUNT_ENTRIES);
	__type(key, struct cprof_key);
	__type(value, __u64);
} counts0 SEC(".maps"), counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPROF_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Samples currently being recorded into set 0 / set 1, per CPU (user space
 * sums them): one shared counter would move its cache line between CPUs
 * twice per sample.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} in_flight SEC(".maps");

/* Processes already announced to user space (LRU: no cleanup needed). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_SEEN_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
} seen SEC(".maps");

/*
 * Process -> the id of its current address space: the time (bpf_ktime_get_ns,
 * CLOCK_MONOTONIC) of the fork or exec that began it; no entry for a process
 * that has not forked or exec'd since cprof started (id 0). Each sample
 * carries the id, so that user space resolves it with the memory map of that
 * program, even after the process has exec'd another: the kernel's records
 * of the same fork or exec (user space reads them from perf events) are
 * timed a little earlier, before these hooks run, so a space began at or
 * before the id of every sample taken in it. Threads get entries too (the
 * fork hook cannot tell them from processes); they go at their exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_SPACE_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} spaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* Room to build a spilled sample: 2 KiB is far beyond the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_spill);
} spill SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/*
 * Locked even though the slot is this CPU's own: the locked add is the full
 * barrier that orders it before the re-read of active_set in cprof_sample.
 */
static __always_inline void in_flight_add(__u32 set, __s64 delta)
{
	__u64 *v = bpf_map_lookup_elem(&in_flight, &set);

	if (v)
		__sync_fetch_and_add(v, delta);
}

/* First sample of a process: user space snapshots its maps while it lives. */
static __always_inline void announce(struct bpf_perf_event_data *ctx, const struct cprof_key *key)
{
	struct cprof_event ev = {.pid = key->pid, .tid = key->tid};
	__u32 one = 1;

	if (key->pid && !bpf_map_lookup_elem(&seen, &key->pid)) {
		bpf_map_update_elem(&seen, &key->pid, &one, BPF_ANY);
		if (bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &ev, sizeof(ev)))
			stat_add(CPROF_STAT_NOTIFY_LOST, 1);
	}
}

/*
 * bpf_get_stackid: -EFAULT means there is no such stack (a user-mode sample
 * has no kernel stack, a kernel thread has no user stack), -EEXIST that the
 * hash bucket holds a different stack. Both are kept in the key so that the
 * sample is still counted and user space can say what was lost.
 */
static __always_inline void stack_stat(long id, __u32 collision_stat, __u32 err_stat)
{
	if (id >= 0 || id == -14 /* EFAULT */)
		return;
	stat_add(id == -17 /* EEXIST */ ? collision_stat : err_stat, 1);
}

/*
 * Whether the tick interrupted kernel code, read from the interrupted
 * registers as the kernel's user_mode() does. Only then is there a kernel
 * stack: for a sample of user code bpf_get_stackid would set up a callchain
 * and walk nothing, to return -EFAULT; skipping that call makes such a
 * sample some 7% cheaper (measured as bench/run figure 3 does).
 */
static __always_inline int in_kernel(const struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (ctx->regs.cs & 3) == 0; /* privilege level 0 */
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) != 0; /* PSR_MODE_MASK: EL0t is 0 */
#else
	return 1;
#endif
}

/*
 * A stack that met a bucket held by another stack (-EEXIST) would be lost
 * until the next drain clears the map. Instead the sample goes to user space
 * whole, both stacks read again with bpf_get_stack; 1 if it was sent. When
 * the perf buffer is full it is counted under a placeholder, as before.
 */
static __always_inline int spill_sample(struct bpf_perf_event_data *ctx,
					const struct cprof_key *key, __u32 set, int kernel)
{
	struct cprof_spill *sp;
	__u32 zero = 0;
	long n;

	sp = bpf_map_lookup_elem(&spill, &zero);
	if (!sp)
		return 0;
	sp->magic = CPROF_SPILL_MAGIC;
	sp->set = set;
	sp->pid = key->pid;
	sp->tid = key->tid;
	sp->comm[0] = key->comm[0];
	sp->comm[1] = key->comm[1];
	sp->space = key->space;
	n = bpf_get_stack(ctx, sp->user, sizeof(sp->user), BPF_F_USER_STACK);
	sp->user_bytes = n > 0 ? (__u32)n : 0;
	n = 0;
	if (kernel)
		n = bpf_get_stack(ctx, sp->kern, sizeof(sp->kern), 0);
	sp->kern_bytes = n > 0 ? (__u32)n : 0;
	return bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, sp, sizeof(*sp)) == 0;
}

/*
 * Counts the sample under key in count_map, inserting the key the first
 * time. Straight-line on purpose (no early return): kernels before 5.3
 * reject any backward jump, and clang turns shared exits into one.
 */
static __always_inline void count_sample(struct bpf_perf_event_data *ctx, void *count_map,
					 const struct cprof_key *key, __u32 set)
{
	__u64 one = 1, *count;
	int err;

	count = bpf_map_lookup_elem(count_map, key);
	if (!count) {
		/*
		 * A process's first sample always makes a new key (the key holds
		 * its pid), so checking for new processes here, not on every
		 * sample, misses none.
		 */
		announce(ctx, key);
		err = bpf_map_update_elem(count_map, key, &one, BPF_NOEXIST);
		if (err == 0) {
			stat_add(set ? CPROF_STAT_NEW_KEYS_SET1 : CPROF_STAT_NEW_KEYS_SET0, 1);
		} else {
			/* Another CPU inserted the same key first, or the map is full. */
			count = bpf_map_lookup_elem(count_map, key);
			if (!count)
				stat_add(CPROF_STAT_COUNTS_FULL, 1);
		}
	}
	if (count)
		__sync_fetch_and_add(count, 1);
}

/* A sample with its stacks as bpf_get_stackid walks them (user code by frame pointers). */
static __always_inline void record(struct bpf_perf_event_data *ctx, void *stack_map,
				   void *count_map, struct cprof_key *key, __u32 set)
{
	long uid, kid = -14 /* EFAULT, as bpf_get_stackid says it */;
	int kernel = in_kernel(ctx), spilled = 0;

	uid = bpf_get_stackid(ctx, stack_map, BPF_F_USER_STACK);
	if (kernel)
		kid = bpf_get_stackid(ctx, stack_map, 0);
	if (uid == -17 /* EEXIST */ || kid == -17)
		spilled = spill_sample(ctx, key, set, kernel);
	/*
	 * Hidden from the optimizer: knowing where spilled is 0, clang would jump
	 * from a failed spill back into the shared path below, a backward jump.
	 */
	asm volatile("" : "+r"(spilled));
	if (spilled) {
		stat_add(CPROF_STAT_SPILLED, 1);
		announce(ctx, key);
	} else {
		stack_stat(uid, CPROF_STAT_USER_COLLISION, CPROF_STAT_USER_STACK_ERR);
		stack_stat(kid, CPROF_STAT_KERN_COLLISION, CPROF_STAT_KERN_STACK_ERR);
	}
	key->user_stack_id = (__u32)uid;
	key->kern_stack_id = (__u32)kid;
	if (!spilled)
		count_sample(ctx, count_map, key, set);
}

/* Counts the sample under key in set's count map. */
static __always_inline void count_in(struct bpf_perf_event_data *ctx, const struct cprof_key *key,
				     __u32 set)
{
	if (set == 0)
		count_sample(ctx, &counts0, key, 0);
	else
		count_sample(ctx, &counts1, key, 1);
}

static __always_inline void record_in(struct bpf_perf_event_data *ctx, struct cprof_key *key,
				      __u32 set)
{
	if (set == 0)
		record(ctx, &stacks0, &counts0, key, 0);
	else
		record(ctx, &stacks1, &counts1, key, 1);
}

/* sample_begin: the perf event's ring takes the sample (copy_samples). */
#define SAMPLE_TO_RING 2

/*
 * The start of every sample: 1 and the key and map set when the sample is
 * to be recorded (SAMPLE_TO_RING: to be handed to the ring). The caller ends it with
 * in_flight_add(set, -1) once the sample is in the set (see the top of bpf/sampler.bpf.c).
 */
static __always_inline int sample_begin(struct cprof_key *key, __u32 *setp)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct cprof_config *cfg;
	__u32 zero = 0, set, *target = 0;

	/* Every tick, targeted or not: compared with -F, it shows the kernel's throttling. */
	stat_add(CPROF_STAT_TICKS, 1);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return 0;
	key->pid = id >> 32;
	key->tid = (__u32)id;

	if (key->tid == 0) {
		/* Counted either way, so the summary can say how many were kept or left out. */
		stat_add(CPROF_STAT_IDLE, 1);
		if (!cfg->include_idle)
			return 0;
	}
	if (cfg->filter_pids) {
		target = bpf_map_lookup_elem(&targets, &key->pid);
		if (!target)
			return 0;
		/* Between fork and exec the command's process runs cprof's own code. */
		if (*target == CPROF_TARGET_BEFORE_EXEC) {
			stat_add(CPROF_STAT_BEFORE_EXEC, 1);
			return 0;
		}
	}
	stat_add(CPROF_STAT_SAMPLES, 1);
	bpf_get_current_comm(&key->comm, sizeof(key->comm));
	if (key->pid) {
		__u64 *space = bpf_map_lookup_elem(&spaces, &key->pid);

		if (space)
			key->space = *space;
	}

	/*
	 * Announce use of the set before re-reading active_set: if user space
	 * flipped in between, move to the new set, which it will not drain
	 * before our in_flight count drops.
	 */
	set = cfg->active_set & 1;
	in_flight_add(set, 1);
	if ((cfg->active_set & 1) != set) {
		in_flight_add(set, -1);
		set ^= 1;
		in_flight_add(set, 1);
	}
	*setp = set;
	return cfg->copy_samples ? SAMPLE_TO_RING : 1;
}

/*
 * Follows children of profiled processes. The sched_process_fork record
 * changed layout in 6.x (comms became __data_loc), moving child_pid from
 * offset 44 to 20. One program per layout keeps every context access at a
 * constant offset within the record, which the verifier and the attach-time
 * size check require; user space reads the tracepoint format and loads one.
 */
static __always_inline int follow_fork(__u32 child)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	__u64 now = bpf_ktime_get_ns();
	struct cprof_config *cfg;
	__u32 zero = 0, one = 1;

	bpf_map_update_elem(&spaces, &child, &now, BPF_ANY);
	CPROF_ON_FORK(parent, child, now);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg || !cfg->filter_pids || !cfg->follow_children ||
	    !bpf_map_lookup_elem(&targets, &parent))
		return 0;
	if (bpf_map_update_elem(&targets, &child, &one, BPF_ANY))
		stat_add(CPROF_STAT_TARGETS_FULL, 1);
	else
		stat_add(CPROF_STAT_FORKS_FOLLOWED, 1);
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int cprof_fork_static_comm(void *ctx)
{
	return follow_fork(*(__u32 *)(ctx + 44));
}

SEC("tracepoint/sched/sched_process_fork")
int cprof_fork_dynamic_comm(void *ctx)
{
	return follow_fork(*(__u32 *)(ctx + 20));
}

/* A new program, a new address space; and the command cprof started is sampled from here on. */
SEC("tracepoint/sched/sched_process_exec")
int cprof_exec(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 now = bpf_ktime_get_ns();
	__u32 *target;

	(void)ctx;
	bpf_map_update_elem(&spaces, &pid, &now, BPF_ANY);
	CPROF_ON_EXEC(pid);
	target = bpf_map_lookup_elem(&targets, &pid);
	if (target && *target == CPROF_TARGET_BEFORE_EXEC)
		*target = CPROF_TARGET_ON;
	return 0;
}

/*
 * A thread's exit: its entry in `spaces` was never a process's. A process's
 * own entry stays: it is still sampled while it exits (this tracepoint runs
 * before its memory goes), and a new process that reuses its PID gets an
 * entry of its own at fork.
 */
SEC("tracepoint/sched/sched_process_exit")
int cprof_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	(void)ctx;
	if (tid != id >> 32) {
		bpf_map_delete_elem(&spaces, &tid);
		CPROF_ON_THREAD_EXIT(tid);
	}
	return 0;
}

#endif
