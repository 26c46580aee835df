// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The sampler: runs on every tick of the per-CPU cpu-clock perf event,
 * records the user and kernel stacks of the interrupted task, and counts
 * (pid, tid, stacks, comm) in the kernel so user space only drains totals.
 *
 * Written for old kernels (4.18+): no CO-RE relocations (it loads without
 * /sys/kernel/btf/vmlinux), no global variables (no .rodata/.bss maps, 5.2+),
 * no loops. Configuration comes from the `config` array map.
 *
 * Two sets of stack/count maps are used alternately. User space flips
 * `active_set`, waits until `in_flight` for the old set drops to zero, then
 * drains and clears the old set; stack ids are therefore never reused while
 * a count still refers to them, and collisions reset every interval.
 */
#include "sample.h"

SEC("perf_event")
int cprof_sample(struct bpf_perf_event_data *ctx)
{
	struct cprof_key key = {};
	__u32 set;

	if (!sample_begin(&key, &set))
		return 0;
	record_in(ctx, &key, set);
	in_flight_add(set, -1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
