// SPDX-License-Identifier: MIT
/*
 * Perf maps read after their process exited (perf_map__read_exited): only
 * its own map, in the host's /tmp when it shared it, by the live maps'
 * rule; and the JVM attach reply parser.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "resolve/jvm_attach.h"
#include "resolve/perf_map.h"
#include "test.h"

static const char *map_path(uint32_t pid)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	return path;
}

static void write_map(uint32_t pid, mode_t mode)
{
	FILE *f = fopen(map_path(pid), "w");

	CHECK(f);
	fputs("1000 10 jit_fn\n", f);
	fclose(f);
	CHECK(chmod(map_path(pid), mode) == 0);
}

/* A child that waits for a byte on *fd (the write end), then exits; its PID. */
static pid_t waiting_child(int *fd)
{
	int p[2];
	pid_t pid;
	char c;

	CHECK(pipe(p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	*fd = p[1];
	return pid;
}

static void end_child(pid_t pid, int fd)
{
	int status;

	CHECK(write(fd, "x", 1) == 1);
	close(fd);
	CHECK(waitpid(pid, &status, 0) == pid);
}

TEST(exit_map_read_after_exit_only)
{
	struct perf_map_owner o;
	struct perf_map *m = NULL;
	enum proc_file_refusal why;
	int fd;
	pid_t pid = waiting_child(&fd);

	CHECK_INT(perf_map__owner((uint32_t)pid, 0, &o), ==, 0);
	CHECK(o.host_root);
	CHECK_INT(o.uid, ==, getuid());
	write_map((uint32_t)pid, 0644);
	/* Still running: its map is the live reader's. */
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_ALIVE);
	CHECK(!m);
	end_child(pid, fd);
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_READ);
	CHECK(m && perf_map__lookup(m, 0x1008) && !strcmp(perf_map__lookup(m, 0x1008), "jit_fn"));
	perf_map__free(m);
	/* Another mount namespace's /tmp is not the host's: never read after the process. */
	o.host_root = false;
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_OTHER_NS);
	unlink(map_path((uint32_t)pid));
}

TEST(exit_map_refused_by_the_rule)
{
	struct perf_map_owner o;
	struct perf_map *m = NULL;
	enum proc_file_refusal why;
	char target[64];
	int fd;
	pid_t pid = waiting_child(&fd);

	CHECK_INT(perf_map__owner((uint32_t)pid, 0, &o), ==, 0);
	end_child(pid, fd);
	/* A link (to a root-only file) is never read. */
	snprintf(target, sizeof(target), "/tmp/perf-%u.secret", (uint32_t)pid);
	write_map((uint32_t)pid, 0600);
	CHECK(rename(map_path((uint32_t)pid), target) == 0);
	CHECK(symlink(target, map_path((uint32_t)pid)) == 0);
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_REFUSED);
	CHECK_INT(why, ==, PROC_FILE_LINK);
	unlink(map_path((uint32_t)pid));
	/* Root's file that its user (remembered: 4242) could not read. */
	CHECK(rename(target, map_path((uint32_t)pid)) == 0);
	o.uid = 4242;
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_REFUSED);
	CHECK_INT(why, ==, PROC_FILE_NOT_OWNER);
	CHECK(!m);
	unlink(map_path((uint32_t)pid));
}

TEST(exit_map_of_pid_reused_is_not_its)
{
	struct perf_map_owner o = {.pid = (uint32_t)getpid(), .uid = getuid(), .host_root = true};
	struct perf_map *m = NULL;
	enum proc_file_refusal why;
	uint64_t now;

	/* An earlier process of our PID, 10 s before us: the map written now is ours, not its. */
	CHECK_INT(procfs__start_time(o.pid, &now), ==, 0);
	if (now < 1000)
		test_skip("this process started too soon after boot");
	o.start_time = now - 1000;
	write_map(o.pid, 0644);
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_NOT_ITS);
	unlink(map_path(o.pid));
}

TEST(exit_map_older_than_its_process_is_not_its)
{
	struct perf_map_owner o;
	struct perf_map *m = NULL;
	enum proc_file_refusal why;
	int fd;
	pid_t pid = waiting_child(&fd);

	CHECK_INT(perf_map__owner((uint32_t)pid, 0, &o), ==, 0);
	end_child(pid, fd);
	write_map((uint32_t)pid, 0644);
	/* As if it had started 1,000 s later than the map was written. */
	o.start_time += 100000;
	CHECK_INT(perf_map__read_exited(&o, &m, &why), ==, PERF_MAP_EXIT_NOT_ITS);
	CHECK(!m);
	unlink(map_path((uint32_t)pid));
}

/* A child with PID pid (clone3's set_tid), waiting as waiting_child's; -errno if it cannot be. */
static pid_t child_with_pid(pid_t pid, int *fd)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD, .set_tid = (uintptr_t)&pid, .set_tid_size = 1};
	int p[2];
	long got;
	char c;

	CHECK(pipe(p) == 0);
	got = syscall(SYS_clone3, &args, sizeof(args));
	if (!got) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	if (got < 0) {
		close(p[1]);
		return -errno;
	}
	*fd = p[1];
	return (pid_t)got;
}

TEST(live_map_older_than_its_process_is_refused)
{
	struct perf_map_source src = {0};
	struct perf_map *m = NULL;
	int fd;
	pid_t pid = waiting_child(&fd), again;

	/* A map left by a process, then its PID taken by the next one (made to take it). */
	end_child(pid, fd);
	write_map((uint32_t)pid, 0644);
	usleep(200 * 1000);
	again = child_with_pid(pid, &fd);
	if (again < 0) {
		unlink(map_path((uint32_t)pid));
		test_skip("clone3 with set_tid: %s", strerror((int)-again));
	}
	CHECK_INT(perf_map__reread((uint32_t)pid, 0, &src, &m), ==, -ESTALE);
	CHECK(src.stale && !m);
	end_child(pid, fd);
	unlink(map_path((uint32_t)pid));
}

TEST(jvm_reply_parse)
{
	size_t off;
	int st;

	CHECK_INT(jvm_attach__parse_reply("0\n", 2, &st, &off), ==, 0);
	CHECK_INT(st, ==, 0);
	CHECK_INT(off, ==, 2);
	CHECK_INT(jvm_attach__parse_reply("-1\nno\n", 6, &st, &off), ==, 0);
	CHECK_INT(st, ==, -1);
	CHECK_INT(off, ==, 3);
	CHECK_INT(jvm_attach__parse_reply("13", 2, &st, &off), ==, 0);
	CHECK_INT(off, ==, 2);
	CHECK_INT(jvm_attach__parse_reply("", 0, &st, &off), ==, -EBADMSG);
	CHECK_INT(jvm_attach__parse_reply("-\n", 2, &st, &off), ==, -EBADMSG);
	CHECK_INT(jvm_attach__parse_reply("0x\n", 3, &st, &off), ==, -EBADMSG);
	CHECK_INT(jvm_attach__parse_reply("1234567890\n", 11, &st, &off), ==, -EBADMSG);
}
