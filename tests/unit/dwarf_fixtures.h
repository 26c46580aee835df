/* SPDX-License-Identifier: MIT */
/*
 * For the DWARF readers' tests: fixture sources written out, the
 * addresses of a built file's functions, and Debian's libc's debug file.
 */
#ifndef CPROF_TEST_DWARF_FIXTURES_H
#define CPROF_TEST_DWARF_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

struct addrs {
	uint64_t *v;
	size_t n, cap;
};

void write_text(const char *path, const char *text);
/* Every function's start, and each step-th byte inside it, sorted and unique. */
void function_addrs(const char *file, unsigned step, struct addrs *a);
/* The debug file of the system's libc (libc6-dbg), by its build ID; skips the test without. */
const char *libc_debug_file(void);

#endif
