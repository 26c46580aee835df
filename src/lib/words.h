/* SPDX-License-Identifier: MIT */
/* What cprof prints for people: every count agrees with its noun. */
#ifndef CPROF_WORDS_H
#define CPROF_WORDS_H

#include <stdint.h>

/* plural(n, "process", "processes"): "1 process", "2 processes", "0 processes". */
static inline const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
