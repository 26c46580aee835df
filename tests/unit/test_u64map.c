// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "lib/u64map.h"
#include "test.h"

TEST(u64map_insert_get_delete_against_reference)
{
	/* A dense reference array checks every operation on a shuffled key set. */
	enum { N = 5000 };
	static uint64_t ref[N];
	static bool present[N];
	struct u64map *m = u64map__new();
	uint64_t v, k;
	size_t pos = 0, seen = 0;
	unsigned int seed = 1;
	int i, round;

	CHECK(m);
	for (round = 0; round < 20000; round++) {
		i = rand_r(&seed) % N;
		k = (uint64_t)i * 0x1000 + 0x7f0000000000ULL; /* address-like keys */
		if (rand_r(&seed) % 3 == 0) {
			CHECK_INT(u64map__delete(m, k), ==, present[i]);
			present[i] = false;
		} else {
			ref[i] = (uint64_t)round;
			present[i] = true;
			CHECK_INT(u64map__set(m, k, ref[i]), ==, 0);
		}
	}
	for (i = 0; i < N; i++) {
		k = (uint64_t)i * 0x1000 + 0x7f0000000000ULL;
		CHECK_INT(u64map__get(m, k, &v), ==, present[i]);
		if (present[i])
			CHECK_U64(v, ==, ref[i]);
		seen += present[i];
	}
	CHECK_U64(u64map__count(m), ==, seen);
	seen = 0;
	while (u64map__next(m, &pos, &k, &v))
		seen++;
	CHECK_U64(seen, ==, u64map__count(m));
	u64map__free(m);
	u64map__free(NULL);
}

TEST(u64map_key_zero_is_a_normal_key)
{
	struct u64map *m = u64map__new();
	uint64_t v = 1;

	CHECK(!u64map__get(m, 0, &v));
	CHECK_INT(u64map__set(m, 0, 42), ==, 0);
	CHECK(u64map__get(m, 0, &v));
	CHECK_U64(v, ==, 42);
	CHECK(u64map__delete(m, 0));
	CHECK(!u64map__get(m, 0, NULL));
	u64map__free(m);
}
