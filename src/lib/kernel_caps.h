/* SPDX-License-Identifier: MIT */
/*
 * What the kernel can do for cprof, by the release that brought it, in one
 * table (kernel_caps.c), and the fallbacks taken where it cannot.
 *
 * On a real kernel every capability is probed where it is used (a
 * backported feature counts, a missing one fails its probe); the table
 * only speaks when the environment variable CPROF_KERNEL_AS names a
 * release (4.18 to 99.99): cprof then refuses itself what that kernel
 * lacks, answering as that kernel would (EINVAL, nothing touched), so the
 * fallbacks an old kernel forces run on any kernel. A test knob, described
 * in docs/testing.md.
 */
#ifndef CPROF_KERNEL_CAPS_H
#define CPROF_KERNEL_CAPS_H

#include <stdbool.h>

enum kernel_cap {
	KCAP_VMLINUX_BTF,      /* the kernel's BTF: where a task's user registers are */
	KCAP_UNWINDER,	       /* the unwinder's object: bpf_probe_read_user, bounded loops */
	KCAP_BATCH_OPS,	       /* batched map lookups, updates and deletes */
	KCAP_MEMCG_ACCOUNTING, /* maps charged to the memory cgroup, not RLIMIT_MEMLOCK */
	KCAP_BPF_LOOP,	       /* bpf_loop: the walk verified once, not per frame */
	KCAP_KSYM_PROG,	       /* syscall programs, bpf_snprintf's %ps: kernel names */
	KCAP_LAZY_MAPS,	       /* hash maps without preallocation in perf_event programs */
	KCAP_PERF_LINK,	       /* BPF links on perf events (libbpf's choice) */
	KCAP_FIND_VMA,	       /* bpf_find_vma: the walk finds a pc's table by its file */
	KCAP_MAX,
};

/* A release as one number: major * 1000 + minor. */
#define KERNEL_VERSION_CODE(major, minor) ((major)*1000u + (minor))

/*
 * Reads CPROF_KERNEL_AS from the environment (unset or empty: the real
 * kernel). -EINVAL, and nothing changed, for a value that is no release
 * from 4.18 on.
 */
int kernel_caps__init(void);
/* Behaves as release "MAJOR.MINOR" from now on (NULL: the real kernel). -EINVAL as above. */
int kernel_caps__emulate(const char *release);
/* The release emulated, as given, or NULL. */
const char *kernel_caps__emulated(void);
/* The release that brought c (the table's). */
unsigned kernel_caps__since(enum kernel_cap c);
/* False when the kernel emulated lacks c; true otherwise: then c's own probe decides. */
bool kernel_caps__has(enum kernel_cap c);
/* The release: the emulated one, else uname's (0 when it cannot be read). */
unsigned kernel_caps__version(void);
/* Notes that cprof took c's fallback: the summary names it. Thread-safe. */
void kernel_caps__fell_back(enum kernel_cap c);
/* The capabilities whose fallbacks were taken, as bits 1 << c. */
unsigned kernel_caps__fallbacks(void);
/* What c's fallback does, in a few words: "BPF maps drained key by key". */
const char *kernel_caps__fallback_name(enum kernel_cap c);

#endif
