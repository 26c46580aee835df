// SPDX-License-Identifier: MIT
/*
 * Records as the kernel writes them, handed to the symbolizer: a thread's
 * fork, exit and rename are not its process's, and an mmap record becomes
 * the mapping /proc would show (here, this process's own code, under
 * made-up times).
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "build/profile.h"
#include "lib/proc_maps.h"
#include "resolve/task_feed.h"
#include "test.h"

__attribute__((noinline)) int feed_target(int x)
{
	return x * 7 + 3;
}

static const char *name_at(struct symbolizer *s, struct profile *p, uint32_t pid, uint64_t sid,
			   uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__user_frames(s, &(struct symbolizer_task){.pid = pid, .space = sid},
					  &addr, 1, &frame),
		  ==, 0);
	CHECK_INT(profile__add_symbolized(p, s, &frame, 1, &frame), ==, 0);
	return profile__frame(p, frame)->name;
}

/* The mmap record of our own code mapping, as the kernel writes it. */
static struct task_event code_record(struct proc_maps **maps, uint32_t pid, char *name, size_t size)
{
	const struct proc_map *m;

	CHECK_INT(proc_maps__read(getpid(), maps), ==, 0);
	m = proc_maps__find(*maps, (uintptr_t)feed_target);
	CHECK(m && m->kind == PROC_MAP_FILE);
	snprintf(name, size, "%s", m->path);
	return (struct task_event){
		.type = TASK_EVENT_MMAP,
		.pid = pid,
		.tid = pid,
		.time = 1100,
		.start = m->start,
		.len = m->end - m->start,
		.pgoff = m->offset,
		.inode = m->inode,
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
		.prot = PROT_READ | PROT_EXEC,
		.flags = MAP_PRIVATE,
		.filename = name,
	};
}

TEST(task_feed_builds_spaces_from_records)
{
	uint32_t pid = (uint32_t)getpid(), child = 999999990, thread = 999999991;
	struct task_event exec = {.type = TASK_EVENT_COMM,
				  .pid = pid,
				  .tid = pid,
				  .time = 1000,
				  .exec = true,
				  .comm = "prog"};
	struct task_event fork = {.type = TASK_EVENT_FORK,
				  .pid = child,
				  .tid = child,
				  .ppid = pid,
				  .ptid = pid,
				  .time = 1200};
	struct task_event tfork = {.type = TASK_EVENT_FORK,
				   .pid = pid,
				   .tid = thread,
				   .ppid = pid,
				   .ptid = pid,
				   .time = 1250};
	struct task_event trename = {
		.type = TASK_EVENT_COMM, .pid = pid, .tid = thread, .time = 1260, .comm = "worker"};
	struct task_event texit = {.type = TASK_EVENT_EXIT,
				   .pid = pid,
				   .tid = thread,
				   .ppid = 1,
				   .ptid = 1,
				   .time = 1270};
	struct profile *p = profile__new(NULL);
	struct proc_maps *maps = NULL;
	struct symbolizer *s;
	struct task_event mmap;
	char name[4096];

	CHECK(p);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	symbolizer__follow(s);
	mmap = code_record(&maps, pid, name, sizeof(name));
	task_feed__apply(s, &exec);
	task_feed__apply(s, &mmap);
	task_feed__apply(s, &fork);
	task_feed__apply(s, &tfork);
	task_feed__apply(s, &trename);
	task_feed__apply(s, &texit);
	CHECK_STR(name_at(s, p, pid, 1050, (uintptr_t)feed_target + 1), "feed_target");
	CHECK_STR(name_at(s, p, child, 1210, (uintptr_t)feed_target + 1), "feed_target");
	/* The thread's name and exit are its own, not the process's. */
	CHECK_STR(symbolizer__process_name(s, &(struct symbolizer_task){.pid = pid, .space = 1300}),
		  "prog");
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_SPACES_FOLLOWED], ==, 2);
	symbolizer__new_interval(s, UINT64_MAX);
	symbolizer__new_interval(s, UINT64_MAX);
	CHECK(symbolizer__process_name(s, &(struct symbolizer_task){.pid = pid, .space = 1300}));
	symbolizer__free(s);
	profile__free(p);
	proc_maps__free(maps);
}

TEST(task_feed_skips_data_and_wrapping_mappings)
{
	uint32_t pid = (uint32_t)getpid();
	struct task_event exec = {.type = TASK_EVENT_COMM,
				  .pid = pid,
				  .tid = pid,
				  .time = 1000,
				  .exec = true,
				  .comm = "prog"};
	struct proc_maps *maps = NULL;
	struct symbolizer *s;
	struct task_event data, wrap;
	char name[4096];

	CHECK_INT(symbolizer__new(&s), ==, 0);
	symbolizer__follow(s);
	task_feed__apply(s, &exec);
	data = code_record(&maps, pid, name, sizeof(name));
	wrap = data;
	data.prot = PROT_READ;
	wrap.len = UINT64_MAX;
	task_feed__apply(s, &data);
	task_feed__apply(s, &wrap);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_MAPPINGS_FOLLOWED], ==, 0);
	symbolizer__free(s);
	proc_maps__free(maps);
}
