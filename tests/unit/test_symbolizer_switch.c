// SPDX-License-Identifier: MIT
/*
 * Continuous mode hands the symbolizer a new profile every interval. Nothing
 * may point into the old one afterwards (the ASan build turns a stale name
 * into a use-after-free), frames and mappings must be numbered afresh in the
 * new one, and processes that exited must be forgotten so a long run does
 * not grow.
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

static uint32_t resolve(struct symbolizer *s, uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__user_frames(s, (uint32_t)getpid(), &addr, 1, &frame), ==, 0);
	CHECK(frame);
	return frame;
}

TEST(symbolizer_set_profile_moves_everything)
{
	struct profile *a = profile__new(NULL), *b = profile__new(NULL);
	uint64_t addr = (uint64_t)(uintptr_t)switch_target, kaddr = 0;
	const struct profile_frame *fr;
	struct symbolizer *s;
	uint32_t frame;

	CHECK(a && b);
	CHECK_INT(switch_target(1), ==, 7);
	CHECK_INT(symbolizer__new(a, &s), ==, 0);
	symbolizer__note_process(s, (uint32_t)getpid());
	resolve(s, addr);
	CHECK_INT(symbolizer__kernel_frames(s, &kaddr, 1, &frame), ==, 0);
	CHECK(profile__mapping_count(a) >= 2);

	CHECK_INT(symbolizer__set_profile(s, b), ==, 0);
	profile__free(a);
	/* Names come from the new profile: reading them after the old one is gone is safe. */
	CHECK(strlen(symbolizer__process_name(s, (uint32_t)getpid())) > 0);
	CHECK_INT(profile__mapping_count(b), ==, 1); /* the kernel's, made again */
	frame = resolve(s, addr);
	fr = profile__frame(b, frame);
	CHECK(fr);
	CHECK_STR(fr->name, "switch_target");
	CHECK(fr->mapping >= 1 && fr->mapping <= profile__mapping_count(b));
	CHECK_INT(symbolizer__kernel_frames(s, &kaddr, 1, &frame), ==, 0);
	CHECK(profile__frame(b, frame)->kernel);
	symbolizer__free(s);
	profile__free(b);
}

TEST(symbolizer_forgets_exited_processes_one_drain_later)
{
	struct profile *p[3] = {profile__new(NULL), profile__new(NULL), profile__new(NULL)};
	struct symbolizer *s;
	pid_t child;
	int i;

	CHECK(p[0] && p[1] && p[2]);
	CHECK_INT(symbolizer__new(p[0], &s), ==, 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	symbolizer__note_process(s, (uint32_t)child);
	CHECK(symbolizer__process_name(s, (uint32_t)child));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/*
	 * Seen gone after one drain, forgotten after the next (its last samples
	 * were drained in between), also across a switch to a new profile.
	 */
	symbolizer__new_interval(s);
	CHECK(symbolizer__process_name(s, (uint32_t)child));
	CHECK_INT(symbolizer__set_profile(s, p[1]), ==, 0);
	CHECK(symbolizer__process_name(s, (uint32_t)child));
	symbolizer__new_interval(s);
	CHECK(!symbolizer__process_name(s, (uint32_t)child));
	CHECK_INT(symbolizer__set_profile(s, p[2]), ==, 0);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_PROCESSES_FORGOTTEN], ==, 1);
	symbolizer__free(s);
	for (i = 0; i < 3; i++)
		profile__free(p[i]);
}
