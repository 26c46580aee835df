// SPDX-License-Identifier: MIT
/*
 * Startup timer for bench/run (figure 5): how long a profiler takes from
 * launch to its first sample, measured the same way for any tool. A shell
 * loop polling /proc costs milliseconds per round, as much as what it
 * measures; this polls with a few system calls per round.
 *
 * The clock starts just before fork. "First sample" is the first time a
 * perf_event BPF program held by the launched process (or a descendant) has
 * run_cnt > 0: the kernel ran the program on a sample. Programs are found
 * by ID (IDs only grow, so every program loaded after launch has an ID above
 * the highest one before it). A program that has run is checked against the
 * fdinfo of the process's descriptors, once, so programs of other processes
 * never count and the round stays short while none has run. run_cnt only
 * moves while BPF run-time statistics are enabled: this holds them enabled
 * through BPF_ENABLE_STATS (5.8+), or needs kernel.bpf_stats_enabled=1.
 *
 * The command's stdout and stderr go through a pipe, copied to our stderr,
 * so the time it prints TEXT (-l) is seen too, as soon as it is written.
 *
 * Between rounds the timer sleeps (-s, default 100 us; a round costs a few
 * us): polling without pause takes a CPU away from the tool, and on a small
 * machine that slows the tool more than the timer's resolution is worth.
 *
 * A tool may also sample before any BPF program runs (cprof's head start:
 * perf events with rings of their own). The kernel stamps those samples on
 * CLOCK_MONOTONIC, the clock t0 is read on; with -m the tool's report of its
 * first sample's stamp (TEXT followed by the time in ns) is taken as well,
 * and the first sample is the earlier of the two.
 *
 * Usage: startup [-k] [-l TEXT] [-m TEXT] [-t SECONDS] [-s USEC] -- COMMAND [ARGS...]
 *   -k          send the command SIGINT once the times are seen (or -t ran out)
 *   -l TEXT     also time the first appearance of TEXT in the command's output
 *   -m TEXT     also wait for TEXT and the CLOCK_MONOTONIC ns after it: the
 *               time the command reports for its first sample
 *   -t SECONDS  give up waiting after SECONDS (default 30); the command runs on
 *   -s USEC     pause between rounds (default 100; 0: none)
 * Prints one line, times in ms since launch, "-" for what was not seen:
 *   first_sample_ms T line_ms T prog_ms T reported_ms T status S
 * prog_ms is when the program of the first sample appeared (loaded, not yet
 * attached); status is the command's exit status (128+N for signal N).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#define MAX_PROGS 256
#define MAX_PIDS  64
#define MAX_TEXT  256
#define NOT_SEEN  (-1.0)

struct prog {
	__u32 id;
	int fd; /* -1 once known to be another process's */
	double seen;
};

struct timer {
	pid_t child;
	double t0;
	struct prog progs[MAX_PROGS];
	int nprogs;
	__u32 last_id; /* highest program ID looked at */
	double first_sample, line, prog;
	double reported; /* -m: the command's own report, ms on CLOCK_MONOTONIC */
	const char *mark;
	char mline[MAX_TEXT * 4]; /* the output line being read, for -m */
	size_t mline_len;
	/* Output of the command: TEXT is matched across read boundaries. */
	const char *text;
	size_t text_len;
	char tail[MAX_TEXT * 2];
	size_t tail_len;
	int out_fd;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: startup [-k] [-l TEXT] [-m TEXT] [-t SECONDS] [-s USEC] -- COMMAND "
			"[ARGS...]\n");
	exit(2);
}

/* Reads the file NAME of directory DIR into buf as a string; its length, or -1. */
static ssize_t read_at(DIR *dir, const char *name, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = openat(dirfd(dir), name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* The command and its descendants, breadth first, from /proc/PID/task/TID/children. */
static int family(pid_t root, pid_t *pids, int max)
{
	char path[64], buf[4096];
	int n = 1, i;
	struct dirent *d;
	DIR *dir;

	pids[0] = root;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			char *p, *end;

			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%.32s/children", d->d_name);
			if (read_at(dir, path, buf, sizeof(buf)) <= 0)
				continue;
			for (p = buf; n < max; p = end) {
				long pid = strtol(p, &end, 10);

				if (end == p)
					break;
				pids[n++] = (pid_t)pid;
			}
		}
		closedir(dir);
	}
	return n;
}

/* True if a descriptor of PID refers to the BPF program ID. */
static bool pid_holds(pid_t pid, __u32 id)
{
	char path[64], buf[1024], want[32];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	snprintf(want, sizeof(want), "prog_id:\t%u\n", id);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (d = readdir(dir)))
		found = d->d_name[0] != '.' && read_at(dir, d->d_name, buf, sizeof(buf)) > 0 &&
			strstr(buf, want) != NULL;
	closedir(dir);
	return found;
}

static bool held_by_command(struct timer *t, __u32 id)
{
	pid_t pids[MAX_PIDS];
	int n = family(t->child, pids, MAX_PIDS), i;

	for (i = 0; i < n; i++)
		if (pid_holds(pids[i], id))
			return true;
	return false;
}

/* Takes in the perf_event programs loaded since the last call. */
static void find_new_progs(struct timer *t, double now)
{
	struct bpf_prog_info info;
	__u32 id = t->last_id, len;
	int fd;

	while (t->nprogs < MAX_PROGS && bpf_prog_get_next_id(id, &id) == 0) {
		t->last_id = id;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* gone already: a feature probe */
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_prog_get_info_by_fd(fd, &info, &len) ||
		    info.type != BPF_PROG_TYPE_PERF_EVENT) {
			close(fd);
			continue;
		}
		t->progs[t->nprogs++] = (struct prog){.id = id, .fd = fd, .seen = now};
	}
}

/* Looks for a program that has run, and whose it is. */
static void check_progs(struct timer *t, double now)
{
	struct bpf_prog_info info;
	struct prog *p;
	__u32 len;
	int i;

	for (i = 0; i < t->nprogs && t->first_sample == NOT_SEEN; i++) {
		p = &t->progs[i];
		if (p->fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_prog_get_info_by_fd(p->fd, &info, &len) || info.run_cnt == 0)
			continue;
		if (held_by_command(t, p->id)) {
			t->first_sample = now;
			t->prog = p->seen;
		} else {
			close(p->fd);
			p->fd = -1;
		}
	}
}

/* The command's output, kept as a log: best effort, the timing is what matters. */
static void copy_to_stderr(const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(STDERR_FILENO, buf, n);
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* -m: the time after the mark in each whole line of output. */
static void find_mark(struct timer *t, const char *buf, size_t n)
{
	const char *at;
	size_t i;

	for (i = 0; i < n && t->reported == NOT_SEEN; i++) {
		if (buf[i] != '\n') {
			if (t->mline_len < sizeof(t->mline) - 1)
				t->mline[t->mline_len++] = buf[i];
			continue;
		}
		t->mline[t->mline_len] = '\0';
		t->mline_len = 0;
		at = strstr(t->mline, t->mark);
		if (at)
			t->reported = strtoull(at + strlen(t->mark), NULL, 10) / 1e6;
	}
}

/* Copies what the command wrote to our stderr; returns false at end of file. */
static bool read_output(struct timer *t, double now)
{
	char buf[65536];
	ssize_t n;
	size_t keep, take;

	for (;;) {
		n = read(t->out_fd, buf, sizeof(buf));
		if (n == 0)
			return false;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		copy_to_stderr(buf, (size_t)n);
		if (t->mark)
			find_mark(t, buf, (size_t)n);
		if (!t->text || t->line != NOT_SEEN)
			continue;
		/* Search the last text_len-1 bytes of before plus this read, in slices. */
		for (ssize_t off = 0; off < n && t->line == NOT_SEEN; off += take) {
			take = (size_t)(n - off) < MAX_TEXT ? (size_t)(n - off) : MAX_TEXT;
			memcpy(t->tail + t->tail_len, buf + off, take);
			t->tail_len += take;
			if (memmem(t->tail, t->tail_len, t->text, t->text_len))
				t->line = now;
			keep = t->text_len - 1 < t->tail_len ? t->text_len - 1 : t->tail_len;
			memmove(t->tail, t->tail + t->tail_len - keep, keep);
			t->tail_len = keep;
		}
	}
}

/* Sleeps up to us microseconds, waking at once when the command writes. */
static void pause_round(struct timer *t, bool output_open, long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	struct pollfd pfd = {.fd = t->out_fd, .events = POLLIN};

	if (output_open)
		ppoll(&pfd, 1, &ts, NULL);
	else
		nanosleep(&ts, NULL);
}

static void print_ms(const char *name, double t, double t0)
{
	if (t == NOT_SEEN)
		printf("%s - ", name);
	else
		printf("%s %.3f ", name, t - t0);
}

int main(int argc, char **argv)
{
	struct timer t = {
		.first_sample = NOT_SEEN, .line = NOT_SEEN, .prog = NOT_SEEN, .reported = NOT_SEEN};
	double timeout_s = 30, deadline, now;
	long sleep_us = 100;
	int opt, pipefd[2], status = 0, stats_fd, exit_status = -1, i;
	bool open_output = true, exited = false, interrupt = false;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+kl:m:t:s:")) != -1) {
		switch (opt) {
		case 'k':
			interrupt = true;
			break;
		case 'l':
			t.text = optarg;
			t.text_len = strlen(optarg);
			if (!t.text_len || t.text_len > MAX_TEXT)
				usage();
			break;
		case 'm':
			t.mark = optarg;
			if (!*t.mark || strlen(t.mark) > MAX_TEXT)
				usage();
			break;
		case 't':
			timeout_s = strtod(optarg, NULL);
			if (timeout_s <= 0)
				usage();
			break;
		case 's':
			sleep_us = strtol(optarg, NULL, 10);
			if (sleep_us < 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();

	/* Held open until we exit; without it run_cnt only moves under the sysctl. */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
		int on = 0;

		if (f) {
			if (fscanf(f, "%d", &on) != 1)
				on = 0;
			fclose(f);
		}
		if (!on) {
			fprintf(stderr,
				"startup: cannot enable BPF run-time statistics (%s) and "
				"kernel.bpf_stats_enabled is 0\n",
				strerror(errno));
			return 1;
		}
	}
	/* Pauses as asked, not 50 us longer (the default slack of a sleeping timer). */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	/* Everything loaded from now on has a higher ID. */
	while (bpf_prog_get_next_id(t.last_id, &t.last_id) == 0)
		;
	if (pipe2(pipefd, O_CLOEXEC)) {
		perror("startup: pipe");
		return 1;
	}
	t.t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("startup: fork");
		return 1;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		execvp(argv[optind], &argv[optind]);
		fprintf(stderr, "startup: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	t.child = pid;
	t.out_fd = pipefd[0];
	fcntl(t.out_fd, F_SETFL, O_NONBLOCK);
	deadline = t.t0 + timeout_s * 1e3;

	/* Until both times are seen, the command exits, or the time is up. */
	while (!exited) {
		now = now_ms();
		if (open_output)
			open_output = read_output(&t, now);
		if (t.first_sample == NOT_SEEN) {
			find_new_progs(&t, now);
			check_progs(&t, now);
		}
		if (t.first_sample != NOT_SEEN && (!t.text || t.line != NOT_SEEN) &&
		    (!t.mark || t.reported != NOT_SEEN))
			break;
		if (now > deadline)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = true;
		else if (sleep_us)
			pause_round(&t, open_output, sleep_us);
	}
	if (interrupt && !exited)
		kill(pid, SIGINT);
	/* The rest of the output, until the command closes it by exiting. */
	fcntl(t.out_fd, F_SETFL, 0);
	while (open_output)
		open_output = read_output(&t, now_ms());
	if (!exited && waitpid(pid, &status, 0) != pid)
		status = -1;
	if (status >= 0)
		exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	if (t.reported != NOT_SEEN && (t.first_sample == NOT_SEEN || t.reported < t.first_sample))
		t.first_sample = t.reported;
	print_ms("first_sample_ms", t.first_sample, t.t0);
	print_ms("line_ms", t.line, t.t0);
	print_ms("prog_ms", t.prog, t.t0);
	print_ms("reported_ms", t.reported, t.t0);
	printf("status %d\n", exit_status);
	for (i = 0; i < t.nprogs; i++)
		if (t.progs[i].fd >= 0)
			close(t.progs[i].fd);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
