// SPDX-License-Identifier: MIT
/*
 * Why the BPF object could not be loaded, in words a user can act on:
 * missing privileges said up front, RLIMIT_MEMLOCK before Linux 5.11, and
 * libbpf's own messages kept for -v.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include <bpf/libbpf.h>

#include "lib/kernel_caps.h"
#include "sample/load_errors.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

static int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[65536]; /* verifier logs come as one message */
	size_t n;

	/*
	 * libbpf is chatty about feature probes on old kernels, and its errors
	 * are restated by load_errors__explain(): all of it is -v material.
	 */
	(void)level;
	if (log_get_level() < LOG_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	/* libbpf starts its own messages with "libbpf: "; the prefix is said once. */
	fprintf(stderr, "cprof: libbpf: %s\n", strncmp(buf, "libbpf: ", 8) == 0 ? buf + 8 : buf);
	return 0;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Says up front what is missing instead of letting the kernel answer EPERM
 * somewhere inside libbpf. CAP_SYS_ADMIN covers both on every kernel.
 */
int load_errors__check_privileges(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return 0; /* cannot tell: let the kernel decide */
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	pr_err("cprof needs root, or the capabilities CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN "
	       "before Linux 5.8); running as uid %u without them",
	       (unsigned int)geteuid());
	return -EPERM;
}

/*
 * Before Linux 5.11 BPF maps are charged to RLIMIT_MEMLOCK, since then to the
 * memory cgroup. True, with the limit, when that explains a refused load: an
 * old kernel and a limit still finite because session.c could not raise it
 * (no CAP_SYS_RESOURCE).
 */
bool load_errors__memlock_too_low(unsigned long long *limit_kib)
{
	unsigned version = kernel_caps__version();
	struct rlimit rl;

	if (!version || version >= kernel_caps__since(KCAP_MEMCG_ACCOUNTING))
		return false;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	*limit_kib = rl.rlim_cur / 1024;
	return true;
}

void load_errors__explain(int err)
{
	unsigned long long limit_kib;

	switch (err) {
	case -EPERM:
	case -EACCES:
		if (load_errors__memlock_too_low(&limit_kib)) {
			pr_err("cannot load the BPF program: %s; this kernel (before 5.11) charges "
			       "BPF maps to RLIMIT_MEMLOCK, which is %llu KiB and cannot be raised "
			       "without CAP_SYS_RESOURCE: run `ulimit -l unlimited` first",
			       strerror(-err), limit_kib);
			break;
		}
		pr_err("cannot load the BPF program: %s; check kernel.unprivileged_bpf_disabled "
		       "and lockdown, and before Linux 5.11 RLIMIT_MEMLOCK (ulimit -l); -v shows "
		       "libbpf's log",
		       strerror(-err));
		break;
	case -ENOSYS:
		pr_err("cannot load the BPF program: this kernel has no bpf() system call "
		       "(CONFIG_BPF_SYSCALL=n)");
		break;
	case -EINVAL:
	case -E2BIG:
	case -EOPNOTSUPP:
		pr_err("cannot load the BPF program: %s; the kernel rejected it (cprof needs "
		       "Linux 4.18 or later with BPF perf_event programs); run with -v for "
		       "the verifier log",
		       strerror(-err));
		break;
	default:
		pr_err("cannot load the BPF program: %s (run with -v for libbpf's log)",
		       strerror(-err));
	}
}

void load_errors__route_libbpf(void)
{
	libbpf_set_print(log_libbpf);
}
