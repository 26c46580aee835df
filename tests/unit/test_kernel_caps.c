// SPDX-License-Identifier: MIT
/*
 * kernel_caps: the releases CPROF_KERNEL_AS accepts and refuses, and what
 * the table says each lacks (the fallbacks an old kernel forces).
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/kernel_caps.h"
#include "test.h"

TEST(kernel_caps_releases)
{
	static const char *const bad[] = {"4.17",  "4",	   "4.18.0", "4.18-rc1",
					  "v5.4",  "5.4x", "abc",    "100.1",
					  "5.100", " 5.4", "3.10",   "123456789012345678"};
	size_t i;

	CHECK_INT(kernel_caps__emulate("4.18"), ==, 0);
	CHECK_STR(kernel_caps__emulated(), "4.18");
	CHECK_U64(kernel_caps__version(), ==, KERNEL_VERSION_CODE(4, 18));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(kernel_caps__emulate(bad[i]), ==, -EINVAL);
		CHECK_STR(kernel_caps__emulated(), "4.18"); /* unchanged */
	}
	CHECK_INT(kernel_caps__emulate(NULL), ==, 0);
	CHECK(!kernel_caps__emulated());
	CHECK_INT(setenv("CPROF_KERNEL_AS", "5.10", 1), ==, 0);
	CHECK_INT(kernel_caps__init(), ==, 0);
	CHECK_STR(kernel_caps__emulated(), "5.10");
	CHECK_INT(setenv("CPROF_KERNEL_AS", "", 1), ==, 0);
	CHECK_INT(kernel_caps__init(), ==, 0);
	CHECK(!kernel_caps__emulated());
}

TEST(kernel_caps_table)
{
	int c;

	/* Not emulating: every capability is the probe's to decide. */
	for (c = 0; c < KCAP_MAX; c++)
		CHECK(kernel_caps__has(c));
	CHECK_INT(kernel_caps__emulate("4.18"), ==, 0);
	for (c = 0; c < KCAP_MAX; c++)
		CHECK(!kernel_caps__has(c));
	CHECK_INT(kernel_caps__emulate("5.4"), ==, 0);
	CHECK(kernel_caps__has(KCAP_VMLINUX_BTF));
	CHECK(!kernel_caps__has(KCAP_UNWINDER));
	CHECK(!kernel_caps__has(KCAP_BATCH_OPS));
	CHECK_INT(kernel_caps__emulate("5.5"), ==, 0);
	CHECK(kernel_caps__has(KCAP_UNWINDER));
	CHECK(!kernel_caps__has(KCAP_BATCH_OPS));
	CHECK_INT(kernel_caps__emulate("5.6"), ==, 0);
	CHECK(kernel_caps__has(KCAP_BATCH_OPS));
	CHECK(!kernel_caps__has(KCAP_MEMCG_ACCOUNTING));
	CHECK_INT(kernel_caps__emulate("5.10"), ==, 0);
	CHECK(!kernel_caps__has(KCAP_BPF_LOOP));
	CHECK(!kernel_caps__has(KCAP_LAZY_MAPS));
	CHECK(!kernel_caps__has(KCAP_PERF_LINK));
	CHECK_INT(kernel_caps__emulate("5.15"), ==, 0);
	CHECK(kernel_caps__has(KCAP_PERF_LINK));
	CHECK_INT(kernel_caps__emulate("5.17"), ==, 0);
	CHECK(kernel_caps__has(KCAP_BPF_LOOP));
	CHECK(kernel_caps__has(KCAP_KSYM_PROG));
	CHECK(!kernel_caps__has(KCAP_LAZY_MAPS));
	CHECK_INT(kernel_caps__emulate("6.1"), ==, 0);
	for (c = 0; c < KCAP_MAX; c++)
		CHECK(kernel_caps__has(c));
}

TEST(kernel_caps_fallbacks)
{
	CHECK_U64(kernel_caps__fallbacks(), ==, 0);
	kernel_caps__fell_back(KCAP_BATCH_OPS);
	kernel_caps__fell_back(KCAP_BPF_LOOP);
	kernel_caps__fell_back(KCAP_BATCH_OPS);
	CHECK_U64(kernel_caps__fallbacks(), ==, (1u << KCAP_BATCH_OPS) | (1u << KCAP_BPF_LOOP));
	CHECK(kernel_caps__fallback_name(KCAP_BATCH_OPS)[0]);
}
