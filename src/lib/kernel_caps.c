// SPDX-License-Identifier: MIT
/* The kernel's capabilities by release, and the fallbacks taken; see kernel_caps.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "lib/kernel_caps.h"

/*
 * From the kernel's history (the UAPI headers and the verifier of each
 * release, as libbpf's feature probes test them), and what cprof does
 * without each.
 */
static const struct {
	unsigned since;
	const char *fallback;
} caps[KCAP_MAX] = {
	/* /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF: 5.2). */
	[KCAP_VMLINUX_BTF] = {KERNEL_VERSION_CODE(5, 4),
			      "user stacks of samples taken in the kernel by frame pointers (no "
			      "kernel BTF)"},
	/* bpf_probe_read_user (5.5); bounded loops, which the walk needs, 5.3. */
	[KCAP_UNWINDER] = {KERNEL_VERSION_CODE(5, 5),
			   "user stacks walked in user space from stack copies (no in-kernel "
			   "walk)"},
	/* BPF_MAP_LOOKUP_AND_DELETE_BATCH and BPF_MAP_UPDATE_BATCH. */
	[KCAP_BATCH_OPS] = {KERNEL_VERSION_CODE(5, 6),
			    "BPF maps drained and filled key by key (no batched map operations)"},
	[KCAP_MEMCG_ACCOUNTING] = {KERNEL_VERSION_CODE(5, 11),
				   "BPF maps charged to RLIMIT_MEMLOCK"},
	[KCAP_BPF_LOOP] = {KERNEL_VERSION_CODE(5, 17),
			   "the in-kernel walk verified frame by frame (no bpf_loop)"},
	/* Syscall programs 5.14, bpf_snprintf 5.13, bpf_loop 5.17. */
	[KCAP_KSYM_PROG] = {KERNEL_VERSION_CODE(5, 17), "kernel frames named from /proc/kallsyms"},
	/* The verifier's "perf_event programs can only use preallocated hash map". */
	[KCAP_LAZY_MAPS] = {KERNEL_VERSION_CODE(6, 1), "hash maps preallocated"},
	/*
	 * BPF_LINK_CREATE on a perf event (BPF_PERF_EVENT). libbpf probes the
	 * real kernel and attaches by PERF_EVENT_IOC_SET_BPF without it, unsaid.
	 */
	[KCAP_PERF_LINK] = {KERNEL_VERSION_CODE(5, 15),
			    "programs attached to perf events by ioctl (no BPF links on them)"},
	[KCAP_FIND_VMA] = {KERNEL_VERSION_CODE(5, 17),
			   "processes cprof has not followed yet walked from stack copies (no "
			   "bpf_find_vma)"},
};

static char emulated[16];
static unsigned emulated_code;
static unsigned fallbacks;

static int parse(const char *s, unsigned *code)
{
	unsigned major, minor;
	int end = 0;

	if (*s < '0' || *s > '9' || sscanf(s, "%3u.%3u%n", &major, &minor, &end) != 2 || s[end] ||
	    major > 99 || minor > 99 ||
	    KERNEL_VERSION_CODE(major, minor) < KERNEL_VERSION_CODE(4, 18))
		return -EINVAL;
	*code = KERNEL_VERSION_CODE(major, minor);
	return 0;
}

int kernel_caps__emulate(const char *release)
{
	unsigned code;

	if (!release) {
		emulated[0] = '\0';
		emulated_code = 0;
		return 0;
	}
	if (strlen(release) >= sizeof(emulated) || parse(release, &code))
		return -EINVAL;
	strcpy(emulated, release);
	emulated_code = code;
	return 0;
}

int kernel_caps__init(void)
{
	const char *v = getenv("CPROF_KERNEL_AS");

	return kernel_caps__emulate(v && *v ? v : NULL);
}

const char *kernel_caps__emulated(void)
{
	return emulated_code ? emulated : NULL;
}

unsigned kernel_caps__since(enum kernel_cap c)
{
	return caps[c].since;
}

bool kernel_caps__has(enum kernel_cap c)
{
	return !emulated_code || emulated_code >= caps[c].since;
}

unsigned kernel_caps__version(void)
{
	unsigned major, minor;
	struct utsname u;

	if (emulated_code)
		return emulated_code;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return KERNEL_VERSION_CODE(major, minor);
}

void kernel_caps__fell_back(enum kernel_cap c)
{
	__atomic_fetch_or(&fallbacks, 1u << c, __ATOMIC_RELAXED);
}

unsigned kernel_caps__fallbacks(void)
{
	return __atomic_load_n(&fallbacks, __ATOMIC_RELAXED);
}

const char *kernel_caps__fallback_name(enum kernel_cap c)
{
	return caps[c].fallback;
}
