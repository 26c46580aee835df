// SPDX-License-Identifier: MIT
/*
 * load_errors: RLIMIT_MEMLOCK named as the reason only on kernels before
 * 5.11 (emulated) with a finite limit, and a process without root or the
 * BPF capabilities refused up front. Each test runs in a child of its own,
 * so the limits and the uid it drops do not outlive it.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/kernel_caps.h"
#include "sample/load_errors.h"
#include "test.h"

TEST(load_errors_memlock_before_5_11)
{
	struct rlimit rl = {.rlim_cur = 64 << 10, .rlim_max = 64 << 10};
	unsigned long long kib = 0;

	CHECK_INT(setrlimit(RLIMIT_MEMLOCK, &rl), ==, 0);
	CHECK_INT(kernel_caps__emulate("5.10"), ==, 0);
	CHECK(load_errors__memlock_too_low(&kib));
	CHECK_U64(kib, ==, 64);
	/* Since 5.11 maps are charged to the memory cgroup: the limit explains nothing. */
	CHECK_INT(kernel_caps__emulate("5.11"), ==, 0);
	kib = 0;
	CHECK(!load_errors__memlock_too_low(&kib));
	CHECK_U64(kib, ==, 0);
}

TEST(load_errors_memlock_unlimited)
{
	struct rlimit rl = {.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};
	unsigned long long kib = 0;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		test_skip("cannot raise RLIMIT_MEMLOCK (no CAP_SYS_RESOURCE)");
	CHECK_INT(kernel_caps__emulate("4.18"), ==, 0);
	CHECK(!load_errors__memlock_too_low(&kib));
}

TEST(load_errors_privileges)
{
	if (geteuid() != 0)
		test_skip("needs root to drop it");
	CHECK_INT(load_errors__check_privileges(), ==, 0);
	/* An ordinary user: setresuid clears the effective capabilities. */
	CHECK_INT(setresgid(65534, 65534, 65534), ==, 0);
	CHECK_INT(setresuid(65534, 65534, 65534), ==, 0);
	CHECK_INT(load_errors__check_privileges(), ==, -EPERM);
}
