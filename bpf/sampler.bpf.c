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
 *
 * Where the unwinder's object cannot load (before Linux 5.5), user space
 * sets copy_samples: the program returns 1 for a targeted sample instead,
 * and the perf event writes it to its ring with the user registers and a
 * copy of the user stack, which user space walks with the CFI tables.
 */
#include "sample.h"

SEC("perf_event")
int cprof_sample(struct bpf_perf_event_data *ctx)
{
	struct cprof_key key = {};
	__u32 set;
	int begun, to_ring;

	begun = sample_begin(&key, &set);
	if (!begun)
		return 0;
	/* Straight on, no shared exit: no backward jump for 4.18 (see count_sample). */
	to_ring = begun == SAMPLE_TO_RING;
	asm volatile("" : "+r"(to_ring));
	if (to_ring) {
		/* The event's ring gets the sample, with the user stack the kernel copies. */
		stat_add(CPROF_STAT_COPIES, 1);
		announce(ctx, &key);
	} else {
		record_in(ctx, &key, set);
	}
	in_flight_add(set, -1);
	return to_ring;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
