// SPDX-License-Identifier: MIT
/*
 * Runs every registered TEST in a forked child with a time limit, so a crash
 * or a hang is reported as that test's failure and the others still run.
 * Usage: unit_tests [SUBSTRING...]  (run only tests whose name contains one)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define MAX_TESTS      1024
#define TEST_TIMEOUT_S 60

struct test_entry {
	const char *name;
	test_fn fn;
};

static struct test_entry tests[MAX_TESTS];
static int ntests;
/* Shared with the child so that it can hand back its failure message. */
static char *result_msg;
#define RESULT_MSG_SIZE 4096

void test_register(const char *name, test_fn fn)
{
	if (ntests < MAX_TESTS)
		tests[ntests++] = (struct test_entry){name, fn};
}

static __attribute__((noreturn)) void finish(int code, const char *fmt, va_list ap)
{
	if (result_msg)
		vsnprintf(result_msg, RESULT_MSG_SIZE, fmt, ap);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char buf[RESULT_MSG_SIZE - 256];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (result_msg)
		snprintf(result_msg, RESULT_MSG_SIZE, "%s:%d: %s", file, line, buf);
	fflush(stdout);
	_exit(1);
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	finish(77, fmt, ap);
	va_end(ap);
}

const char *test_fixtures_dir(void)
{
	const char *d = getenv("CPROF_FIXTURES");

	return d && *d ? d : "fixtures";
}

const char *test_build_fixture(const char *name)
{
	static char path[8][512];
	static int next;
	const char *dir = getenv("CPROF_BUILD_FIXTURES");
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", dir && *dir ? dir : ".output/fixtures", name);
	if (access(p, R_OK))
		test_skip("%s not built (make fixtures)", p);
	return p;
}

const void *test_vdso(size_t *size)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	unsigned long long s, e;
	char line[512];
	FILE *f;

	*size = 0;
	if (!base || !(f = fopen("/proc/self/maps", "r")))
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base)
			*size = e - s;
	fclose(f);
	return *size ? (const void *)base : NULL;
}

const char *test_system_libc(void)
{
	static const char *const paths[] = {"/lib/x86_64-linux-gnu/libc.so.6",
					    "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6",
					    "/usr/lib/libc.so.6"};
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!access(paths[i], R_OK))
			return paths[i];
	test_skip("no glibc libc.so.6 found");
}

uint8_t *test_read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	CHECK_INT(fd, >=, 0);
	CHECK_INT(fstat(fd, &st), ==, 0);
	buf = malloc(st.st_size + 1);
	CHECK(buf);
	CHECK_INT(read(fd, buf, st.st_size), ==, st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

const char *test_write_tmp(const char *name, const void *buf, size_t len)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];
	int fd;

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmp_dir(), name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK_INT(fd, >=, 0);
	CHECK_INT(write(fd, buf, len), ==, (ssize_t)len);
	close(fd);
	return p;
}

const char *test_tmp_dir(void)
{
	static char dir[256];

	if (!dir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/cprof-unit-%d", base && *base ? base : "/tmp",
			 (int)getpid());
		mkdir(dir, 0700);
	}
	return dir;
}

void test_hexdump_diff(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
	size_t i;

	fprintf(stderr, "  got  (%zu):", got_len);
	for (i = 0; i < got_len && i < 256; i++)
		fprintf(stderr, " %02x", got[i]);
	fprintf(stderr, "\n  want (%zu):", want_len);
	for (i = 0; i < want_len && i < 256; i++)
		fprintf(stderr, " %02x", want[i]);
	fprintf(stderr, "\n");
}

static int selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

static int run_one(const struct test_entry *t)
{
	int status = 0, waited = 0;
	pid_t pid, r;

	result_msg[0] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("not ok %s - fork: %s\n", t->name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		t->fn();
		fflush(stdout);
		_exit(0);
	}
	/* Poll rather than alarm() so the parent needs no signal handling. */
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			printf("not ok %s - waitpid: %s\n", t->name, strerror(errno));
			return 1;
		}
		if (waited >= TEST_TIMEOUT_S * 100) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("not ok %s - timed out after %d s\n", t->name, TEST_TIMEOUT_S);
			return 1;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		waited++;
	}
	if (WIFSIGNALED(status)) {
		printf("not ok %s - killed by signal %d (%s)\n", t->name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		return 1;
	}
	switch (WEXITSTATUS(status)) {
	case 0:
		printf("ok %s\n", t->name);
		return 0;
	case 77:
		printf("skip %s - %s\n", t->name, result_msg);
		return 0;
	default:
		printf("not ok %s - %s\n", t->name, result_msg[0] ? result_msg : "exit status");
		return 1;
	}
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	result_msg = mmap(NULL, RESULT_MSG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
	if (result_msg == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* Created before forking so that every test shares it; removed at the end. */
	test_tmp_dir();
	for (i = 0; i < ntests; i++)
		if (selected(tests[i].name, argc, argv))
			failed += run_one(&tests[i]);
	if (!getenv("CPROF_KEEP_TMP")) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_tmp_dir());
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", test_tmp_dir());
	}
	return failed ? 1 : 0;
}
