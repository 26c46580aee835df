// SPDX-License-Identifier: MIT
/* The folded-stack encoder on a small hand-built profile. */
#include <stdlib.h>

#include "build/profile.h"
#include "encode/folded.h"
#include "test.h"

enum { MAIN = 1, FOO, BAR, SYSCALL, WEIRD, UNKNOWN };

static struct profile *build_profile(void)
{
	struct profile_meta meta = {.hz = 100, .period_ns = 10000000};
	struct profile_mapping app = {
		.start = 0x1000, .limit = 0x9000, .path = "/bin/app", .build_id = ""};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x1100, .name = "main"},
		{.mapping = 1, .address = 0x1200, .name = "foo"},
		{.mapping = 1, .address = 0x1300, .name = "bar"},
		{.address = 0xffffffff81000010, .name = "do_syscall_64", .kernel = true},
		{.mapping = 1, .address = 0x1400, .name = "a;b\tc d\n"},
		{.mapping = 1, .address = 0x1500, .name = "app+0x500", .unknown = true},
	};
	static const uint32_t s1[] = {BAR, FOO, MAIN}, s3[] = {SYSCALL, BAR, MAIN}, s4[] = {WEIRD},
			      s5[] = {FOO, MAIN}, s7[] = {UNKNOWN, MAIN};
	struct profile_labels l1 = {.pid = 1, .comm = "app", .thread_name = "app"};
	struct profile_labels l2 = {.pid = 2, .comm = "app", .thread_name = "app"};
	struct profile_labels l4 = {.pid = 3, .comm = "b;x\ny", .thread_name = "b"};
	struct profile_labels l5 = {.pid = 1, .tid = 12, .comm = "app", .thread_name = "worker"};
	struct profile_labels l6 = {.pid = 0, .comm = "idle", .thread_name = ""};
	struct profile_labels l8 = {.pid = 4, .tid = 4, .comm = "solo", .thread_name = ""};
	struct profile *p = profile__new(&meta);
	size_t i;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &app), ==, 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, s1, 3, &l1, 2), ==, 0);
	/* Another pid with the same comm and stack: one folded line. */
	CHECK_INT(profile__add_sample(p, s1, 3, &l2, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, s3, 3, &l1, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, s4, 1, &l4, 4), ==, 0);
	CHECK_INT(profile__add_sample(p, s5, 2, &l5, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, NULL, 0, &l6, 7), ==, 0);
	CHECK_INT(profile__add_sample(p, s7, 2, &l1, 6), ==, 0);
	CHECK_INT(profile__add_sample(p, NULL, 0, &l8, 1), ==, 0);
	return p;
}

TEST(folded_small_profile)
{
	struct profile *p = build_profile();
	char *out;
	size_t len;

	CHECK_INT(folded__encode(p, &out, &len), ==, 0);
	CHECK_STR(out, "app;main;app+0x500 6\n"
		       "app;main;bar;do_syscall_64_[k] 1\n"
		       "app;main;foo;bar 5\n"
		       "app;worker/12;main;foo 1\n"
		       "b:x_y;a:b_c d_ 4\n"
		       "idle 7\n"
		       "solo;solo/4 1\n");
	CHECK_U64(len, ==, strlen(out));
	free(out);
	profile__free(p);
}

TEST(folded_empty_profile)
{
	struct profile_meta meta = {.period_ns = 1};
	struct profile *p = profile__new(&meta);
	char *out;
	size_t len;

	CHECK(p);
	CHECK_INT(folded__encode(p, &out, &len), ==, 0);
	CHECK(out);
	CHECK_U64(len, ==, 0);
	CHECK_STR(out, "");
	free(out);
	profile__free(p);
}

TEST(folded_many_samples)
{
	struct profile_meta meta = {.period_ns = 1};
	struct profile *p = profile__new(&meta);
	struct profile_frame f = {.address = 1, .name = "leaf"};
	struct profile_labels l = {.comm = "app", .thread_name = "app"};
	uint32_t stack[1], i;
	char *out;
	size_t len;

	CHECK(p);
	stack[0] = profile__add_frame(p, &f);
	/* Distinct samples (by pid) that all fold into one line. */
	for (i = 0; i < 50000; i++) {
		l.pid = i;
		CHECK_INT(profile__add_sample(p, stack, 1, &l, 2), ==, 0);
	}
	CHECK_INT(folded__encode(p, &out, &len), ==, 0);
	CHECK_STR(out, "app;leaf 100000\n");
	free(out);
	profile__free(p);
}
