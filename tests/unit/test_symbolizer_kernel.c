// SPDX-License-Identifier: MIT
/*
 * Kernel frames from a kallsyms file the test writes and changes. The first
 * profile's frames are named when it is finished, by the one read that
 * loads the table. In the next ones (continuous mode) frames get their
 * symbol at drain time and their name when the profile is finished, by a
 * name pass only for symbols not named yet. A symbol gone by then (a module
 * unloaded) leaves "[kernel]", counted as unknown, never another name; BPF
 * programs keep the name seen when the table was read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build/profile.h"
#include "encode/folded.h"
#include "resolve/symbolizer.h"
#include "test.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	CHECK(f);
	CHECK_INT(fputs(text, f), >=, 0);
	CHECK_INT(fclose(f), ==, 0);
}

/* The frame of p for what s answered for addr. */
static uint32_t kernel_frame(struct symbolizer *s, struct profile *p, uint64_t addr, bool leaf)
{
	/* Only the first address of a stack is a leaf; a dummy leaf goes first otherwise. */
	uint64_t ips[2] = {0xffffffff81000005, addr};
	uint32_t frames[2] = {0};

	CHECK_INT(symbolizer__kernel_frames(s, leaf ? &addr : ips, leaf ? 1 : 2, frames), ==, 0);
	CHECK(frames[leaf ? 0 : 1]);
	CHECK_INT(profile__add_symbolized(p, s, frames, leaf ? 1 : 2, frames), ==, 0);
	return frames[leaf ? 0 : 1];
}

static void check_frame(struct profile *p, uint32_t idx, const char *name, bool unknown)
{
	const struct profile_frame *f = profile__frame(p, idx);

	CHECK(f);
	CHECK(f->kernel);
	CHECK_STR(f->name, name);
	CHECK_INT(!frame_kind__named(f->kind), ==, unknown);
}

TEST(symbolizer_names_kernel_frames_when_finished)
{
	static const char before[] = "ffffffff81000000 T first\n"
				     "ffffffff81000100 T second\n"
				     "ffffffff81000200 T third\n"
				     "ffffffff81000800 T fourth\n"
				     "ffffffff81001000 T _etext\n"
				     "ffffffffc0000000 t mod_fn\t[mymod]\n"
				     "ffffffffc0001000 t bpf_prog_0123456789abcdef_x\t[bpf]\n";
	/* mymod and the BPF program are gone; another symbol came at mod_fn's address. */
	static const char after[] = "ffffffff81000000 T first\n"
				    "ffffffff81000100 T second\n"
				    "ffffffff81000200 T third\n"
				    "ffffffff81000800 T fourth\n"
				    "ffffffff81001000 T _etext\n"
				    "ffffffffc0000000 t other_fn\t[othermod]\n";
	struct profile *a = profile__new(NULL), *b = profile__new(NULL), *c = profile__new(NULL);
	uint32_t f_first, f_second, f_third, f_mod, f_bpf, f_unknown, f_fourth, stack[4];
	struct profile_labels labels = {.pid = 1, .comm = "c", .thread_name = "c"};
	const struct profile_frame *f;
	struct symbolizer *s;
	char path[512], *text = NULL;
	size_t len;

	CHECK(a && b && c);
	snprintf(path, sizeof(path), "%s/kallsyms.%d", test_tmp_dir(), (int)getpid());
	write_file(path, before);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__set_kallsyms(s, path), ==, 0);
	CHECK_INT(profile__finish_frames(a, s, false), ==, 0);

	/* The first profile: kallsyms is read when it is finished, once. */
	f_first = kernel_frame(s, a, 0xffffffff81000005, true);
	/* A return address at a symbol's start belongs to the symbol before it. */
	f_second = kernel_frame(s, a, 0xffffffff81000200, false);
	f_third = kernel_frame(s, a, 0xffffffff81000200, true);
	f_unknown = kernel_frame(s, a, 0xffffffff80000000, true);
	CHECK(f_second != f_third);
	f = profile__frame(a, f_third);
	CHECK(f->kind == FRAME_WAITING && f->kernel);
	CHECK_STR(f->name, "[kernel 0xffffffff81000200]");
	CHECK_STR(profile__frame(a, f_second)->name, "[kernel 0xffffffff810001ff]");
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 0);
	CHECK_INT(profile__finish_frames(a, s, false), ==, 0);
	check_frame(a, f_first, "first", false);
	check_frame(a, f_second, "second", false);
	check_frame(a, f_third, "third", false);
	check_frame(a, f_unknown, "[kernel]", true);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 1);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_KERNEL_FRAMES], ==, 4);
	/* The renamed frames are found again by their new names, not added twice. */
	CHECK_INT(kernel_frame(s, a, 0xffffffff81000005, true), ==, f_first);
	stack[0] = f_third;
	stack[1] = f_second;
	stack[2] = f_unknown;
	CHECK_INT(profile__add_sample(a, stack, 3, &labels, 5), ==, 0);
	CHECK_INT(folded__encode(a, &text, &len), ==, 0);
	CHECK_STR(text, "c;[kernel]_[k];second_[k];third_[k] 5\n");
	free(text);

	/* The next interval: the table gives symbols at once, names known stay known. */
	profile__free(a);
	f_first = kernel_frame(s, b, 0xffffffff81000005, true);
	check_frame(b, f_first, "first", false);
	/* A BPF program's name was kept when kallsyms was read. */
	f_bpf = kernel_frame(s, b, 0xffffffffc0001010, true);
	check_frame(b, f_bpf, "bpf_prog_0123456789abcdef_x", false);
	f_mod = kernel_frame(s, b, 0xffffffffc0000010, true);
	CHECK_STR(profile__frame(b, f_mod)->name, "[kernel 0xffffffffc0000010]");
	/* The module is unloaded before the name pass: the frame is not given other_fn. */
	write_file(path, after);
	CHECK_INT(profile__finish_frames(b, s, false), ==, 0);
	check_frame(b, f_mod, "[kernel]", true);
	check_frame(b, f_bpf, "bpf_prog_0123456789abcdef_x", false);
	check_frame(b, f_first, "first", false);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 2);

	/* Gone stays gone; a symbol whose name can no longer be read is "[kernel]". */
	profile__free(b);
	CHECK_INT(unlink(path), ==, 0);
	f_mod = kernel_frame(s, c, 0xffffffffc0000010, true);
	check_frame(c, f_mod, "[kernel]", true);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 3);
	f_first = kernel_frame(s, c, 0xffffffff81000005, true);
	f_fourth = kernel_frame(s, c, 0xffffffff81000900, true);
	CHECK_INT(profile__finish_frames(c, s, false), ==, -ENOENT);
	check_frame(c, f_fourth, "[kernel]", true);
	check_frame(c, f_first, "first", false);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 4);
	symbolizer__free(s);
	profile__free(c);
}

TEST(symbolizer_kernel_frames_without_kallsyms)
{
	struct profile *p = profile__new(NULL);
	struct symbolizer *s;
	char path[512];
	uint32_t frame;

	CHECK(p);
	snprintf(path, sizeof(path), "%s/no-kallsyms.%d", test_tmp_dir(), (int)getpid());
	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__set_kallsyms(s, path), ==, 0);
	frame = kernel_frame(s, p, 0xffffffff81000005, true);
	CHECK_INT(profile__finish_frames(p, s, false), ==, 0);
	check_frame(p, frame, "[kernel]", true);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 1);
	/* Not read again for the next frames: they are "[kernel]" at once. */
	frame = kernel_frame(s, p, 0xffffffff81000105, true);
	check_frame(p, frame, "[kernel]", true);
	CHECK_INT(profile__finish_frames(p, s, false), ==, 0);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 2);
	symbolizer__free(s);
	profile__free(p);
}

/* A profile that no other follows: one read names its frames, and nothing is kept. */
TEST(symbolizer_names_the_last_profile_in_one_read)
{
	static const char text[] = "ffffffff81000000 T first\n"
				   "ffffffff81000100 T second\n"
				   "ffffffff81001000 T _etext\n"
				   "ffffffffc0000000 t mod_fn\t[mymod]\n";
	struct profile *p = profile__new(NULL);
	uint32_t f_first, f_mod, f_none, f_second;
	struct symbolizer *s;
	char path[512];

	CHECK(p);
	snprintf(path, sizeof(path), "%s/kallsyms-last.%d", test_tmp_dir(), (int)getpid());
	write_file(path, text);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__set_kallsyms(s, path), ==, 0);
	f_first = kernel_frame(s, p, 0xffffffff81000005, true);
	f_mod = kernel_frame(s, p, 0xffffffffc0000005, true);
	f_none = kernel_frame(s, p, 0xffffffffc0100000, true);
	CHECK_INT(profile__finish_frames(p, s, true), ==, 0);
	check_frame(p, f_first, "first", false);
	check_frame(p, f_mod, "mod_fn", false);
	check_frame(p, f_none, "[kernel]", true);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_KERNEL], ==, 1);
	/* Frames after all the same: named by another read, not "[kernel]" for want of a table. */
	f_second = kernel_frame(s, p, 0xffffffff81000105, true);
	CHECK_INT(profile__finish_frames(p, s, true), ==, 0);
	check_frame(p, f_second, "second", false);
	CHECK_INT(unlink(path), ==, 0);
	symbolizer__free(s);
	profile__free(p);
}
