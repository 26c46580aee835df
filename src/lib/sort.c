// SPDX-License-Identifier: MIT
/* Stable merge sort of pointers; see sort.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sort.h"

/* Runs this short are sorted by insertion first: fewer passes, no calls. */
#define RUN 8

static void insertion(void **v, size_t n, sort_cmp_fn cmp, void *ctx)
{
	size_t i, j;
	void *x;

	for (i = 1; i < n; i++) {
		x = v[i];
		for (j = i; j > 0 && cmp(v[j - 1], x, ctx) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* src[lo..mid) and src[mid..hi), each sorted, into dst[lo..hi). */
static void merge(void **src, void **dst, size_t lo, size_t mid, size_t hi, sort_cmp_fn cmp,
		  void *ctx)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		dst[k++] = cmp(src[j], src[i], ctx) < 0 ? src[j++] : src[i++];
	while (i < mid)
		dst[k++] = src[i++];
	while (j < hi)
		dst[k++] = src[j++];
}

int sort__pointers(void **v, size_t n, sort_cmp_fn cmp, void *ctx)
{
	void **tmp, **src = v, **dst, **t;
	size_t i, width;

	if (n <= RUN) {
		insertion(v, n, cmp, ctx);
		return 0;
	}
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (i = 0; i < n; i += RUN)
		insertion(v + i, n - i < RUN ? n - i : RUN, cmp, ctx);
	dst = tmp;
	for (width = RUN; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			size_t mid = i + width < n ? i + width : n;
			size_t hi = i + 2 * width < n ? i + 2 * width : n;

			merge(src, dst, i, mid, hi, cmp, ctx);
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}
