// SPDX-License-Identifier: MIT
/*
 * Continuous mode starts a new profile every interval, copying from the same
 * symbolizer. Nothing may point into the old one afterwards (the ASan build
 * turns a stale name into a use-after-free), frames and mappings must be
 * numbered afresh in the new one, and processes that exited must be
 * forgotten so a long run does not grow.
 */
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build/profile.h"
#include "resolve/symbolizer.h"
#include "test.h"

__attribute__((noinline)) static int switch_target(int x)
{
	return x * 7;
}

/* The frame of p for what s answered for addr in this process. */
static uint32_t resolve(struct symbolizer *s, struct profile *p, uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__user_frames(
			  s, &(struct symbolizer_task){.pid = (uint32_t)getpid(), .space = 0},
			  &addr, 1, &frame),
		  ==, 0);
	CHECK(frame);
	CHECK_INT(profile__add_symbolized(p, s, &frame, 1, &frame), ==, 0);
	return frame;
}

static uint32_t resolve_kernel(struct symbolizer *s, struct profile *p, uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__kernel_frames(s, &addr, 1, &frame), ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, &frame, 1, &frame), ==, 0);
	return frame;
}

TEST(symbolizer_each_profile_copies_afresh)
{
	struct profile *a = profile__new(NULL), *b = profile__new(NULL);
	uint64_t addr = (uint64_t)(uintptr_t)switch_target, kaddr = 0;
	const struct profile_frame *fr;
	struct symbolizer *s;
	uint32_t frame;

	CHECK(a && b);
	CHECK_INT(switch_target(1), ==, 7);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	symbolizer__note_process(s, (uint32_t)getpid());
	resolve(s, a, addr);
	resolve_kernel(s, a, kaddr);
	CHECK(profile__mapping_count(a) >= 2);

	CHECK_INT(profile__finish_frames(a, s, false), ==, 0);
	profile__free(a);
	/* The names are the symbolizer's: reading them after the old profile is gone is safe. */
	CHECK(strlen(symbolizer__process_name(
		      s, &(struct symbolizer_task){.pid = (uint32_t)getpid(), .space = 0})) > 0);
	frame = resolve_kernel(s, b, kaddr);
	CHECK(profile__frame(b, frame)->kernel);
	CHECK_INT(profile__mapping_count(b), ==, 1); /* the kernel's, made again */
	CHECK(profile__mapping(b, 1)->kernel);
	frame = resolve(s, b, addr);
	fr = profile__frame(b, frame);
	CHECK(fr);
	CHECK_STR(fr->name, "switch_target");
	CHECK(fr->mapping >= 1 && fr->mapping <= profile__mapping_count(b));
	symbolizer__free(s);
	profile__free(b);
}

TEST(symbolizer_forgets_exited_processes_one_drain_later)
{
	struct profile *p[2] = {profile__new(NULL), profile__new(NULL)};
	struct symbolizer *s;
	pid_t child;
	int i;

	CHECK(p[0] && p[1]);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	symbolizer__note_process(s, (uint32_t)child);
	CHECK(symbolizer__process_name(
		s, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/*
	 * Seen gone after one drain, forgotten after the next (its last samples
	 * were drained in between), also across the end of a profile.
	 */
	symbolizer__new_interval(s, UINT64_MAX);
	CHECK(symbolizer__process_name(
		s, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}));
	CHECK_INT(profile__finish_frames(p[0], s, false), ==, 0);
	CHECK(symbolizer__process_name(
		s, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}));
	symbolizer__new_interval(s, UINT64_MAX);
	CHECK(!symbolizer__process_name(
		s, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}));
	CHECK_INT(profile__finish_frames(p[1], s, false), ==, 0);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_SPACES_FORGOTTEN], ==, 1);
	symbolizer__free(s);
	for (i = 0; i < 2; i++)
		profile__free(p[i]);
}
