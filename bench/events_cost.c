// SPDX-License-Identifier: MIT
/*
 * What following every task costs (src/sample/task_events.c): runs a command,
 * typically a fork+exec storm, while reading the task events of the whole
 * system the way the profiler does, and reports the reader's CPU time and
 * the command's per 1,000 execs. Comparing wakeup settings is what it is for:
 * a wakeup per record against a watermark.
 *
 *   events_cost [-p PAGES] [-w BYTES | -e | -n] [-v] -- COMMAND [ARG...]
 *
 *   -p PAGES  ring size in pages (default 16)
 *   -w BYTES  wake the reader each time BYTES more are written to a ring (1:
 *             every record; default: a quarter of the ring, as task_events__open)
 *   -e        attr.wakeup_events = 1 instead of a watermark
 *   -n        no events at all: the command's own cost, for comparison
 *   -v        print every event handed out
 *
 * Needs root (CAP_PERFMON).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "sample/task_events.h"

/* Events handed out earlier than this are all in the queue's hands. */
#define SETTLE_NS (5 * 1000 * 1000ull)

struct counts {
	bool verbose;
	uint64_t by_type[TASK_EVENT_LOST + 1];
	uint64_t execs;
};

struct options {
	unsigned int pages;
	long wakeup_bytes; /* -1: task_events__open's default */
	bool none;
	bool verbose;
	char **argv;
};

static void print_event(const struct task_event *ev)
{
	static const char *const names[] = {"?", "FORK", "EXIT", "COMM", "MMAP", "LOST"};

	printf("%llu %-4s pid %u tid %u", (unsigned long long)ev->time, names[ev->type], ev->pid,
	       ev->tid);
	if (ev->type == TASK_EVENT_FORK || ev->type == TASK_EVENT_EXIT)
		printf(" ppid %u ptid %u", ev->ppid, ev->ptid);
	if (ev->type == TASK_EVENT_COMM)
		printf(" '%s'%s", ev->comm, ev->exec ? " exec" : "");
	if (ev->type == TASK_EVENT_MMAP)
		printf(" %llx+%llx @%llx %u:%u ino %llu prot %x flags %x %s",
		       (unsigned long long)ev->start, (unsigned long long)ev->len,
		       (unsigned long long)ev->pgoff, ev->dev_major, ev->dev_minor,
		       (unsigned long long)ev->inode, ev->prot, ev->flags, ev->filename);
	if (ev->type == TASK_EVENT_LOST)
		printf(" %llu", (unsigned long long)ev->lost);
	printf("\n");
}

static void count_event(void *ctx, const struct task_event *ev)
{
	struct counts *c = ctx;

	c->by_type[ev->type]++;
	c->execs += ev->type == TASK_EVENT_COMM && ev->exec;
	if (c->verbose)
		print_event(ev);
}

static pid_t start(char **argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "events_cost: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static double seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Reads until the command has exited, then everything left. */
static int follow(struct task_events *te, pid_t pid, struct counts *c, uint64_t *wakeups)
{
	struct pollfd pfd = {.fd = task_events__fd(te), .events = POLLIN};
	int status, n;

	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		/* The caller's timer: a watermark leaves records in the ring until it is crossed.
		 */
		if (poll(&pfd, 1, 100) > 0)
			(*wakeups)++;
		n = task_events__read(te, clock__mono_ns() - SETTLE_NS, count_event, c);
		if (n < 0)
			return n;
	}
	n = task_events__read(te, UINT64_MAX, count_event, c);
	return n < 0 ? n : 0;
}

static int run(const struct options *o)
{
	struct counts c = {.verbose = o->verbose};
	struct task_events *te = NULL;
	struct task_events_stats st;
	struct rusage self, kids;
	uint64_t wakeups = 0, t0 = clock__mono_ns();
	int err, status;
	pid_t pid;

	if (!o->none) {
		err = o->wakeup_bytes < 0
			      ? task_events__open(o->pages, &te)
			      : task_events__open_wakeup(o->pages, o->wakeup_bytes, &te);
		if (err)
			return 1;
	}
	pid = start(o->argv);
	if (pid < 0)
		return 1;
	if (te)
		err = follow(te, pid, &c, &wakeups);
	else
		err = waitpid(pid, &status, 0) == pid ? 0 : -errno;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("wall %.3f s; reader %.3f s user + %.3f s sys; command %.3f s user + %.3f s sys\n",
	       (clock__mono_ns() - t0) / 1e9, seconds(self.ru_utime), seconds(self.ru_stime),
	       seconds(kids.ru_utime), seconds(kids.ru_stime));
	if (te) {
		task_events__stats(te, &st);
		printf("execs %llu; fork %llu exit %llu comm %llu mmap %llu; wakeups %llu; records "
		       "%llu lost %llu malformed %llu late %llu ignored %llu\n",
		       (unsigned long long)c.execs, (unsigned long long)c.by_type[TASK_EVENT_FORK],
		       (unsigned long long)c.by_type[TASK_EVENT_EXIT],
		       (unsigned long long)c.by_type[TASK_EVENT_COMM],
		       (unsigned long long)c.by_type[TASK_EVENT_MMAP], (unsigned long long)wakeups,
		       (unsigned long long)st.records, (unsigned long long)st.lost,
		       (unsigned long long)st.malformed, (unsigned long long)st.late,
		       (unsigned long long)st.ignored);
		if (c.execs)
			printf("reader CPU per 1000 execs: %.1f ms\n",
			       (seconds(self.ru_utime) + seconds(self.ru_stime)) * 1e6 / c.execs);
	}
	task_events__free(te);
	return err ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: events_cost [-p PAGES] [-w BYTES | -e | -n] [-v] -- COMMAND...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct options o = {.pages = 16, .wakeup_bytes = -1};
	int opt;

	while ((opt = getopt(argc, argv, "p:w:env")) != -1) {
		switch (opt) {
		case 'p':
			o.pages = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			o.wakeup_bytes = strtol(optarg, NULL, 10);
			break;
		case 'e':
			o.wakeup_bytes = 0;
			break;
		case 'n':
			o.none = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	o.argv = argv + optind;
	return run(&o);
}
