// SPDX-License-Identifier: MIT
/* The folded-stack encoder on a small hand-built profile. */
#include <stdlib.h>
#include <string.h>

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
		{.mapping = 1, .address = 0x1500, .name = "app+0x500", .kind = FRAME_UNNAMED},
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

/*
 * Lines that share long prefixes and differ anywhere, each at a few
 * addresses: merged by text, sorted as strcmp sorts them. Two names that
 * fold to the same text ("x;y" and "x:y") make one line.
 */
TEST(folded_sorted_and_merged_by_text)
{
	struct profile_meta meta = {.period_ns = 1};
	struct profile *p = profile__new(&meta);
	struct profile_labels l = {.pid = 1, .comm = "app", .thread_name = "app"};
	static const char *const names[] = {"std::vector<int, std::allocator<int> >::push_back",
					    "std::vector<int, std::allocator<int> >::push_bac",
					    "x;y",
					    "x:y",
					    "\xc3\xa9t\xc3\xa9",
					    "a",
					    "b"};
	enum { NNAMES = sizeof(names) / sizeof(names[0]), NFRAMES = 3 * NNAMES };
	uint32_t ids[NFRAMES], stack[6], i, k;
	uint64_t total = 0, sum = 0;
	char *out, *line, *prev = NULL, *save = NULL;
	size_t len;

	CHECK(p);
	for (i = 0; i < NFRAMES; i++) {
		struct profile_frame f = {.address = 0x1000 + i, .name = names[i % NNAMES]};

		ids[i] = profile__add_frame(p, &f);
	}
	/* Every 6-frame stack over a pseudo-random walk of the frames. */
	for (i = 0, k = 7; i < 3000; i++) {
		for (uint32_t d = 0; d < 6; d++) {
			k = k * 1103515245u + 12345u;
			stack[d] = ids[(k >> 16) % (d < 4 ? 3 : NFRAMES)];
		}
		CHECK_INT(profile__add_sample(p, stack, 6, &l, i % 5 + 1), ==, 0);
		total += i % 5 + 1;
	}
	CHECK_INT(folded__encode(p, &out, &len), ==, 0);
	CHECK(!strstr(out, "x;y"));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *count = strrchr(line, ' ');

		CHECK(count);
		*count = '\0';
		sum += strtoull(count + 1, NULL, 10);
		/* Strictly increasing: sorted, and each text once. */
		if (prev)
			CHECK_INT(strcmp(prev, line), <, 0);
		prev = line;
	}
	CHECK_U64(sum, ==, total);
	free(out);
	profile__free(p);
}
