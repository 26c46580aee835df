/* SPDX-License-Identifier: MIT */
/*
 * Arrays grown an element at a time (the flame graph's layout, the pprof
 * reader's tables), by doubling, so that n appends cost O(n) copies in all.
 */
#ifndef CPROF_ARRAY_H
#define CPROF_ARRAY_H

#include <stddef.h>

/*
 * Room for need elements of size bytes in *arr, whose capacity is *cap:
 * doubled (from 64) until it holds them. 0, or -ENOMEM with *arr intact.
 */
int array__grow(void **arr, size_t *cap, size_t need, size_t size);

#endif
