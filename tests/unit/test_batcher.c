// SPDX-License-Identifier: MIT
/*
 * From profile to batch: the split into one profile per process (dense IDs,
 * only what each part uses), and the series the batcher makes of it, with
 * their labels and gzipped pprof.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "deliver/batch.h"
#include "deliver/batcher.h"
#include "deliver/labels.h"
#include "encode/pprof.h"
#include "test.h"

/* pid 10: main->a (x2); pid 20: main->b (x3) and kernel->main (x1). */
static struct profile *two_processes(void)
{
	struct profile_meta meta = {.hz = 99,
				    .period_ns = 10101010,
				    .time_ns = 5,
				    .duration_ns = 7,
				    .whole_system = true};
	struct profile *p = profile__new(&meta);
	struct profile_mapping exe = {
		.start = 0x1000, .limit = 0x2000, .path = "/bin/x", .build_id = "ab"};
	struct profile_mapping kern = {
		.limit = UINT64_MAX, .path = "[kernel.kallsyms]", .build_id = "", .kernel = true};
	struct profile_labels l10 = {.pid = 10, .comm = "ten", .thread_name = "ten"};
	struct profile_labels l20 = {.pid = 20, .comm = "twenty", .thread_name = "t"};
	uint32_t mk, me, fmain, fa, fb, fk;

	CHECK(p);
	mk = profile__add_mapping(p, &kern);
	me = profile__add_mapping(p, &exe);
	fk = profile__add_frame(
		p,
		&(struct profile_frame){.mapping = mk, .address = 9, .name = "k", .kernel = true});
	fa = profile__add_frame(
		p, &(struct profile_frame){.mapping = me, .address = 0x1100, .name = "a"});
	fmain = profile__add_frame(
		p, &(struct profile_frame){.mapping = me, .address = 0x1200, .name = "main"});
	fb = profile__add_frame(
		p, &(struct profile_frame){.mapping = me, .address = 0x1300, .name = "b"});
	CHECK(mk && me && fk && fa && fmain && fb);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){fa, fmain}, 2, &l10, 2), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){fb, fmain}, 2, &l20, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){fk, fmain}, 2, &l20, 1), ==, 0);
	CHECK_INT(profile__add_comment(p, "note"), ==, 0);
	return p;
}

TEST(split_by_pid_dense_and_minimal)
{
	struct profile *p = two_processes(), **parts = NULL;
	const struct profile_sample *s;
	size_t n = 0;

	CHECK_INT(profile__split_by_pid(p, &parts, &n), ==, 0);
	CHECK_INT(n, ==, 2);
	/* pid 10: its two frames and the one mapping they use, numbered from 1. */
	CHECK_INT(profile__sample_count(parts[0]), ==, 1);
	CHECK_INT(profile__frame_count(parts[0]), ==, 2);
	CHECK_INT(profile__mapping_count(parts[0]), ==, 1);
	CHECK_STR(profile__mapping(parts[0], 1)->path, "/bin/x");
	s = profile__sample(parts[0], 0);
	CHECK_INT(s->labels.pid, ==, 10);
	CHECK_STR(s->labels.comm, "ten");
	CHECK_STR(profile__frame(parts[0], s->frames[0])->name, "a");
	CHECK_STR(profile__frame(parts[0], s->frames[1])->name, "main");
	CHECK_INT(profile__frame(parts[0], s->frames[0])->mapping, ==, 1);
	/* pid 20: three frames, both mappings. */
	CHECK_INT(profile__sample_count(parts[1]), ==, 2);
	CHECK_INT(profile__frame_count(parts[1]), ==, 3);
	CHECK_INT(profile__mapping_count(parts[1]), ==, 2);
	CHECK_U64(profile__total_count(parts[1]), ==, 4);
	CHECK_U64(profile__total_count(parts[0]) + profile__total_count(parts[1]), ==,
		  profile__total_count(p));
	CHECK_U64(profile__meta(parts[1])->time_ns, ==, 5);
	CHECK_U64(profile__meta(parts[1])->duration_ns, ==, 7);
	/* One process's series names its program, even in a whole-system run. */
	CHECK(!profile__meta(parts[1])->whole_system);
	CHECK_INT(profile__meta(parts[1])->main_pid, ==, 20);
	CHECK_INT(profile__comment_count(parts[1]), ==, 1);
	CHECK_STR(profile__comment(parts[1], 0), "note");
	profile__free(parts[0]);
	profile__free(parts[1]);
	free(parts);
	profile__free(p);
}

TEST(split_by_pid_empty)
{
	struct profile *p = profile__new(NULL), **parts = NULL;
	size_t n = 1;

	CHECK_INT(profile__split_by_pid(p, &parts, &n), ==, 0);
	CHECK_INT(n, ==, 0);
	free(parts);
	profile__free(p);
}

/* The series' profile is exactly the gzipped pprof encoding of want. */
static void check_profile(const struct batch_series *s, const struct profile *want)
{
	uint8_t *gz = NULL;
	size_t gz_len = 0;

	CHECK_INT(pprof__encode_gz(want, &gz, &gz_len), ==, 0);
	CHECK_U64(s->profile_len, ==, gz_len);
	CHECK(memcmp(s->profile, gz, gz_len) == 0);
	free(gz);
}

TEST(batcher_series_per_process)
{
	struct profile *p = two_processes(), **parts = NULL;
	struct labels user = {0};
	struct batcher *bt;
	struct batch *b;
	size_t n;

	CHECK(!labels__parse_arg(&user, "env=test"));
	CHECK(!labels__parse_arg(&user, "service_name=mine"));
	CHECK_INT(batcher__new("host", &user, true, &bt), ==, 0);
	CHECK_INT(batcher__make(bt, p, &b), ==, 0);
	CHECK_INT(b->nseries, ==, 2);
	CHECK_U64(b->time_ns, ==, 5);
	CHECK_U64(b->duration_ns, ==, 7);
	CHECK_STR(labels__get(&b->series[0].labels, "pid"), "10");
	CHECK_STR(labels__get(&b->series[0].labels, "comm"), "ten");
	CHECK_STR(labels__get(&b->series[1].labels, "pid"), "20");
	CHECK_STR(labels__get(&b->series[1].labels, "comm"), "twenty");
	/* The user's labels win over the defaults. */
	CHECK_STR(labels__get(&b->series[1].labels, "service_name"), "mine");
	CHECK_STR(labels__get(&b->series[1].labels, "env"), "test");
	CHECK_STR(labels__get(&b->series[1].labels, "__name__"), "process_cpu");
	CHECK_INT(profile__split_by_pid(p, &parts, &n), ==, 0);
	CHECK_INT(n, ==, 2);
	check_profile(&b->series[0], parts[0]);
	check_profile(&b->series[1], parts[1]);
	profile__free(parts[0]);
	profile__free(parts[1]);
	free(parts);
	batch__free(b);
	batcher__free(bt);
	labels__clear(&user);
	profile__free(p);
}

TEST(batcher_one_series_and_empty)
{
	struct profile *p = two_processes(), *empty = profile__new(NULL);
	struct batcher *bt;
	struct batch *b;

	CHECK_INT(batcher__new("known_tree", NULL, false, &bt), ==, 0);
	CHECK_INT(batcher__make(bt, p, &b), ==, 0);
	CHECK_INT(b->nseries, ==, 1);
	CHECK_STR(labels__get(&b->series[0].labels, "service_name"), "known_tree");
	CHECK(!labels__get(&b->series[0].labels, "pid"));
	check_profile(&b->series[0], p);
	batch__free(b);
	CHECK_INT(batcher__make(bt, empty, &b), ==, 0);
	CHECK_INT(b->nseries, ==, 0);
	batch__free(b);
	batcher__free(bt);
	profile__free(empty);
	profile__free(p);
}
