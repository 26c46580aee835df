// SPDX-License-Identifier: MIT
/*
 * Frame kinds (resolve/frame_kind.h) are data: the summary and the flame
 * graph count and color a frame by the kind it was made with, never by its
 * name. Names of code are whatever a file or a perf map says, and a local
 * user chooses those: a function called "[truncated: ...]" or "x_[k]" is
 * code all the same. Only names read back from files (-i) are guessed at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "build/profile.h"
#include "encode/flame.h"
#include "encode/pprof.h"
#include "encode/pprof_input.h"
#include "resolve/symbolizer.h"
#include "summary.h"
#include "test.h"

#define MARKER "[truncated: no CFI for the code]"

/* The kind of the one box named name in f's layout; -1 when there is none. */
static int box_kind(const struct flame *f, const char *name)
{
	struct flame_box *b;
	size_t n, i;
	int kind = -1;

	CHECK_INT(flame__layout(f, 0, &b, &n), ==, 0);
	for (i = 0; i < n; i++) {
		if (!b[i].name || strcmp(b[i].name, name))
			continue;
		CHECK_INT(kind, ==, -1);
		kind = (int)b[i].kind;
	}
	free(b);
	return kind;
}

/* The flame graph of p. */
static struct flame *flame_of(const struct profile *p)
{
	struct flame *f;

	CHECK_INT(flame__new(&f), ==, 0);
	CHECK_INT(flame__add_profile(f, p), ==, 0);
	return f;
}

static uint64_t truncated(const struct profile *p)
{
	char who[160];

	return summary__truncated_samples(p, who, sizeof(who));
}

static uint64_t unnamed(const struct profile *p)
{
	uint64_t by_start;

	return summary__unnamed_samples(p, &by_start);
}

/*
 * A profile's frames whose names are each other kind's: counted and drawn
 * by their kinds. Code named like a marker at the root of a stack is no
 * truncated walk, and a marker named like code is one.
 */
TEST(frame_kinds_count_by_kind_not_name)
{
	struct profile_mapping app = {.start = 0x1000, .limit = 0x9000, .path = "/bin/app"};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x1100, .name = "main"},
		{.mapping = 1, .address = 0x1200, .name = MARKER, .kind = FRAME_CODE},
		{.mapping = 1, .address = 0x1300, .name = "user_fn_[k]", .kind = FRAME_CODE},
		{.name = "[user stack lost: error]", .kind = FRAME_CODE},
		{.name = "looks_like_code", .kind = FRAME_TRUNCATED},
		{.name = "do_syscall_64", .kind = FRAME_LOST, .kernel = true},
	};
	static const uint32_t s1[] = {3, 2}, s2[] = {1, 4}, s3[] = {1, 5}, s4[] = {6};
	struct profile_labels l = {.pid = 7, .comm = "app"};
	struct profile *p = profile__new(NULL);
	struct flame *f;
	size_t i;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &app), ==, 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, s1, 2, &l, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, s2, 2, &l, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, s3, 2, &l, 7), ==, 0);
	CHECK_INT(profile__add_sample(p, s4, 1, &l, 11), ==, 0);
	/* Only the walk whose root is a marker (s3) was truncated; none of the code is unnamed. */
	CHECK_U64(truncated(p), ==, 7);
	CHECK_U64(unnamed(p), ==, 0);
	f = flame_of(p);
	CHECK_INT(box_kind(f, MARKER), ==, FLAME_USER);
	CHECK_INT(box_kind(f, "user_fn_[k]"), ==, FLAME_USER);
	CHECK_INT(box_kind(f, "[user stack lost: error]"), ==, FLAME_USER);
	CHECK_INT(box_kind(f, "looks_like_code"), ==, FLAME_TRUNCATED);
	CHECK_INT(box_kind(f, "do_syscall_64"), ==, FLAME_LOST);
	flame__free(f);
	profile__free(p);
}

/*
 * The same through the symbolizer: JIT code whose perf map (written by the
 * process, so by whoever runs it) names it like cprof's placeholders. Its
 * frames are JIT code, at the root of a stack as anywhere else.
 */
TEST(frame_kinds_perf_map_names_like_markers)
{
	struct profile_meta meta = {.hz = 99, .period_ns = 1000000000ull / 99};
	struct symbolizer_task task = {.pid = (uint32_t)getpid()};
	char path[64], text[512];
	struct profile_labels l = {.pid = task.pid, .comm = "jit"};
	struct symbolizer *s;
	struct profile *p;
	struct flame *f;
	uint64_t ips[3];
	uint32_t ids[3];
	uint8_t *mem;

	mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text), "%llx 100 evil_[k]\n%llx 100 [no stack]\n%llx 100 %s\n",
		 (unsigned long long)(uintptr_t)mem, (unsigned long long)(uintptr_t)mem + 0x100,
		 (unsigned long long)(uintptr_t)mem + 0x200, MARKER);
	{
		FILE *m = fopen(path, "w");

		CHECK(m);
		fputs(text, m);
		CHECK_INT(fclose(m), ==, 0);
	}
	p = profile__new(&meta);
	CHECK(p);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	/* Leaf first; return addresses are looked up one byte back. */
	ips[0] = (uintptr_t)mem + 0x10;
	ips[1] = (uintptr_t)mem + 0x110;
	ips[2] = (uintptr_t)mem + 0x210;
	CHECK_INT(symbolizer__user_frames(s, &task, ips, 3, ids), ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, ids, 3, ids), ==, 0);
	CHECK_INT(profile__add_sample(p, ids, 3, &l, 4), ==, 0);
	CHECK_INT(profile__finish_frames(p, s, true), ==, 0);
	CHECK_STR(profile__frame(p, ids[2])->name, MARKER);
	CHECK_INT(profile__frame(p, ids[2])->kind, ==, FRAME_JIT);
	CHECK_U64(truncated(p), ==, 0);
	CHECK_U64(unnamed(p), ==, 0);
	f = flame_of(p);
	CHECK_INT(box_kind(f, "evil_[k]"), ==, FLAME_JIT);
	CHECK_INT(box_kind(f, "[no stack]"), ==, FLAME_JIT);
	CHECK_INT(box_kind(f, MARKER), ==, FLAME_JIT);
	flame__free(f);
	symbolizer__free(s);
	profile__free(p);
	unlink(path);
	munmap(mem, 4096);
}

/*
 * Code at address 0 (a return address of 0, in no mapping) is unnamed code
 * in no known mapping, as at any other address: not a placeholder for a
 * lost stack, which also has no address.
 */
TEST(frame_kinds_code_at_address_zero)
{
	struct profile_meta meta = {.hz = 99, .period_ns = 1000000000ull / 99};
	struct symbolizer_task task = {.pid = (uint32_t)getpid()};
	struct profile_labels l = {.pid = task.pid, .comm = "zero"};
	uint64_t ips[2] = {(uintptr_t)box_kind, 0};
	struct symbolizer *s;
	struct profile *p;
	struct flame *f;
	uint32_t ids[2];
	char who[160];

	p = profile__new(&meta);
	CHECK(p);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__user_frames(s, &task, ips, 2, ids), ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, ids, 2, ids), ==, 0);
	CHECK_INT(profile__add_sample(p, ids, 2, &l, 6), ==, 0);
	CHECK_INT(profile__finish_frames(p, s, true), ==, 0);
	CHECK_STR(profile__frame(p, ids[1])->name, "[unknown]");
	CHECK_U64(profile__frame(p, ids[1])->address, ==, 0);
	CHECK_U64(summary__unmapped_samples(p, who, sizeof(who)), ==, 6);
	CHECK_STR(who, "zero 6");
	f = flame_of(p);
	CHECK_INT(box_kind(f, "[unknown]"), ==, FLAME_UNNAMED);
	flame__free(f);
	symbolizer__free(s);
	profile__free(p);
}

/*
 * A profile written to pprof and drawn from the file (-i), where names are
 * all that is left of a frame but its mapping: code in a mapping is code
 * whatever its function is called, only frames without one (cprof's
 * placeholders) may be markers.
 */
TEST(frame_kinds_pprof_read_back)
{
	struct profile_meta meta = {.hz = 99, .period_ns = 1000000000ull / 99};
	struct profile_mapping maps[] = {
		{.start = 0x1000, .limit = 0x9000, .path = "/bin/app", .build_id = ""},
		{.start = 0x7f0000, .limit = 0x7f9000, .path = "", .build_id = ""},
	};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x1100, .name = "main"},
		{.mapping = 1, .address = 0x1200, .name = MARKER},
		{.mapping = 1, .address = 0x1300, .name = "evil_[k]"},
		{.mapping = 2, .address = 0x7f0010, .name = "[no stack]"},
		{.name = "[truncated: no unwind table]", .kind = FRAME_TRUNCATED},
	};
	static const uint32_t s1[] = {3, 2, 1}, s2[] = {4, 5};
	struct profile_labels l = {.pid = 7, .comm = "app"};
	struct pprof_input_opts o = {0};
	struct pprof_input_info info;
	struct profile *p = profile__new(&meta);
	struct flame *f;
	uint8_t *gz;
	size_t len, i;

	CHECK(p);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		CHECK_INT(profile__add_mapping(p, &maps[i]), ==, i + 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, s1, 3, &l, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, s2, 2, &l, 2), ==, 0);
	/* cprof's file: memory without a name is JIT code's. */
	CHECK_INT(profile__add_comment(p, "cprof: samples taken 5, in profile 5, lost 0"), ==, 0);
	CHECK_INT(pprof__encode_gz(p, &gz, &len), ==, 0);
	CHECK_INT(flame__new(&f), ==, 0);
	CHECK_INT(pprof_input__parse(gz, len, &o, f, &info), ==, 0);
	CHECK_INT(box_kind(f, MARKER), ==, FLAME_USER);
	CHECK_INT(box_kind(f, "evil_[k]"), ==, FLAME_USER);
	CHECK_INT(box_kind(f, "evil"), ==, -1);
	CHECK_INT(box_kind(f, "[no stack]"), ==, FLAME_JIT);
	CHECK_INT(box_kind(f, "[truncated: no unwind table]"), ==, FLAME_TRUNCATED);
	flame__free(f);
	free(gz);
	profile__free(p);
}

/*
 * A stand-in waiting for its name and the same stand-in not waiting (two
 * processes, one of which has a name coming) are one frame of the profile,
 * named when its frames are finished; the kinds of code are not merged.
 */
TEST(frame_kinds_waiting_stand_in_is_one_frame)
{
	struct profile_mapping lib = {.start = 0x1000, .limit = 0x9000, .path = "/lib/x.so"};
	struct profile_frame f = {.mapping = 1, .address = 0x1100, .name = "x.so+0x100"};
	struct profile *p = profile__new(NULL);

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &lib), ==, 1);
	f.kind = FRAME_WAITING;
	CHECK_INT(profile__add_frame(p, &f), ==, 1);
	f.kind = FRAME_UNNAMED;
	CHECK_INT(profile__add_frame(p, &f), ==, 1);
	f.kind = FRAME_CODE;
	CHECK_INT(profile__add_frame(p, &f), ==, 2);
	f.kind = FRAME_JIT;
	CHECK_INT(profile__add_frame(p, &f), ==, 3);
	CHECK_INT(profile__set_frame_names(p, 1, "x_fn", NULL, FRAME_CODE, false), ==, 0);
	CHECK_INT(profile__frame(p, 1)->kind, ==, FRAME_CODE);
	CHECK_U64(profile__frame_count(p), ==, 3);
	profile__free(p);
}
