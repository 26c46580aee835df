// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "lib/sort.h"
#include "test.h"

struct item {
	int key;
	int order; /* where it was: equal keys must keep it */
};

static int by_key(const void *a, const void *b, void *ctx)
{
	const struct item *x = a, *y = b;

	(*(int *)ctx)++;
	return (x->key > y->key) - (x->key < y->key);
}

/* Every length up to a few runs and some large ones, few and many distinct keys. */
TEST(sort_pointers_sorted_and_stable)
{
	static const size_t lens[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099};
	static struct item items[4099];
	static void *v[4099];
	unsigned int seed = 7;
	size_t li, i, n, sum;
	int keys, calls;

	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (keys = 1; keys <= 1000; keys *= 10) {
			n = lens[li];
			for (i = 0; i < n; i++) {
				items[i] = (struct item){rand_r(&seed) % keys, (int)i};
				v[i] = &items[i];
			}
			calls = 0;
			CHECK_INT(sort__pointers(v, n, by_key, &calls), ==, 0);
			/* A permutation: each item once (orders are distinct, so their sum tells).
			 */
			sum = 0;
			for (i = 0; i < n; i++)
				sum += (size_t)((const struct item *)v[i])->order;
			CHECK_INT(sum, ==, n ? n * (n - 1) / 2 : 0);
			for (i = 1; i < n; i++) {
				const struct item *a = v[i - 1], *b = v[i];

				CHECK(a->key < b->key || (a->key == b->key && a->order < b->order));
			}
			/* Merge sort: n log n comparisons at most, whatever the input. */
			CHECK_INT(calls, <=, (int)(n * 13 + 8 * n));
		}
	}
}
