// SPDX-License-Identifier: MIT
/*
 * The symbolizer fed the kernel's records of forks, execs and mmaps: a
 * sample is named in the address space its id says, under that space's
 * name, from mappings the records made (here, this process's own code
 * mapping, recorded under made-up times).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build/profile.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "test.h"

__attribute__((noinline)) int follow_target(int x)
{
	return x * 5 + 2;
}

/* Our own code mapping holding follow_target, as an mmap record would tell it. */
static struct proc_map own_code(struct proc_maps **keep)
{
	const struct proc_map *m;

	CHECK_INT(proc_maps__read(getpid(), keep), ==, 0);
	m = proc_maps__find(*keep, (uintptr_t)follow_target);
	CHECK(m && (m->perms & PROC_MAP_EXEC));
	return *m;
}

/* The name given to addr as a leaf in pid's space sid. */
static const char *name_in(struct symbolizer *s, struct profile *p, uint32_t pid, uint64_t sid,
			   uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__user_frames(s, &(struct symbolizer_task){.pid = pid, .space = sid},
					  &addr, 1, &frame),
		  ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, &frame, 1, &frame), ==, 0);
	return profile__frame(p, frame)->name;
}

struct fixture {
	struct symbolizer *s;
	struct profile *p;
	struct proc_maps *maps;
	struct proc_map code;
	uint32_t pid;
	uint64_t addr;
};

static void setup(struct fixture *f)
{
	f->p = profile__new(NULL);
	CHECK(f->p);
	CHECK_INT(symbolizer__new(&f->s), ==, 0);
	symbolizer__follow(f->s);
	f->code = own_code(&f->maps);
	f->pid = (uint32_t)getpid();
	f->addr = (uintptr_t)follow_target + 1;
}

static void teardown(struct fixture *f)
{
	symbolizer__free(f->s);
	profile__free(f->p);
	proc_maps__free(f->maps);
}

TEST(symbolizer_follow_names_each_sample_in_its_space)
{
	struct fixture f;

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "before");
	symbolizer__mmap(f.s, f.pid, 1100, &f.code);
	symbolizer__exec(f.s, f.pid, 2000, "after");
	/* The sample's id is the exec hook's time, a little after the exec record's. */
	CHECK_STR(name_in(f.s, f.p, f.pid, 1050, f.addr), "follow_target");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = f.pid, .space = 1050}),
		  "before");
	/* After the exec nothing is mapped yet: no guess from /proc, whose map is another's. */
	CHECK_STR(name_in(f.s, f.p, f.pid, 2050, f.addr), "[unknown]");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = f.pid, .space = 2050}),
		  "after");
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_USER_UNMAPPED], ==, 1);
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_SPACES_FOLLOWED], ==, 2);
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_MAPPINGS_FOLLOWED], ==, 1);
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_PROCESSES], ==, 0);
	teardown(&f);
}

TEST(symbolizer_follow_mapping_after_a_miss_is_found)
{
	struct fixture f;

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "prog");
	CHECK_STR(name_in(f.s, f.p, f.pid, 1050, f.addr), "[unknown]");
	/* A record read late (a dlopen just before the drain) still names later samples. */
	symbolizer__mmap(f.s, f.pid, 1100, &f.code);
	CHECK_STR(name_in(f.s, f.p, f.pid, 1050, f.addr), "follow_target");
	teardown(&f);
}

TEST(symbolizer_follow_fork_inherits_the_parents_map)
{
	struct fixture f;
	uint32_t child = 999999999;

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "parent");
	symbolizer__mmap(f.s, f.pid, 1100, &f.code);
	symbolizer__fork(f.s, f.pid, child, 1200);
	/* The child exits at once: its samples are named from what it inherited. */
	symbolizer__exit(f.s, child, 1300);
	CHECK_STR(name_in(f.s, f.p, child, 1250, f.addr), "follow_target");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = child, .space = 1250}),
		  "parent");
	symbolizer__rename(f.s, f.pid, "renamed");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = f.pid, .space = 1500}),
		  "renamed");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = child, .space = 1250}),
		  "parent");
	teardown(&f);
}

TEST(symbolizer_follow_scope_keeps_out_other_processes)
{
	struct fixture f;
	uint32_t child = 999999998, other = 999999997;

	setup(&f);
	CHECK_INT(symbolizer__set_scope(f.s, &f.pid, 1, true), ==, 0);
	symbolizer__exec(f.s, f.pid, 1000, "target");
	symbolizer__mmap(f.s, f.pid, 1100, &f.code);
	symbolizer__exec(f.s, other, 1150, "other");
	symbolizer__fork(f.s, f.pid, child, 1200);
	symbolizer__exec(f.s, child, 1300, "grandchild");
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = child, .space = 1350}),
		  "grandchild");
	CHECK(!symbolizer__process_name(f.s,
					&(struct symbolizer_task){.pid = other, .space = 1200}));
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_SPACES_FOLLOWED], ==, 3);
	teardown(&f);
}

TEST(symbolizer_follow_forgets_spaces_at_the_drain_after_they_end)
{
	struct fixture f;
	uint32_t child = 999999996;

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "parent");
	symbolizer__fork(f.s, f.pid, child, 1200);
	symbolizer__exit(f.s, child, 1300);
	CHECK_STR(symbolizer__process_name(f.s,
					   &(struct symbolizer_task){.pid = child, .space = 1250}),
		  "parent");
	/* Not while a drain may still hold its samples: that one began before the exit. */
	symbolizer__new_interval(f.s, 1300);
	CHECK(symbolizer__process_name(f.s,
				       &(struct symbolizer_task){.pid = child, .space = 1250}));
	/* A drain begun after it ended took its last samples. */
	symbolizer__new_interval(f.s, 1301);
	CHECK(!symbolizer__process_name(f.s,
					&(struct symbolizer_task){.pid = child, .space = 1250}));
	CHECK(symbolizer__process_name(f.s,
				       &(struct symbolizer_task){.pid = f.pid, .space = 1250}));
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_SPACES_FORGOTTEN], ==, 1);
	teardown(&f);
}

TEST(symbolizer_follow_sample_named_by_exec_before_its_stamp_is_the_new_programs)
{
	struct symbolizer_task old = {.space = 1050, .comm = "before"}, renamed = old;
	struct fixture f;

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "before");
	symbolizer__exec(f.s, f.pid, 2000, "after");
	old.pid = renamed.pid = f.pid;
	renamed.comm = "after";
	/* Stamped with the old space's id, but taken after the exec renamed the thread. */
	CHECK_STR(symbolizer__process_name(f.s, &old), "before");
	CHECK_STR(symbolizer__process_name(f.s, &renamed), "after");
	/* A fork's child keeps its parent's name: only an exec moves a sample on. */
	symbolizer__fork(f.s, f.pid, 999999995, 2500);
	renamed.pid = 999999995;
	renamed.space = 2600;
	CHECK_STR(symbolizer__process_name(f.s, &renamed), "after");
	teardown(&f);
}

TEST(symbolizer_follow_unopened_files_counted_by_process)
{
	struct proc_map gone = {
		.start = 0x10000,
		.end = 0x11000,
		.inode = 12345,
		.perms = PROC_MAP_READ | PROC_MAP_EXEC,
		.kind = PROC_MAP_FILE,
		.path = "/nonexistent/cprof-test/libgone.so",
	};
	struct fixture f;
	char who[64];

	setup(&f);
	symbolizer__exec(f.s, f.pid, 1000, "prog");
	symbolizer__mmap(f.s, f.pid, 1100, &gone);
	/* The same file again is the same failure, not another. */
	gone.start = 0x20000;
	gone.end = 0x21000;
	symbolizer__mmap(f.s, f.pid, 1200, &gone);
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_FILES_UNOPENED], ==, 1);
	symbolizer__unopened_who(f.s, who, sizeof(who));
	CHECK_STR(who, "prog 1");
	CHECK_STR(name_in(f.s, f.p, f.pid, 1300, 0x10010), "libgone.so@0x10");
	teardown(&f);
}

/*
 * A file one process could not be opened through (it was exiting, or its
 * namespace hid the path) is still opened for another process that maps it.
 */
TEST(symbolizer_follow_unopened_file_tried_again_for_another_process)
{
	const uint32_t gone_pid = 0x7ffffff0; /* above any pid_max */
	struct proc_map hidden;
	struct fixture f;

	setup(&f);
	hidden = f.code;
	hidden.path = "/nonexistent/cprof-test/moved-away";
	symbolizer__exec(f.s, gone_pid, 1000, "gone");
	symbolizer__mmap(f.s, gone_pid, 1100, &hidden);
	CHECK(!strncmp(name_in(f.s, f.p, gone_pid, 1200, f.addr), "moved-away@0x", 13));
	symbolizer__exec(f.s, f.pid, 1000, "prog");
	symbolizer__mmap(f.s, f.pid, 1100, &f.code);
	CHECK_STR(name_in(f.s, f.p, f.pid, 1200, f.addr), "follow_target");
	CHECK_U64(symbolizer__stats(f.s)[SYM_STAT_FILES_UNOPENED], ==, 1);
	teardown(&f);
}
