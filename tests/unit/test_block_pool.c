// SPDX-License-Identifier: MIT
/*
 * block_pool: a block given back is handed out again (no allocator round
 * trip), at most max_free are kept, sizes outside the pool's (above a
 * block, below its smallest) go to malloc,
 * and every block is whole (ASan checks the sizes).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/block_pool.h"
#include "test.h"

TEST(block_pool_reuses_what_is_given_back)
{
	struct block_pool *p = NULL;
	void *a, *b, *c;

	CHECK_INT(block_pool__new(4096, 0, 1, &p), ==, 0);
	a = block_pool__get(p, 4000);
	CHECK(a);
	memset(a, 1, 4096); /* the whole block is the caller's, not just size */
	block_pool__put(p, a, 4000);
	b = block_pool__get(p, 1500);
	CHECK(b == a);
	/* Only one is kept: the second given back is freed. */
	c = block_pool__get(p, 4096);
	CHECK(c && c != b);
	block_pool__put(p, b, 1500);
	block_pool__put(p, c, 4096);
	CHECK(block_pool__get(p, 2048) == b);
	block_pool__put(p, b, 2048);
	block_pool__free(p);
}

/*
 * As many blocks are kept as were ever out at once (a burst as large comes
 * back without malloc), never more than max_free.
 */
TEST(block_pool_keeps_what_a_burst_needs)
{
	struct block_pool *p = NULL;
	void *b[6];
	int i;

	CHECK_INT(block_pool__new(1024, 0, 4, &p), ==, 0);
	for (i = 0; i < 3; i++)
		b[i] = block_pool__get(p, 1000);
	for (i = 0; i < 3; i++)
		block_pool__put(p, b[i], 1000);
	/* The three come back, in the reverse order of their return. */
	for (i = 0; i < 3; i++)
		CHECK(block_pool__get(p, 1000) == b[2 - i]);
	for (i = 0; i < 3; i++)
		block_pool__put(p, b[i], 1000);
	/* Six out at once: only four are kept, the cap. */
	for (i = 0; i < 6; i++)
		b[i] = block_pool__get(p, 1000);
	for (i = 0; i < 6; i++)
		block_pool__put(p, b[i], 1000);
	for (i = 0; i < 4; i++)
		CHECK(block_pool__get(p, 1000) == b[3 - i]);
	for (i = 0; i < 4; i++)
		block_pool__put(p, b[3 - i], 1000);
	block_pool__free(p);
}

TEST(block_pool_sizes_outside_go_to_malloc)
{
	struct block_pool *p = NULL;
	void *big, *small, *kept;

	CHECK_INT(block_pool__new(4096, 0, 8, &p), ==, 0);
	kept = block_pool__get(p, 4096);
	block_pool__put(p, kept, 4096);
	/* Larger than a block: malloc'd, never the kept block; any smaller size is a block. */
	big = block_pool__get(p, 5000);
	CHECK(big && big != kept);
	memset(big, 2, 5000);
	block_pool__put(p, big, 5000);
	small = block_pool__get(p, 100);
	CHECK(small == kept);
	memset(small, 3, 4096);
	block_pool__put(p, small, 100);
	CHECK(block_pool__get(p, 3000) == kept);
	block_pool__put(p, kept, 3000);
	block_pool__put(p, NULL, 10);
	block_pool__free(p);
	block_pool__free(NULL);
	/* Without a pool: malloc and free. */
	small = block_pool__get(NULL, 10);
	CHECK(small);
	block_pool__put(NULL, small, 10);
}

/* Below the pool's smallest size: malloc'd, never a block, and freed when given back. */
TEST(block_pool_small_sizes_go_to_malloc)
{
	struct block_pool *p = NULL;
	void *kept, *small;

	CHECK_INT(block_pool__new(4096, 1024, 8, &p), ==, 0);
	kept = block_pool__get(p, 1024);
	block_pool__put(p, kept, 1024);
	small = block_pool__get(p, 1023);
	CHECK(small && small != kept);
	memset(small, 4, 1023);
	block_pool__put(p, small, 1023);
	/* The kept block is still there for a size in range. */
	CHECK(block_pool__get(p, 2000) == kept);
	block_pool__put(p, kept, 2000);
	block_pool__free(p);
}

static void *churn(void *arg)
{
	struct block_pool *p = arg;
	void *v[16];
	int i, round;

	for (round = 0; round < 2000; round++) {
		for (i = 0; i < 16; i++) {
			v[i] = block_pool__get(p, 2048 + (size_t)i * 64);
			if (!v[i])
				return (void *)1;
			memset(v[i], i, 2048 + (size_t)i * 64);
		}
		for (i = 0; i < 16; i++)
			block_pool__put(p, v[i], 2048 + (size_t)i * 64);
	}
	return NULL;
}

/* Got on one thread, given back on another: the event reader's queue. */
TEST(block_pool_threads)
{
	struct block_pool *p = NULL;
	pthread_t t[4];
	void *ret;
	int i;

	CHECK_INT(block_pool__new(4096, 0, 8, &p), ==, 0);
	for (i = 0; i < 4; i++)
		CHECK_INT(pthread_create(&t[i], NULL, churn, p), ==, 0);
	for (i = 0; i < 4; i++) {
		CHECK_INT(pthread_join(t[i], &ret), ==, 0);
		CHECK(ret == NULL);
	}
	block_pool__free(p);
}
