// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Names kernel addresses the way the kernel names them in a backtrace:
 * bpf_snprintf's "%ps" is the kernel's own symbol lookup (vmlinux, modules,
 * BPF programs, trampolines), a binary search per address. Reading
 * /proc/kallsyms instead makes the kernel format all of its 100k+ symbols
 * (some 40 ms of CPU) to name the few hundred a profile holds.
 *
 * Run by user space through BPF_PROG_TEST_RUN (a syscall program: Linux 5.14,
 * bpf_snprintf 5.13, bounded loops 5.3); where it cannot load, kallsyms is
 * read as before. User space fills `slots` and `count` (global data, mapped
 * into user space), runs the program, and reads the names back.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ksym_names_abi.h"

struct cprof_ksym_slot slots[CPROF_KSYM_SLOTS];
__u32 count;

SEC("syscall")
int cprof_ksym_names(void *ctx)
{
	static const char fmt[] = "%ps";
	__u32 n = count, i;

	for (i = 0; i < CPROF_KSYM_SLOTS && i < n; i++) {
		struct cprof_ksym_slot *s = &slots[i];

		s->len = bpf_snprintf(s->name, sizeof(s->name), fmt, &s->addr, sizeof(s->addr));
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
