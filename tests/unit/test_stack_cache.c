// SPDX-License-Identifier: MIT
/*
 * stack_cache: what a stack id that names no stack gives, and (as root, on
 * a hash map standing in for the stack map: same key and value) a stack
 * read once per drain, its frames counted to the first zero, one gone
 * from the map said so, and the ids read deleted from the map at the end.
 */
#include <errno.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "sample/stack_cache.h"
#include "sampler_abi.h"
#include "test.h"

TEST(stack_cache_no_stack)
{
	struct stack_cache *c;
	uint32_t n = 7;
	int err = 1;

	CHECK_INT(stack_cache__new(16, &c), ==, 0);
	/* The kernel's -EFAULT: a user-mode sample has no kernel stack, and the reverse. */
	CHECK(!stack_cache__frames(c, -1, -EFAULT, &n, &err));
	CHECK_INT(err, ==, 0);
	CHECK_INT(n, ==, 0);
	CHECK(!stack_cache__frames(c, -1, -EEXIST, &n, &err));
	CHECK_INT(err, ==, -EEXIST);
	CHECK(!stack_cache__frames(c, -1, 16, &n, &err));
	CHECK_INT(err, ==, -ERANGE);
	CHECK(!stack_cache__frames(c, -1, 15, &n, &err));
	CHECK_INT(err, ==, -ENOENT);
	stack_cache__clear(c, -1);
	stack_cache__free(c);
	stack_cache__free(NULL);
}

static void put(int fd, int id, uint64_t first, uint32_t n)
{
	uint64_t ips[CPROF_MAX_STACK_DEPTH] = {0};

	for (uint32_t i = 0; i < n; i++)
		ips[i] = first + i;
	CHECK_INT(bpf_map_update_elem(fd, &id, ips, BPF_ANY), ==, 0);
}

TEST(stack_cache_read_once)
{
	uint64_t ips[CPROF_MAX_STACK_DEPTH];
	struct stack_cache *c;
	const uint64_t *got;
	uint32_t n;
	int fd, err, id = 3;

	if (geteuid() != 0)
		test_skip("needs root");
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stacks", sizeof(int), sizeof(ips), 16, NULL);
	CHECK(fd >= 0);
	CHECK_INT(stack_cache__new(16, &c), ==, 0);
	put(fd, 3, 0x1000, 3);
	put(fd, 4, 0x2000, CPROF_MAX_STACK_DEPTH);
	got = stack_cache__frames(c, fd, 3, &n, &err);
	CHECK(got && !err);
	CHECK_INT(n, ==, 3);
	CHECK_U64(got[0], ==, 0x1000);
	CHECK_U64(got[2], ==, 0x1002);
	/* Changed in the map since: this drain still has what it read. */
	put(fd, 3, 0x3000, 5);
	CHECK(stack_cache__frames(c, fd, 3, &n, &err) == got);
	CHECK_INT(n, ==, 3);
	CHECK(stack_cache__frames(c, fd, 4, &n, &err));
	CHECK_INT(n, ==, CPROF_MAX_STACK_DEPTH);
	CHECK(!stack_cache__frames(c, fd, 5, &n, &err));
	CHECK_INT(err, ==, -ENOENT);
	/* The drain's end: the stacks read are deleted, the next drain reads afresh. */
	stack_cache__clear(c, fd);
	CHECK(bpf_map_lookup_elem(fd, &id, ips) && errno == ENOENT);
	put(fd, 3, 0x4000, 2);
	got = stack_cache__frames(c, fd, 3, &n, &err);
	CHECK(got && n == 2 && got[0] == 0x4000);
	stack_cache__free(c);
	close(fd);
}
