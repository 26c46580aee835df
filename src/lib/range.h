/* SPDX-License-Identifier: MIT */
/*
 * The lookup that symbol tables and perf maps share: which of a sorted
 * array of non-overlapping [start, end) address ranges holds an address.
 * Each element begins with its start and end (uint64_t); what follows is
 * the caller's, so one binary search serves every table.
 */
#ifndef CPROF_RANGE_H
#define CPROF_RANGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* qsort comparator for the sorted uint64_t address arrays these tables start from. */
static inline int range_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the range holding addr in ranges[0..n) of size-byte elements, or -1. */
static inline ptrdiff_t range_find(const void *ranges, size_t n, size_t size, uint64_t addr)
{
	const unsigned char *base = ranges;
	size_t lo = 0, hi = n;
	uint64_t v[2];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		/* memcpy: the elements are the caller's structs, not uint64_t arrays. */
		memcpy(v, base + mid * size, sizeof(v[0]));
		if (v[0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	memcpy(v, base + (lo - 1) * size, sizeof(v));
	return addr < v[1] ? (ptrdiff_t)(lo - 1) : -1;
}

/*
 * Index of the first range of ranges[0..n) (as above) that ends after addr:
 * where a range starting at addr goes, and the first it may overlap.
 */
static inline size_t range_first_ending_after(const void *ranges, size_t n, size_t size,
					      uint64_t addr)
{
	const unsigned char *base = ranges;
	size_t lo = 0, hi = n;
	uint64_t v[2];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(v, base + mid * size, sizeof(v));
		if (v[1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
