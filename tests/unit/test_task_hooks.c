// SPDX-License-Identifier: MIT
/*
 * task_hooks: the fork record's layout read from crafted tracefs format
 * files (the offset of child_pid: 44 with the comm in the record, 20 with
 * it out of line, anything else none), and on this kernel (root) the
 * hooks found, opened and closed again without a descriptor left behind.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample/task_hooks.h"
#include "test.h"

/* A tracefs directory under the scratch dir whose fork format holds text (NULL: no file). */
static const char *fake_tracefs(const char *name, const char *text)
{
	static char dir[512];
	char path[600];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", test_tmp_dir(), name);
	snprintf(path, sizeof(path), "%s/events/sched/sched_process_fork", dir);
	for (char *p = path + strlen(test_tmp_dir()) + 1; (p = strchr(p, '/')); *p++ = '/') {
		*p = '\0';
		mkdir(path, 0700);
	}
	mkdir(path, 0700);
	if (!text)
		return dir;
	strcat(path, "/format");
	f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
	return dir;
}

#define FIELD(type, name, off) "\tfield:" type " " name ";\toffset:" #off ";\tsize:4;\tsigned:1;\n"

TEST(task_hooks_fork_layout)
{
	const char *head = "name: sched_process_fork\nformat:\n" FIELD("int", "common_pid", 4);
	char text[512];

	snprintf(text, sizeof(text), "%s%s", head, FIELD("pid_t", "child_pid", 44));
	CHECK_INT(task_hooks__read_layout(fake_tracefs("static", text)), ==,
		  CPROF_FORK_STATIC_COMM);
	snprintf(text, sizeof(text), "%s%s%s", head, FIELD("__data_loc char[]", "child_comm", 16),
		 FIELD("pid_t", "child_pid", 20));
	CHECK_INT(task_hooks__read_layout(fake_tracefs("dynamic", text)), ==,
		  CPROF_FORK_DYNAMIC_COMM);
	snprintf(text, sizeof(text), "%s%s", head, FIELD("pid_t", "child_pid", 24));
	CHECK_INT(task_hooks__read_layout(fake_tracefs("other", text)), ==, CPROF_FORK_NONE);
	CHECK_INT(task_hooks__read_layout(fake_tracefs("no_field", head)), ==, CPROF_FORK_NONE);
	CHECK_INT(task_hooks__read_layout(fake_tracefs("no_file", NULL)), ==, CPROF_FORK_NONE);
	CHECK_INT(task_hooks__read_layout(NULL), ==, CPROF_FORK_NONE);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

TEST(task_hooks_live)
{
	struct task_hooks *h;
	int before;

	if (geteuid() != 0)
		test_skip("needs root");
	before = open_fds();
	CHECK_INT(task_hooks__new(&h), ==, 0);
	if (task_hooks__layout(h) == CPROF_FORK_NONE) {
		task_hooks__free(h);
		test_skip("no sched_process_fork tracepoint");
	}
	task_hooks__open(h);
	CHECK_INT(open_fds(), ==, before + 3);
	CHECK(!task_hooks__exec_attached(h));
	CHECK_U64(task_hooks__skipped(h), ==, 0);
	task_hooks__detach(h);
	task_hooks__free(h);
	task_hooks__free(NULL);
	CHECK_INT(open_fds(), ==, before);
}
