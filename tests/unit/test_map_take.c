// SPDX-License-Identifier: MIT
/*
 * map_take: a real BPF hash map of 3,000 entries (more than a call's 512,
 * so several calls and the kernel's cursor between them), preallocated and
 * not, is taken whole and left empty, each entry once with its value; a
 * second take of the empty map takes nothing. Needs root and Linux 5.6
 * (batches).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/kernel_caps.h"
#include "sample/map_take.h"
#include "test.h"

#define ENTRIES 3000u

struct key {
	__u32 a;
	__u32 b;
	__u64 c;
};

static int make_map(__u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);

	return bpf_map_create(BPF_MAP_TYPE_HASH, "take_test", sizeof(struct key), sizeof(__u64),
			      4096, &o);
}

static void fill(int fd)
{
	struct key k = {0};
	__u64 v;
	__u32 i;

	for (i = 0; i < ENTRIES; i++) {
		k.a = i;
		k.b = ~i;
		k.c = (__u64)i << 32;
		v = i * 7ull + 1;
		CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST));
	}
}

static void take_whole(int fd)
{
	struct map_take *t;
	unsigned char *seen = calloc(ENTRIES, 1);
	const struct key *k;
	struct key next;
	size_t i;
	int err;

	CHECK(seen);
	CHECK(!map_take__new(sizeof(struct key), sizeof(__u64), &t));
	fill(fd);
	err = map_take__all(t, fd);
	if (err == -EOPNOTSUPP)
		SKIP("no batched lookup and delete (Linux 5.6+)");
	CHECK_INT(err, ==, 0);
	CHECK_U64(map_take__count(t), ==, ENTRIES);
	for (i = 0; i < map_take__count(t); i++) {
		k = map_take__key(t, i);
		CHECK(k->a < ENTRIES);
		CHECK_U64(k->b, ==, ~k->a);
		CHECK_U64(k->c, ==, (__u64)k->a << 32);
		CHECK_U64(*(const __u64 *)map_take__value(t, i), ==, k->a * 7ull + 1);
		CHECK(!seen[k->a]);
		seen[k->a] = 1;
	}
	CHECK(bpf_map_get_next_key(fd, NULL, &next) && errno == ENOENT);
	CHECK_INT(map_take__all(t, fd), ==, 0);
	CHECK_U64(map_take__count(t), ==, 0);
	map_take__free(t);
	free(seen);
}

TEST(map_take_takes_every_entry_once)
{
	int fd;

	if (geteuid())
		SKIP("needs root for BPF");
	fd = make_map(0);
	CHECK(fd >= 0);
	take_whole(fd);
	close(fd);
	fd = make_map(BPF_F_NO_PREALLOC);
	CHECK(fd >= 0);
	take_whole(fd);
	close(fd);
}

/*
 * A call that fails takes nothing: an array map has no lookup-and-delete
 * batches, and the kernel says so (ENOTSUPP) with the count left as it was
 * given, as a kernel before 5.6 does for every map. That count is no entry.
 */
TEST(map_take_failed_call_takes_nothing)
{
	struct map_take *t;
	__u32 k = 3;
	__u64 v = 42;
	int fd;

	if (geteuid())
		SKIP("needs root for BPF");
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "take_test", sizeof(__u32), sizeof(__u64), 16,
			    NULL);
	CHECK(fd >= 0);
	CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_ANY));
	CHECK(!map_take__new(sizeof(__u32), sizeof(__u64), &t));
	CHECK_INT(map_take__all(t, fd), ==, -EOPNOTSUPP);
	CHECK_U64(map_take__count(t), ==, 0);
	CHECK_INT(map_take__all(t, fd), ==, -EOPNOTSUPP);
	CHECK_U64(map_take__count(t), ==, 0);
	map_take__free(t);
	close(fd);
}

/* As Linux 4.18 (CPROF_KERNEL_AS): no batches, nothing taken, the map left whole, said once. */
TEST(map_take_as_4_18_falls_back)
{
	struct map_take *t;
	struct key k, next;
	size_t n = 0;
	int fd;

	if (geteuid())
		SKIP("needs root for BPF");
	CHECK_INT(kernel_caps__emulate("4.18"), ==, 0);
	fd = make_map(0);
	CHECK(fd >= 0);
	fill(fd);
	CHECK(!map_take__new(sizeof(struct key), sizeof(__u64), &t));
	CHECK_INT(map_take__all(t, fd), ==, -EOPNOTSUPP);
	CHECK_U64(map_take__count(t), ==, 0);
	CHECK_U64(kernel_caps__fallbacks(), ==, 1u << KCAP_BATCH_OPS);
	for (; !bpf_map_get_next_key(fd, n ? &k : NULL, &next); n++)
		k = next;
	CHECK_U64(n, ==, ENTRIES);
	map_take__free(t);
	close(fd);
}
