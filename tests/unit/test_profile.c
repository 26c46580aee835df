// SPDX-License-Identifier: MIT
/* String interning and the profile model's add-or-find deduplication. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "build/profile.h"
#include "lib/strpool.h"
#include "resolve/symbolizer.h"
#include "test.h"

TEST(strpool_add_keeps_one_copy)
{
	struct strpool *set = strpool__new();
	char buf[16];

	CHECK(set);
	CHECK_U64(strpool__count(set), ==, 0);
	CHECK(!strpool__str(set, 0));
	CHECK_INT(strpool__add(set, ""), ==, 0);
	CHECK_INT(strpool__add(set, "a"), ==, 1);
	CHECK_INT(strpool__add(set, "b"), ==, 2);
	strcpy(buf, "a");
	CHECK_INT(strpool__add(set, buf), ==, 1);
	CHECK_INT(strpool__add(set, ""), ==, 0);
	CHECK_U64(strpool__count(set), ==, 3);
	CHECK_STR(strpool__str(set, 0), "");
	CHECK_STR(strpool__str(set, 2), "b");
	CHECK(strpool__str(set, 1) != buf);
	CHECK(!strpool__str(set, 3));
	CHECK_INT(strpool__add(set, "c"), ==, 3);
	strpool__free(set);
	strpool__free(NULL);
}

TEST(strpool_pointers_stable)
{
	struct strpool *set = strpool__new();
	const char *first;
	char buf[32];
	long i;

	CHECK(set);
	CHECK_INT(strpool__add(set, "first"), ==, 0);
	first = strpool__str(set, 0);
	for (i = 1; i <= 50000; i++) {
		snprintf(buf, sizeof(buf), "s%ld", i);
		CHECK_INT(strpool__add(set, buf), ==, i);
	}
	CHECK(strpool__str(set, 0) == first);
	CHECK_STR(first, "first");
	for (i = 1; i <= 50000; i += 997) {
		snprintf(buf, sizeof(buf), "s%ld", i);
		CHECK_INT(strpool__add(set, buf), ==, i);
		CHECK_STR(strpool__str(set, (size_t)i), buf);
	}
	CHECK_U64(strpool__count(set), ==, 50001);
	strpool__free(set);
}

static struct profile *new_profile(void)
{
	struct profile_meta meta = {
		.hz = 100, .period_ns = 10000000, .time_ns = 1, .duration_ns = 2};
	struct profile *p = profile__new(&meta);

	CHECK(p);
	return p;
}

TEST(profile_intern)
{
	struct profile *p = new_profile();
	char a[8] = "main", b[8] = "main";
	const char *ia = profile__intern(p, a), *ib = profile__intern(p, b);

	CHECK(ia && ia == ib);
	CHECK(ia != a);
	CHECK_STR(ia, "main");
	CHECK(profile__intern(p, NULL) == profile__intern(p, ""));
	CHECK(profile__intern(p, "x") != ia);
	profile__free(p);
	profile__free(NULL);
}

TEST(profile_meta_and_empty)
{
	struct profile *p = new_profile();
	struct profile *q = profile__new(NULL);

	CHECK_U64(profile__meta(p)->period_ns, ==, 10000000);
	CHECK_U64(profile__meta(p)->duration_ns, ==, 2);
	profile__set_duration(p, 42);
	CHECK_U64(profile__meta(p)->duration_ns, ==, 42);
	CHECK_U64(profile__mapping_count(p), ==, 0);
	CHECK_U64(profile__frame_count(p), ==, 0);
	CHECK_U64(profile__sample_count(p), ==, 0);
	CHECK_U64(profile__comment_count(p), ==, 0);
	CHECK_U64(profile__total_count(p), ==, 0);
	CHECK(!profile__mapping(p, 0));
	CHECK(!profile__mapping(p, 1));
	CHECK(!profile__frame(p, 1));
	CHECK(!profile__sample(p, 0));
	CHECK(!profile__comment(p, 0));
	CHECK(q);
	CHECK_U64(profile__meta(q)->period_ns, ==, 0);
	profile__free(q);
	profile__free(p);
}

TEST(profile_mapping_dedup)
{
	struct profile *p = new_profile();
	char path[32] = "/usr/bin/app";
	struct profile_mapping m = {.start = 0x1000,
				    .limit = 0x2000,
				    .offset = 0x100,
				    .path = path,
				    .build_id = "abcd"};
	struct profile_mapping m2;
	const struct profile_mapping *got;

	CHECK_INT(profile__add_mapping(p, &m), ==, 1);
	/* Equal content through other pointers is the same mapping. */
	m2 = m;
	m2.path = "/usr/bin/app";
	CHECK_INT(profile__add_mapping(p, &m2), ==, 1);
	m2.offset = 0;
	CHECK_INT(profile__add_mapping(p, &m2), ==, 2);
	m2 = m;
	m2.build_id = "";
	CHECK_INT(profile__add_mapping(p, &m2), ==, 3);
	m2 = m;
	m2.kernel = true;
	CHECK_INT(profile__add_mapping(p, &m2), ==, 4);
	m2 = m;
	m2.limit = 0x3000;
	CHECK_INT(profile__add_mapping(p, &m2), ==, 5);
	m2 = m;
	m2.start = 0;
	CHECK_INT(profile__add_mapping(p, &m2), ==, 6);
	m2 = m;
	m2.path = NULL;
	m2.build_id = NULL;
	CHECK_INT(profile__add_mapping(p, &m2), ==, 7);
	CHECK_INT(profile__add_mapping(p, &m), ==, 1);
	CHECK_U64(profile__mapping_count(p), ==, 7);

	/* The model keeps its own copy of the strings. */
	strcpy(path, "/changed");
	got = profile__mapping(p, 1);
	CHECK(got);
	CHECK_STR(got->path, "/usr/bin/app");
	CHECK(got->path == profile__intern(p, "/usr/bin/app"));
	CHECK_STR(got->build_id, "abcd");
	CHECK_U64(got->offset, ==, 0x100);
	CHECK_STR(profile__mapping(p, 7)->path, "");
	CHECK(!profile__mapping(p, 8));
	profile__free(p);
}

TEST(profile_frame_dedup)
{
	struct profile *p = new_profile();
	struct profile_mapping m = {.start = 0x1000, .limit = 0x2000, .path = "/a", .build_id = ""};
	struct profile_frame f = {.mapping = 1, .address = 0x1234, .name = "foo"};
	struct profile_frame f2;
	const struct profile_frame *got;

	CHECK_INT(profile__add_mapping(p, &m), ==, 1);
	CHECK_INT(profile__add_frame(p, &f), ==, 1);
	CHECK_INT(profile__add_frame(p, &f), ==, 1);
	f2 = f;
	f2.address++;
	CHECK_INT(profile__add_frame(p, &f2), ==, 2);
	f2 = f;
	f2.mapping = 0;
	CHECK_INT(profile__add_frame(p, &f2), ==, 3);
	f2 = f;
	f2.kernel = true;
	CHECK_INT(profile__add_frame(p, &f2), ==, 4);
	f2 = f;
	f2.name = "bar";
	CHECK_INT(profile__add_frame(p, &f2), ==, 5);
	f2 = f;
	f2.system_name = "_Z3foov";
	CHECK_INT(profile__add_frame(p, &f2), ==, 6);
	f2 = f;
	f2.system_name = "foo"; /* the same as no separate system name */
	CHECK_INT(profile__add_frame(p, &f2), ==, 1);
	/* A mapping that does not exist is refused. */
	f2 = f;
	f2.mapping = 2;
	CHECK_INT(profile__add_frame(p, &f2), ==, 0);
	CHECK_U64(profile__frame_count(p), ==, 6);

	got = profile__frame(p, 1);
	CHECK(got);
	CHECK_STR(got->name, "foo");
	CHECK(got->system_name == got->name);
	CHECK_U64(got->address, ==, 0x1234);
	CHECK_STR(profile__frame(p, 6)->system_name, "_Z3foov");
	CHECK(!profile__frame(p, 0));
	CHECK(!profile__frame(p, 7));
	profile__free(p);
}

/* Renaming takes a frame out of the hash index and puts it back: every other frame stays found. */
TEST(profile_set_frame_names)
{
	struct profile *p = new_profile();
	struct profile_frame f = {.address = 1, .kernel = true, .kind = FRAME_UNNAMED};
	char name[32], renamed[32];
	const struct profile_frame *got;
	uint32_t i, n = 5000;

	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "[stand-in %u]", i);
		f.address = i % 97; /* many equal addresses: long probe runs in the index */
		f.name = name;
		CHECK_INT(profile__add_frame(p, &f), ==, i);
	}
	for (i = 1; i <= n; i += 2) {
		snprintf(renamed, sizeof(renamed), "fn%u", i);
		CHECK_INT(profile__set_frame_names(p, i, renamed, i % 4 == 1 ? "_raw" : NULL,
						   FRAME_CODE, false),
			  ==, 0);
	}
	for (i = 1; i <= n; i++) {
		f.address = i % 97;
		f.kind = i % 2 == 0 ? FRAME_UNNAMED : FRAME_CODE;
		f.system_name = NULL;
		if (i % 2) {
			snprintf(renamed, sizeof(renamed), "fn%u", i);
			f.name = renamed;
			f.system_name = i % 4 == 1 ? "_raw" : NULL;
		} else {
			snprintf(name, sizeof(name), "[stand-in %u]", i);
			f.name = name;
		}
		CHECK_INT(profile__add_frame(p, &f), ==, i);
	}
	CHECK_U64(profile__frame_count(p), ==, n);
	got = profile__frame(p, 1);
	CHECK_STR(got->name, "fn1");
	CHECK_STR(got->system_name, "_raw");
	CHECK(got->kind == FRAME_CODE && got->kernel);
	got = profile__frame(p, 3);
	CHECK(got->system_name == got->name);
	/* The old names are free again: a frame with one is a new frame. */
	f.address = 1;
	f.name = "[stand-in 1]";
	f.system_name = NULL;
	f.kind = FRAME_UNNAMED;
	CHECK_INT(profile__add_frame(p, &f), ==, n + 1);
	/* Renamed to what another frame already is: both stay valid, the first is found. */
	f.address = 2;
	f.name = "fn2";
	f.kind = FRAME_CODE;
	CHECK_INT(profile__add_frame(p, &f), ==, n + 2);
	CHECK_INT(profile__set_frame_names(p, 2, "fn2", NULL, FRAME_CODE, false), ==, 0);
	CHECK_INT(profile__add_frame(p, &f), ==, n + 2);
	CHECK_STR(profile__frame(p, 2)->name, "fn2");
	CHECK_INT(profile__set_frame_names(p, 0, "x", NULL, FRAME_CODE, false), ==, -EINVAL);
	CHECK_INT(profile__set_frame_names(p, n + 3, "x", NULL, FRAME_CODE, false), ==, -EINVAL);
	profile__free(p);
}

/*
 * Each symbolizer frame is copied once: what it became is remembered, not
 * looked up again by content. A new generation of ids is copied again and
 * found by content.
 */
TEST(profile_copies_symbolizer_frames_once)
{
	struct profile *p = new_profile();
	uint32_t ids[3], out[3], bad = 99;
	const struct profile_frame *f;
	struct symbolizer *s;

	CHECK_INT(symbolizer__new(&s), ==, 0);
	ids[0] = symbolizer__placeholder(s, "[no stack]", FRAME_LOST, 0);
	ids[1] = symbolizer__placeholder(s, "[kernel stack lost: error]", FRAME_LOST, 1);
	ids[2] = ids[0];
	CHECK(ids[0] && ids[1] && ids[0] != ids[1]);
	CHECK_INT(profile__add_symbolized(p, s, ids, 3, out), ==, 0);
	CHECK_INT(out[0], ==, 1);
	CHECK_INT(out[1], ==, 2);
	CHECK_INT(out[2], ==, 1);
	CHECK_U64(profile__frame_count(p), ==, 2);
	f = profile__frame(p, 2);
	CHECK_STR(f->name, "[kernel stack lost: error]");
	CHECK(f->name == f->system_name);
	CHECK(f->kernel && f->kind == FRAME_LOST && !f->mapping && !f->address);

	CHECK_INT(profile__set_frame_names(p, 1, "renamed", NULL, FRAME_LOST, false), ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, ids, 1, ids), ==, 0);
	CHECK_INT(ids[0], ==, 1);
	CHECK_U64(profile__frame_count(p), ==, 2);
	CHECK_INT(profile__add_symbolized(p, s, &bad, 1, &bad), ==, -EINVAL);

	CHECK_INT(profile__finish_frames(p, s, true), ==, 0);
	ids[0] = symbolizer__placeholder(s, "[kernel stack lost: error]", FRAME_LOST, 1);
	ids[1] = symbolizer__placeholder(s, "[no stack]", FRAME_LOST, 0);
	CHECK_INT(profile__add_symbolized(p, s, ids, 2, out), ==, 0);
	CHECK_INT(out[0], ==, 2);
	CHECK_INT(out[1], ==, 3);
	CHECK_U64(profile__frame_count(p), ==, 3);
	symbolizer__free(s);
	profile__free(p);
}

static void add_frames(struct profile *p, int n)
{
	char name[32];
	int i;

	for (i = 1; i <= n; i++) {
		struct profile_frame f = {.address = (uint64_t)i, .name = name};

		snprintf(name, sizeof(name), "f%d", i);
		CHECK_INT(profile__add_frame(p, &f), ==, i);
	}
}

TEST(profile_sample_dedup)
{
	struct profile *p = new_profile();
	uint32_t stack[3] = {1, 2, 3}, other[3] = {3, 2, 1}, bad[2] = {1, 4};
	struct profile_labels l = {.pid = 10, .comm = "app", .thread_name = "app"};
	struct profile_labels l2;
	const struct profile_sample *s;

	add_frames(p, 3);
	CHECK_INT(profile__add_sample(p, stack, 3, &l, 2), ==, 0);
	CHECK_INT(profile__add_sample(p, stack, 3, &l, 5), ==, 0);
	CHECK_U64(profile__sample_count(p), ==, 1);
	CHECK_U64(profile__sample(p, 0)->count, ==, 7);

	/* The model copied the stack. */
	stack[0] = 3;
	s = profile__sample(p, 0);
	CHECK_INT(s->nframes, ==, 3);
	CHECK_INT(s->frames[0], ==, 1);
	stack[0] = 1;

	CHECK_INT(profile__add_sample(p, other, 3, &l, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, stack, 2, &l, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, NULL, 0, &l, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, NULL, 0, &l, 1), ==, 0);
	l2 = l;
	l2.pid = 11;
	CHECK_INT(profile__add_sample(p, stack, 3, &l2, 1), ==, 0);
	l2 = l;
	l2.tid = 12;
	CHECK_INT(profile__add_sample(p, stack, 3, &l2, 1), ==, 0);
	l2 = l;
	l2.comm = "other";
	CHECK_INT(profile__add_sample(p, stack, 3, &l2, 1), ==, 0);
	l2 = l;
	l2.thread_name = "worker";
	CHECK_INT(profile__add_sample(p, stack, 3, &l2, 1), ==, 0);
	CHECK_U64(profile__sample_count(p), ==, 8);
	CHECK_U64(profile__sample(p, 3)->count, ==, 2);
	CHECK_INT(profile__sample(p, 3)->nframes, ==, 0);
	CHECK_STR(profile__sample(p, 7)->labels.thread_name, "worker");
	CHECK_U64(profile__total_count(p), ==, 7 + 1 + 1 + 2 + 4);

	/* Labels with equal content through other pointers are the same sample. */
	l2 = l;
	l2.comm = profile__intern(p, "app");
	CHECK_INT(profile__add_sample(p, stack, 3, &l2, 1), ==, 0);
	CHECK_U64(profile__sample(p, 0)->count, ==, 8);
	CHECK_U64(profile__sample_count(p), ==, 8);

	/* Frames that do not exist are refused; a zero count adds nothing. */
	CHECK_INT(profile__add_sample(p, bad, 2, &l, 1), ==, -EINVAL);
	bad[1] = 0;
	CHECK_INT(profile__add_sample(p, bad, 2, &l, 1), ==, -EINVAL);
	CHECK_INT(profile__add_sample(p, NULL, 2, &l, 1), ==, -EINVAL);
	CHECK_INT(profile__add_sample(p, other, 1, &l, 0), ==, 0);
	CHECK_U64(profile__sample_count(p), ==, 8);
	CHECK(!profile__sample(p, 8));
	/* No labels at all is pid 0 with empty names. */
	CHECK_INT(profile__add_sample(p, other, 1, NULL, 1), ==, 0);
	CHECK_STR(profile__sample(p, 8)->labels.comm, "");
	CHECK_INT(profile__sample(p, 8)->labels.pid, ==, 0);
	profile__free(p);
}

TEST(profile_comments)
{
	struct profile *p = new_profile();
	char buf[32] = "lost 3 samples";

	CHECK_INT(profile__add_comment(p, buf), ==, 0);
	CHECK_INT(profile__add_comment(p, "second"), ==, 0);
	CHECK_INT(profile__add_comment(p, buf), ==, 0);
	strcpy(buf, "changed");
	CHECK_U64(profile__comment_count(p), ==, 3);
	CHECK_STR(profile__comment(p, 0), "lost 3 samples");
	CHECK_STR(profile__comment(p, 1), "second");
	CHECK_STR(profile__comment(p, 2), "lost 3 samples");
	CHECK(!profile__comment(p, 3));
	profile__free(p);
}

/* A linear scan would need ~10^10 comparisons here and time out. */
TEST(profile_many_samples)
{
	struct profile *p = new_profile();
	struct profile_labels l = {.comm = "app", .thread_name = "app"};
	const uint32_t n = 200000;
	uint32_t i, stack[4];
	struct timespec t0, t1;

	add_frames(p, 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 2 * n; i++) {
		uint32_t k = i % n;

		stack[0] = k % 1000 + 1;
		stack[1] = k / 1000 % 1000 + 1;
		stack[2] = 7;
		stack[3] = 1;
		l.pid = k / 1000000 + 1;
		CHECK_INT(profile__add_sample(p, stack, 4, &l, 1), ==, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_U64(profile__sample_count(p), ==, n);
	CHECK_U64(profile__total_count(p), ==, 2 * n);
	for (i = 0; i < n; i += 1009)
		CHECK_U64(profile__sample(p, i)->count, ==, 2);
	CHECK_INT(t1.tv_sec - t0.tv_sec, <, 20);
	profile__free(p);
}
