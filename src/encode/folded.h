/* SPDX-License-Identifier: MIT */
/*
 * Brendan Gregg's folded-stack text format, the input of flamegraph.pl,
 * speedscope and inferno: one line per distinct stack,
 *   comm[;thread_name/tid];root;...;leaf COUNT
 * with kernel frames suffixed "_[k]" so that flamegraph.pl --color=... tells
 * them apart. Lines are sorted, so equal profiles give equal files.
 */
#ifndef CPROF_FOLDED_H
#define CPROF_FOLDED_H

#include <stddef.h>

struct profile;

/*
 * On success *out is a malloc'ed, NUL-terminated text of *out_len bytes
 * (the NUL not counted) that the caller frees; returns 0 or a negative errno.
 */
int folded__encode(const struct profile *p, char **out, size_t *out_len);

#endif
