// SPDX-License-Identifier: MIT
/*
 * task_events against the kernel: the test forks and execs /bin/true while
 * the events are open, and must see its fork, its exec, the mappings of its
 * binary and of libc, and its exit, in time order, between the times taken
 * before the fork and after the wait. Skips without root (CAP_PERFMON).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "sample/task_events.h"
#include "test.h"

#define TRUE_PATH "/bin/true"

struct seen {
	pid_t pid;
	struct stat binary;
	uint64_t last_time;
	uint64_t min_time, max_time; /* of the child's events */
	int forks, execs, exits, binary_maps, libc_maps, events;
	char order[16]; /* F, C, M, E for the child's events, in the order handed out */
};

static void collect(void *ctx, const struct task_event *ev)
{
	struct seen *s = ctx;
	size_t n = strlen(s->order);

	if (ev->type == TASK_EVENT_LOST)
		test_fail(__FILE__, __LINE__, "the kernel lost %llu records",
			  (unsigned long long)ev->lost);
	CHECK_U64(ev->time, >=, s->last_time);
	s->last_time = ev->time;
	if (ev->pid != (uint32_t)s->pid)
		return;
	s->events++;
	if (!s->min_time || ev->time < s->min_time)
		s->min_time = ev->time;
	if (ev->time > s->max_time)
		s->max_time = ev->time;
	if (n + 1 < sizeof(s->order))
		s->order[n] = "?FECML"[ev->type];
	switch (ev->type) {
	case TASK_EVENT_FORK:
		s->forks += ev->tid == (uint32_t)s->pid && ev->ppid == (uint32_t)getpid();
		break;
	case TASK_EVENT_COMM:
		s->execs += ev->exec && !strcmp(ev->comm, "true");
		break;
	case TASK_EVENT_MMAP:
		s->binary_maps += ev->inode == s->binary.st_ino &&
				  ev->dev_major == major(s->binary.st_dev) &&
				  ev->dev_minor == minor(s->binary.st_dev);
		s->libc_maps += strstr(ev->filename, "libc") != NULL;
		break;
	case TASK_EVENT_EXIT:
		s->exits += ev->tid == (uint32_t)s->pid;
		break;
	default:
		break;
	}
}

static struct task_events *open_or_skip(void)
{
	struct task_events *te = NULL;
	int err;

	if (geteuid() != 0)
		SKIP("needs root (CAP_PERFMON) for perf events");
	err = task_events__open(16, &te);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOSYS ||
	    err == -EOPNOTSUPP)
		SKIP("perf_event_open refused: %s", strerror(-err));
	CHECK_INT(err, ==, 0);
	return te;
}

static pid_t run_true(void)
{
	pid_t pid = fork();
	int status;

	CHECK_INT(pid, >=, 0);
	if (pid == 0) {
		execl(TRUE_PATH, "true", (char *)NULL);
		_exit(127);
	}
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

TEST(task_events_follow_exec)
{
	struct task_events *te = open_or_skip();
	struct pollfd pfd = {.fd = task_events__fd(te), .events = POLLIN};
	struct task_events_stats st;
	struct seen s = {0};
	uint64_t before, after;

	CHECK_INT(stat(TRUE_PATH, &s.binary), ==, 0);
	before = clock__mono_ns();
	s.pid = run_true();
	after = clock__mono_ns();
	/* The exit record is written before the parent learns of it: all are in the rings. */
	while (!s.exits && clock__mono_ns() < after + 2000000000ull) {
		poll(&pfd, 1, 50);
		CHECK_INT(task_events__read(te, after, collect, &s), >=, 0);
	}
	task_events__stats(te, &st);
	CHECK_INT(s.forks, ==, 1);
	CHECK_INT(s.execs, ==, 1);
	CHECK_INT(s.binary_maps, >=, 1);
	CHECK_INT(s.libc_maps, >=, 1);
	CHECK_INT(s.exits, ==, 1);
	CHECK_U64(s.min_time, >=, before);
	CHECK_U64(s.max_time, <=, after);
	CHECK_INT(s.events, <, (int)sizeof(s.order));
	/* Fork first, exec next, exit last; maps only in between. */
	CHECK_INT(s.order[0], ==, 'F');
	CHECK_INT(s.order[1], ==, 'C');
	CHECK_INT(s.order[s.events - 1], ==, 'E');
	CHECK_INT(strspn(s.order + 2, "M"), ==, s.events - 3);
	CHECK_U64(st.malformed, ==, 0);
	CHECK_U64(st.lost, ==, 0);
	CHECK_U64(st.records, >=, 5);
	task_events__free(te);
}

TEST(task_events_hold_newer_events)
{
	struct task_events *te = open_or_skip();
	struct seen s = {0};
	uint64_t before;
	uint32_t ppid = 0;
	int n;

	CHECK_INT(stat(TRUE_PATH, &s.binary), ==, 0);
	before = clock__mono_ns();
	s.pid = run_true();
	/* Nothing of the child is older than before: it stays queued, its fork found there... */
	CHECK_INT(task_events__read(te, before - 1, collect, &s), >=, 0);
	CHECK_INT(s.events, ==, 0);
	CHECK_INT(task_events__queued(te), >=, 5);
	CHECK(task_events__fork_queued(te, (uint32_t)s.pid, &ppid));
	CHECK_INT(ppid, ==, (uint32_t)getpid());
	CHECK(!task_events__fork_queued(te, (uint32_t)getpid(), &ppid));
	/* ...until the end, when everything goes. */
	n = task_events__read(te, UINT64_MAX, collect, &s);
	CHECK_INT(n, >=, 5);
	CHECK_INT(task_events__queued(te), ==, 0);
	CHECK(!task_events__fork_queued(te, (uint32_t)s.pid, &ppid));
	CHECK_INT(s.exits, ==, 1);
	task_events__free(te);
}

struct tally {
	uint64_t lost, lost_events, exits_seen;
	pid_t pid;
};

static void tally(void *ctx, const struct task_event *ev)
{
	struct tally *t = ctx;

	if (ev->type == TASK_EVENT_LOST) {
		t->lost += ev->lost;
		t->lost_events++;
	}
	t->exits_seen += ev->type == TASK_EVENT_EXIT && ev->tid == (uint32_t)t->pid;
}

/* A ring of one page: the kernel drops records once it is full, and says so. */
TEST(task_events_small_ring_loses_and_wraps)
{
	struct task_events *te = NULL;
	struct task_events_stats st;
	struct tally t = {0};
	cpu_set_t all, one;
	int i, err;

	if (geteuid() != 0)
		SKIP("needs root (CAP_PERFMON) for perf events");
	err = task_events__open_wakeup(1, 1024, &te);
	if (err)
		SKIP("perf_event_open refused: %s", strerror(-err));
	/*
	 * The kernel says how many it dropped with the next record it has room
	 * for on that ring's CPU: the execs stay on one CPU, so the execs after
	 * the read write there (unpinned, CI once saw 200 run elsewhere).
	 */
	CHECK_INT(sched_getaffinity(0, sizeof(all), &all), ==, 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK_INT(sched_setaffinity(0, sizeof(one), &one), ==, 0);
	/* About 700 bytes of records each, unread: more than a 4 KiB ring holds. */
	for (i = 0; i < 30; i++)
		run_true();
	for (i = 0; i < 200 && !t.lost_events; i++) {
		CHECK_INT(task_events__read(te, UINT64_MAX, tally, &t), >=, 0);
		run_true();
	}
	CHECK_INT(sched_setaffinity(0, sizeof(all), &all), ==, 0);
	task_events__stats(te, &st);
	CHECK_U64(t.lost_events, >=, 1);
	CHECK_U64(t.lost, ==, st.lost);
	CHECK_U64(st.lost, >, 0);
	CHECK_U64(st.malformed, ==, 0);
	task_events__free(te);
	/* Read after each exec: a 16 KiB ring wraps over and over, and nothing is lost. */
	CHECK_INT(task_events__open_wakeup(4, 1024, &te), ==, 0);
	t.exits_seen = 0;
	for (i = 0; i < 60; i++) {
		t.pid = run_true();
		CHECK_INT(task_events__read(te, UINT64_MAX, tally, &t), >, 0);
		CHECK_U64(t.exits_seen, ==, i + 1);
	}
	task_events__stats(te, &st);
	CHECK_U64(st.malformed, ==, 0);
	task_events__free(te);
}

TEST(task_events_pages_must_be_a_power_of_two)
{
	struct task_events *te = (struct task_events *)&te;

	CHECK_INT(task_events__open(3, &te), ==, -EINVAL);
	CHECK(te == NULL);
	CHECK_INT(task_events__open(0, &te), ==, -EINVAL);
	task_events__free(NULL);
}
