// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Names kernel addresses the way the kernel names them in a backtrace:
 * bpf_snprintf's "%ps" is the kernel's own symbol lookup (vmlinux, modules,
 * BPF programs, trampolines), a binary search per address. Reading
 * /proc/kallsyms instead makes the kernel format all of its 100k+ symbols
 * (some 40 ms of CPU) to name the few hundred a profile holds.
 *
 * Run by user space through BPF_PROG_TEST_RUN (a syscall program: Linux 5.14,
 * bpf_snprintf 5.13, bpf_loop 5.17); where it cannot load, kallsyms is read
 * as before. User space fills `slots` and `count` (global data, mapped into
 * user space), runs the program, and reads the names back.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ksym_names_abi.h"

struct cprof_ksym_slot slots[CPROF_KSYM_SLOTS];
__u32 count;

static long name_one(__u32 i, void *ctx)
{
	static const char fmt[] = "%ps";
	struct cprof_ksym_slot *s;
	__u64 at = i;

	(void)ctx;
	/* Checked on the register the access uses: clang would check a copy. */
	asm volatile("" : "+r"(at));
	if (at >= count || at >= CPROF_KSYM_SLOTS)
		return 1;
	s = &slots[at];
	s->len = bpf_snprintf(s->name, sizeof(s->name), fmt, &s->addr, sizeof(s->addr));
	return 0;
}

/*
 * bpf_loop's body is verified once: a bounded loop over the 256 slots was
 * verified once a slot, a millisecond of every run's CPU.
 */
SEC("syscall")
int cprof_ksym_names(void *ctx)
{
	(void)ctx;
	bpf_loop(CPROF_KSYM_SLOTS, name_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
