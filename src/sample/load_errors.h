/* SPDX-License-Identifier: MIT */
/*
 * Why the BPF object could not be loaded, said once in a line a user can
 * act on, instead of an EPERM from somewhere inside libbpf.
 */
#ifndef CPROF_LOAD_ERRORS_H
#define CPROF_LOAD_ERRORS_H

#include <stdbool.h>

/* libbpf's messages go to stderr with -v only (its errors are restated by load_errors__explain). */
void load_errors__route_libbpf(void);
/* 0, or -EPERM (said) when cprof runs without root or CAP_BPF and CAP_PERFMON. */
int load_errors__check_privileges(void);
/*
 * True, with the limit in KiB, when RLIMIT_MEMLOCK explains a refused map:
 * a kernel before 5.11 (which charges BPF maps to it) and a finite limit.
 */
bool load_errors__memlock_too_low(unsigned long long *limit_kib);
/* Logs why the load failed with err (a negative errno) and what to do. */
void load_errors__explain(int err);

#endif
