// SPDX-License-Identifier: MIT
/* The table of walked stacks as the kernel streams them (walked_stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample/walked_stacks.h"
#include "test.h"

/* A record as the BPF side sends it: the header, then n frames, hashed as it hashes them. */
static uint32_t record(struct cprof_ustack *u, uint64_t seed, uint32_t n, uint32_t stop)
{
	__u64 mix[2] = {CPROF_USTACK_SEED0, CPROF_USTACK_SEED1};
	uint32_t i;

	memset(u, 0, sizeof(*u));
	u->magic = CPROF_USTACK_MAGIC;
	u->n = n;
	u->stop = stop;
	u->kind = stop == CPROF_STOP_MAX ? CPROF_USTACK_KERNEL : CPROF_USTACK_WALKED;
	if (u->kind == CPROF_USTACK_KERNEL)
		u->stop = CPROF_STOP_NONE;
	for (i = 0; i < n; i++) {
		u->ips[i] = 0x400000 + seed * 0x1000 + i * 0x10;
		cprof_ustack_mix(mix, u->ips[i]);
	}
	cprof_ustack_hash(mix, n, u->stop, u->kind, &u->hash);
	return (uint32_t)offsetof(struct cprof_ustack, ips) + n * 8;
}

static const struct walked_stack *get(struct walked_stacks *ws, const struct cprof_ustack *u)
{
	const __u64 h[2] = {u->hash.lo, u->hash.hi};

	return walked_stacks__get(ws, h);
}

static bool forgotten(const struct cprof_stack_hash *h, size_t n, const struct cprof_ustack *u)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].lo == u->hash.lo && h[i].hi == u->hash.hi)
			return true;
	return false;
}

TEST(walked_stacks_kept_by_hash)
{
	struct walked_stacks *ws;
	const struct walked_stack *w;
	struct cprof_ustack a, b, c;
	uint32_t na = record(&a, 1, 5, CPROF_STOP_NONE), nb = record(&b, 1, 4, CPROF_STOP_NONE);

	struct cprof_ustack k;

	/* Only the frame count differs, or only the stop, or only the kind: other hashes. */
	record(&c, 1, 5, CPROF_STOP_READ);
	record(&k, 1, 5, CPROF_STOP_MAX);
	CHECK(a.hash.lo != b.hash.lo && a.hash.lo != c.hash.lo && b.hash.lo != c.hash.lo);
	CHECK(k.hash.lo != a.hash.lo && k.hash.lo != c.hash.lo);
	CHECK_INT(walked_stacks__new(64, &ws), ==, 0);
	CHECK_INT(walked_stacks__add(ws, &a, na), ==, 0);
	CHECK_INT(walked_stacks__add(ws, &b, nb), ==, 0);
	/* Sent twice (two CPUs met it at once): one entry. */
	CHECK_INT(walked_stacks__add(ws, &a, na), ==, 0);
	CHECK_U64(walked_stacks__count(ws), ==, 2);
	w = get(ws, &a);
	CHECK(w);
	CHECK_INT(w->n, ==, 5);
	CHECK_INT(w->stop, ==, CPROF_STOP_NONE);
	CHECK_U64(w->ips[4], ==, a.ips[4]);
	CHECK_INT(get(ws, &b)->n, ==, 4);
	CHECK_INT(walked_stacks__add(ws, &k, na), ==, 0);
	CHECK_INT(get(ws, &k)->kind, ==, CPROF_USTACK_KERNEL);
	CHECK_INT(get(ws, &a)->kind, ==, CPROF_USTACK_WALKED);
	/* The same low half, another high half: not this stack. */
	a.hash.hi ^= 2;
	CHECK(!get(ws, &a));
	walked_stacks__free(ws);
	walked_stacks__free(NULL);
}

TEST(walked_stacks_malformed_records_dropped)
{
	struct walked_stacks *ws;
	struct cprof_ustack a;
	uint32_t n = record(&a, 3, 10, CPROF_STOP_NONE);

	CHECK_INT(walked_stacks__new(64, &ws), ==, 0);
	CHECK_INT(walked_stacks__add(ws, &a, 8), ==, -EINVAL);
	CHECK_INT(walked_stacks__add(ws, &a, n - 8), ==, -EINVAL);
	a.n = CPROF_UNWIND_MAX_DEPTH + 1;
	CHECK_INT(walked_stacks__add(ws, &a, sizeof(a)), ==, -EINVAL);
	CHECK_U64(walked_stacks__dropped(ws), ==, 3);
	CHECK_U64(walked_stacks__count(ws), ==, 0);
	walked_stacks__free(ws);
}

/* A stack no record brought: the kernel is told to forget it, so that it sends it again. */
TEST(walked_stacks_unknown_hash_forgotten_by_the_kernel)
{
	const struct cprof_stack_hash *h;
	struct walked_stacks *ws;
	struct cprof_ustack a;
	size_t n;

	record(&a, 4, 3, CPROF_STOP_NONE);
	CHECK_INT(walked_stacks__new(64, &ws), ==, 0);
	CHECK(!get(ws, &a));
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 1);
	CHECK(forgotten(h, n, &a));
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 0);
	walked_stacks__free(ws);
}

/*
 * Past three quarters of the kernel's room, the stacks named longest ago are
 * forgotten down to half; each stays two drains for the counts taken while
 * the kernel still knew it, and one sent again is kept as new.
 */
TEST(walked_stacks_forget_the_oldest_and_keep_them_two_drains)
{
	enum { CAP = 40, N = 32 };
	static struct cprof_ustack u[N];
	const struct cprof_stack_hash *h;
	struct walked_stacks *ws;
	uint32_t size[N];
	size_t n, i, k;

	CHECK_INT(walked_stacks__new(CAP, &ws), ==, 0);
	for (i = 0; i < N; i++)
		size[i] = record(&u[i], i, 1 + i % 7, CPROF_STOP_NONE);
	/* Drain 1: stacks 0-9 arrive; drain 2: 10-19; drain 3: 20-31 and 0 named again. */
	for (i = 0; i < 10; i++)
		CHECK_INT(walked_stacks__add(ws, &u[i], size[i]), ==, 0);
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 0);
	for (i = 10; i < 20; i++)
		CHECK_INT(walked_stacks__add(ws, &u[i], size[i]), ==, 0);
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 0);
	for (i = 20; i < N; i++)
		CHECK_INT(walked_stacks__add(ws, &u[i], size[i]), ==, 0);
	CHECK(get(ws, &u[0]));
	/* 32 kept, over 30 (three quarters of 40): down to 20, the oldest first. */
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 12);
	/* All of drain 1's but stack 0, named again; three of drain 2's; none of drain 3's. */
	for (i = 1, k = 0; i < N; i++) {
		if (i < 10)
			CHECK(forgotten(h, n, &u[i]));
		else if (i < 20)
			k += forgotten(h, n, &u[i]);
		else
			CHECK(!forgotten(h, n, &u[i]));
	}
	CHECK_U64(k, ==, 3);
	CHECK(!forgotten(h, n, &u[0]));
	/* Stacks 2 and 3 are among them, each of the tests below needs one. */
	CHECK(forgotten(h, n, &u[2]) && forgotten(h, n, &u[3]));
	/* Still there for the drain after. */
	CHECK(get(ws, &u[1]));
	CHECK_U64(walked_stacks__count(ws), ==, N);
	/* Stack 2 is sent again: the kernel knows it again. */
	CHECK_INT(walked_stacks__add(ws, &u[2], size[2]), ==, 0);
	walked_stacks__end_drain(ws, &h, &n);
	CHECK_U64(n, ==, 0);
	CHECK(get(ws, &u[3]));
	walked_stacks__end_drain(ws, &h, &n);
	/* Two drains on, the forgotten are gone, but the one sent again. */
	CHECK_U64(walked_stacks__count(ws), ==, N - 11);
	CHECK(get(ws, &u[2]));
	CHECK(!get(ws, &u[3]));
	walked_stacks__free(ws);
}
