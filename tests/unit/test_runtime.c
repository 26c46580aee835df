// SPDX-License-Identifier: MIT
/* Unit tests of the run-time helpers: CPU lists, /proc reads, output, the command. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deliver/output.h"
#include "lib/procfs.h"
#include "sample/perf_attach.h"
#include "sample/target.h"
#include "test.h"

TEST(cpulist_ranges_and_singles)
{
	unsigned char m[16];

	CHECK_INT(perf_attach__parse_cpulist("0-3,5,7-8\n", m, 16), ==, 0);
	CHECK(m[0] && m[1] && m[2] && m[3] && !m[4] && m[5] && !m[6] && m[7] && m[8] && !m[9]);
	CHECK_INT(perf_attach__parse_cpulist("0\n", m, 16), ==, 0);
	CHECK(m[0] && !m[1]);
}

TEST(cpulist_rejects_garbage)
{
	unsigned char m[16];

	CHECK_INT(perf_attach__parse_cpulist("a-b", m, 16), ==, -EINVAL);
	CHECK_INT(perf_attach__parse_cpulist("3-1", m, 16), ==, -EINVAL);
	CHECK_INT(perf_attach__parse_cpulist("0-99", m, 16), ==, -ERANGE);
	CHECK_INT(perf_attach__parse_cpulist("1;2", m, 16), ==, -EINVAL);
}

TEST(procfs_self)
{
	char comm[64];
	uint64_t t = 0;

	CHECK_INT(procfs__comm(getpid(), comm, sizeof(comm)), ==, 0);
	CHECK(strlen(comm) > 0 && !strchr(comm, '\n'));
	CHECK_INT(procfs__start_time(getpid(), &t), ==, 0);
	CHECK(t > 0);
	CHECK(procfs__pid_exists(getpid()));
	CHECK(!procfs__pid_exists(2147483646));
	CHECK_INT(procfs__comm(2147483646, comm, sizeof(comm)), ==, -ESRCH);
}

static int prctl_set_name_for_test(const char *name)
{
	return prctl(PR_SET_NAME, name, 0, 0, 0);
}

TEST(procfs_start_time_with_hostile_comm)
{
	/* A process may name itself ") 1 2 3": parsing must use the last ')'. */
	char comm[64];
	uint64_t before = 0, after = 0;

	CHECK_INT(procfs__start_time(getpid(), &before), ==, 0);
	CHECK_INT(prctl_set_name_for_test(") 1 2 (x"), ==, 0);
	CHECK_INT(procfs__comm(getpid(), comm, sizeof(comm)), ==, 0);
	CHECK_STR(comm, ") 1 2 (x");
	CHECK_INT(procfs__start_time(getpid(), &after), ==, 0);
	CHECK_U64(after, ==, before);
}

TEST(procfs_read_all_large)
{
	char *buf = NULL;
	size_t len = 0;

	CHECK_INT(procfs__read_all("/proc/self/maps", &buf, &len), ==, 0);
	CHECK(len > 0 && buf[len] == '\0');
	free(buf);
	CHECK_INT(procfs__read_all("/proc/2147483646/maps", &buf, &len), ==, -ESRCH);
}

TEST(output_writes_file)
{
	char path[512], got[16] = "";
	struct output *o = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/out.bin", test_tmp_dir());
	CHECK_INT(output__open(path, true, &o), ==, 0);
	CHECK_INT(output__write(o, "abc", 3), ==, 0);
	output__free(o);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_INT(read(fd, got, sizeof(got)), ==, 3);
	close(fd);
	CHECK_STR(got, "abc");
}

TEST(output_missing_dir_fails_at_open)
{
	struct output *o = NULL;

	CHECK_INT(output__open("/nonexistent-dir/x.pb.gz", true, &o), ==, -ENOENT);
	CHECK(o == NULL);
}

TEST(output_unused_file_is_removed)
{
	char path[512];
	struct output *o = NULL;

	snprintf(path, sizeof(path), "%s/unused.bin", test_tmp_dir());
	CHECK_INT(output__open(path, true, &o), ==, 0);
	output__free(o);
	CHECK(access(path, F_OK) != 0);
}

/* Until the profile is complete the old file stands whole, and no half file under its name. */
TEST(output_replaces_old_file_only_when_complete)
{
	char path[512], link_path[520], got[16] = "";
	struct output *o = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/old.bin", test_tmp_dir());
	snprintf(link_path, sizeof(link_path), "%s.lnk", path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "old", 3), ==, 3);
	close(fd);
	CHECK_INT(symlink(path, link_path), ==, 0);
	CHECK_INT(output__open(link_path, true, &o), ==, 0);
	CHECK(output__temporary_path(o) != NULL);
	CHECK(access(output__temporary_path(o), F_OK) == 0);
	fd = open(path, O_RDONLY);
	CHECK_INT(read(fd, got, sizeof(got)), ==, 3);
	close(fd);
	CHECK_STR(got, "old");
	CHECK_INT(output__write(o, "new!", 4), ==, 0);
	CHECK(output__temporary_path(o) == NULL);
	output__free(o);
	/* Written through the link: the link stays, the file it names is new. */
	memset(got, 0, sizeof(got));
	fd = open(path, O_RDONLY);
	CHECK_INT(read(fd, got, sizeof(got)), ==, 4);
	close(fd);
	CHECK_STR(got, "new!");
	CHECK_INT(readlink(link_path, got, sizeof(got) - 1) > 0, ==, 1);
}

TEST(output_dev_full_saves_fallback)
{
	char pattern[600], cmd[700];
	struct output *o = NULL;

	if (access("/dev/full", W_OK))
		SKIP("no /dev/full");
	setenv("TMPDIR", test_tmp_dir(), 1);
	CHECK_INT(output__open("/dev/full", true, &o), ==, 0);
	CHECK_INT(output__write(o, "profile-bytes", 13), ==, -ENOSPC);
	output__free(o);
	/* The fallback file holds the profile. */
	snprintf(pattern, sizeof(pattern), "%s/cprof-%d-*", test_tmp_dir(), (int)getpid());
	snprintf(cmd, sizeof(cmd), "grep -l profile-bytes %s >/dev/null", pattern);
	CHECK_INT(system(cmd), ==, 0);
}

/* The profile shows every user's processes: only root reads it, as perf's. */
TEST(output_new_file_is_0600)
{
	char path[512];
	struct output *o = NULL;
	struct stat st;

	snprintf(path, sizeof(path), "%s/mode.bin", test_tmp_dir());
	CHECK_INT(output__open(path, true, &o), ==, 0);
	CHECK_INT(output__write(o, "x", 1), ==, 0);
	output__free(o);
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK_INT(st.st_mode & 07777, ==, 0600);
}

/* Another user's link at the name is neither followed nor replaced. */
TEST(output_refuses_link_of_another_user)
{
	char victim[512], link_path[520], got[16] = "";
	struct output *o = NULL;
	int fd;

	if (geteuid())
		SKIP("needs root to give a link away");
	snprintf(victim, sizeof(victim), "%s/victim", test_tmp_dir());
	snprintf(link_path, sizeof(link_path), "%s.lnk", victim);
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "old", 3), ==, 3);
	close(fd);
	CHECK_INT(symlink(victim, link_path), ==, 0);
	CHECK_INT(lchown(link_path, 65534, 65534), ==, 0);
	CHECK_INT(output__open(link_path, true, &o), ==, -EPERM);
	CHECK(o == NULL);
	fd = open(victim, O_RDONLY);
	CHECK_INT(read(fd, got, sizeof(got)), ==, 3);
	close(fd);
	CHECK_STR(got, "old");
	CHECK_INT(readlink(link_path, got, sizeof(got) - 1) > 0, ==, 1);
}

/* A FIFO no one reads fails at once: cprof never waits in open (nor misses a signal there). */
TEST(output_fifo_without_reader_fails_at_once)
{
	char path[512];
	struct output *o = NULL;

	snprintf(path, sizeof(path), "%s/output-fifo", test_tmp_dir());
	CHECK_INT(mkfifo(path, 0600), ==, 0);
	CHECK_INT(output__open(path, true, &o), ==, -ENXIO);
	CHECK(o == NULL);
}

/* The fallback's name can be guessed and taken first (here by links): another is made. */
TEST(output_fallback_not_through_a_planted_name)
{
	char dir[512], name[700], victim[700], cmd[1600];
	struct output *o = NULL;
	long t = (long)time(NULL);
	int i;

	if (access("/dev/full", W_OK))
		SKIP("no /dev/full");
	snprintf(dir, sizeof(dir), "%s/fallback", test_tmp_dir());
	CHECK_INT(mkdir(dir, 0700), ==, 0);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	CHECK_INT(close(open(victim, O_WRONLY | O_CREAT, 0600)), ==, 0);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s/cprof-%d-%ld-full", dir, (int)getpid(), t + i);
		CHECK_INT(symlink(victim, name), ==, 0);
	}
	setenv("TMPDIR", dir, 1);
	CHECK_INT(output__open("/dev/full", true, &o), ==, 0);
	CHECK_INT(output__write(o, "profile-bytes", 13), ==, -ENOSPC);
	output__free(o);
	snprintf(cmd, sizeof(cmd),
		 "test ! -s %s && grep -l profile-bytes %s/cprof-%d-*-full.* >/dev/null", victim,
		 dir, (int)getpid());
	CHECK_INT(system(cmd), ==, 0);
}

TEST(target_runs_and_forwards_status)
{
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	struct target *t = NULL;
	int status = 0;

	CHECK_INT(target__spawn(argv, &t), ==, 0);
	CHECK_INT(target__release(t), ==, 0);
	CHECK_INT(target__wait(t, &status), ==, 0);
	CHECK_INT(target__exit_code(status), ==, 5);
	target__free(t);
}

TEST(target_exec_failure_reported)
{
	char *argv[] = {"/nonexistent/cmd", NULL};
	struct target *t = NULL;

	CHECK_INT(target__spawn(argv, &t), ==, 0);
	CHECK_INT(target__release(t), ==, -ENOENT);
	target__free(t);
}

TEST(target_held_until_released)
{
	char marker[512], cmdline[600];
	char *argv[] = {"sh", "-c", cmdline, NULL};
	struct target *t = NULL;

	snprintf(marker, sizeof(marker), "%s/started", test_tmp_dir());
	snprintf(cmdline, sizeof(cmdline), "touch %s", marker);
	CHECK_INT(target__spawn(argv, &t), ==, 0);
	usleep(100000);
	CHECK(access(marker, F_OK) != 0);
	CHECK(!target__exited(t, NULL));
	CHECK_INT(target__release(t), ==, 0);
	CHECK_INT(target__wait(t, NULL), ==, 0);
	CHECK(access(marker, F_OK) == 0);
	target__free(t);
	target__free(NULL);
}
