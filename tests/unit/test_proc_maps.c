// SPDX-License-Identifier: MIT
/*
 * proc_maps: fixture maps text for every odd case the kernel (or a broken
 * input) can produce, and the live /proc/self/maps and /proc/PID/maps of a
 * zombie and of a process that is gone.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/proc_maps.h"
#include "test.h"

static char *read_fixture(const char *name, size_t *len)
{
	char path[512], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/proc/%s", test_fixtures_dir(), name);
	f = fopen(path, "rb");
	if (!f)
		test_fail(__FILE__, __LINE__, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	CHECK(buf);
	CHECK_INT(fread(buf, 1, n, f), ==, n);
	fclose(f);
	*len = n;
	return buf;
}

static struct proc_maps *parse_fixture(const char *name)
{
	struct proc_maps *m = NULL;
	size_t len;
	char *text = read_fixture(name, &len);

	CHECK_INT(proc_maps__parse(text, len, &m), ==, 0);
	CHECK(m);
	/* The result must not point into the caller's buffer. */
	memset(text, 'X', len);
	free(text);
	return m;
}

TEST(proc_maps_pie)
{
	struct proc_maps *m = parse_fixture("pie.maps");
	const struct proc_map *p;

	CHECK_INT(proc_maps__count(m), ==, 21);
	CHECK_INT(proc_maps__bad_lines(m), ==, 0);
	p = proc_maps__find(m, 0x5581a3a01234);
	CHECK(p);
	CHECK_U64(p->start, ==, 0x5581a3a01000);
	CHECK_U64(p->end, ==, 0x5581a3a05000);
	CHECK_U64(p->offset, ==, 0x1000);
	CHECK_INT(p->perms, ==, PROC_MAP_READ | PROC_MAP_EXEC | PROC_MAP_PRIVATE);
	CHECK_INT(p->dev_major, ==, 0xfe);
	CHECK_INT(p->dev_minor, ==, 0);
	CHECK_U64(p->inode, ==, 1311077);
	CHECK_INT(p->kind, ==, PROC_MAP_FILE);
	CHECK_STR(p->path, "/opt/app/bin/server");
	CHECK(!p->deleted);
	/* End is exclusive; the next mapping starts there. */
	p = proc_maps__find(m, 0x5581a3a05000);
	CHECK(p);
	CHECK_U64(p->offset, ==, 0x5000);
	CHECK_INT(p->perms, ==, PROC_MAP_READ | PROC_MAP_PRIVATE);
	p = proc_maps__find(m, 0x7f2c8e300000);
	CHECK(p);
	CHECK_STR(p->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK_U64(p->offset, ==, 0x26000);
	p = proc_maps__find(m, 0x7f2c8e3d5000);
	CHECK(p);
	CHECK_INT(p->kind, ==, PROC_MAP_ANON);
	CHECK(p->path == NULL);
	p = proc_maps__find(m, 0x7f2c8e404010);
	CHECK(p);
	CHECK_INT(p->kind, ==, PROC_MAP_SPECIAL);
	CHECK_STR(p->path, "[vdso]");
	p = proc_maps__find(m, 0xffffffffff600000);
	CHECK(p);
	CHECK_STR(p->path, "[vsyscall]");
	CHECK_INT(p->perms, ==, PROC_MAP_EXEC | PROC_MAP_PRIVATE);
	/* Holes between mappings and the space around them. */
	CHECK(proc_maps__find(m, 0x5581a3a08000) == NULL);
	CHECK(proc_maps__find(m, 0x7f2c8e3e2000) == NULL);
	CHECK(proc_maps__find(m, 0) == NULL);
	CHECK(proc_maps__find(m, 0x5581a39fffff) == NULL);
	CHECK(proc_maps__find(m, UINT64_MAX) == NULL);
	CHECK(proc_maps__get(m, 21) == NULL);
	CHECK_U64(proc_maps__get(m, 0)->start, ==, 0x5581a3a00000);
	proc_maps__free(m);
}

TEST(proc_maps_nopie)
{
	struct proc_maps *m = parse_fixture("nopie.maps");
	const struct proc_map *p;

	CHECK_INT(proc_maps__count(m), ==, 10);
	CHECK_INT(proc_maps__bad_lines(m), ==, 0);
	p = proc_maps__find(m, 0x401500);
	CHECK(p);
	CHECK_STR(p->path, "/usr/local/bin/legacy");
	CHECK_U64(p->offset, ==, 0x1000);
	CHECK_INT(p->dev_major, ==, 8);
	CHECK_INT(p->dev_minor, ==, 1);
	p = proc_maps__find(m, 0x7f8a1c021000);
	CHECK(p);
	CHECK_INT(p->perms, ==, PROC_MAP_PRIVATE);
	CHECK_INT(p->kind, ==, PROC_MAP_ANON);
	CHECK_STR(proc_maps__find(m, 0x01e8f000)->path, "[heap]");
	proc_maps__free(m);
}

TEST(proc_maps_deleted)
{
	struct proc_maps *m = parse_fixture("deleted.maps");
	const struct proc_map *p;

	CHECK_INT(proc_maps__count(m), ==, 5);
	p = proc_maps__find(m, 0x55d0c0a01000);
	CHECK(p);
	CHECK_STR(p->path, "/opt/app/bin/server");
	CHECK(p->deleted);
	CHECK_INT(p->kind, ==, PROC_MAP_FILE);
	p = proc_maps__find(m, 0x7f0000000000);
	CHECK(p);
	CHECK_STR(p->path, "/memfd:jit-code");
	CHECK(p->deleted);
	CHECK_INT(p->perms, ==, PROC_MAP_READ | PROC_MAP_EXEC);
	/* Only the final suffix is the kernel's. */
	p = proc_maps__find(m, 0x7f0000200000);
	CHECK(p);
	CHECK_STR(p->path, "/tmp/a (deleted) file");
	CHECK(p->deleted);
	p = proc_maps__find(m, 0x7f0000300000);
	CHECK(p);
	CHECK_STR(p->path, "/tmp/not deleted");
	CHECK(!p->deleted);
	proc_maps__free(m);
}

TEST(proc_maps_special_and_anonymous)
{
	struct proc_maps *m = parse_fixture("special.maps");
	const struct proc_map *p;

	CHECK_INT(proc_maps__count(m), ==, 8);
	CHECK_INT(proc_maps__bad_lines(m), ==, 0);
	p = proc_maps__find(m, 0x7f5e00000000);
	CHECK_INT(p->kind, ==, PROC_MAP_SPECIAL);
	CHECK_STR(p->path, "[anon:libc_malloc]");
	CHECK_STR(proc_maps__find(m, 0x7f5e00100000)->path, "[anon:name with spaces]");
	p = proc_maps__find(m, 0x7f5e00200000);
	CHECK_INT(p->kind, ==, PROC_MAP_SPECIAL);
	CHECK_STR(p->path, "anon_inode:[perf_event]");
	CHECK_INT(p->perms, ==, PROC_MAP_READ | PROC_MAP_WRITE);
	/* Anonymous with and without the padding after the inode. */
	p = proc_maps__find(m, 0x7f5e00300000);
	CHECK_INT(p->kind, ==, PROC_MAP_ANON);
	CHECK(p->path == NULL);
	p = proc_maps__find(m, 0x7f5e00400000);
	CHECK_INT(p->kind, ==, PROC_MAP_ANON);
	CHECK(p->path == NULL);
	CHECK_STR(proc_maps__find(m, 0x7ffd5b2e1000)->path, "[stack]");
	CHECK_STR(proc_maps__find(m, 0x7ffd5b3f1fff)->path, "[vdso]");
	CHECK_STR(proc_maps__find(m, 0xffffffffff600fff)->path, "[vsyscall]");
	proc_maps__free(m);
}

TEST(proc_maps_spaces_in_path)
{
	struct proc_maps *m = parse_fixture("spaces.maps");

	CHECK_INT(proc_maps__count(m), ==, 3);
	CHECK_STR(proc_maps__get(m, 0)->path, "/home/user/My Programs/app with  two  spaces");
	CHECK_STR(proc_maps__get(m, 1)->path, "/home/user/trailing space ");
	/* The kernel's escape for a newline in a name is kept as is. */
	CHECK_STR(proc_maps__get(m, 2)->path, "/opt/new\\012line");
	proc_maps__free(m);
}

TEST(proc_maps_garbage_lines)
{
	struct proc_maps *m = parse_fixture("garbage.maps");

	CHECK_INT(proc_maps__count(m), ==, 2);
	/* 11 malformed lines (blank lines do not count) plus one overlapping a good one. */
	CHECK_INT(proc_maps__bad_lines(m), ==, 12);
	CHECK_STR(proc_maps__get(m, 0)->path, "/bin/good1");
	CHECK_STR(proc_maps__get(m, 1)->path, "/bin/good2");
	CHECK_STR(proc_maps__find(m, 0x55d0c0a0b000 - 1)->path, "/bin/good2");
	CHECK(proc_maps__find(m, 0x55d0c0a0b000) == NULL);
	proc_maps__free(m);
}

TEST(proc_maps_unsorted)
{
	struct proc_maps *m = parse_fixture("unsorted.maps");
	size_t i;

	CHECK_INT(proc_maps__count(m), ==, 4);
	for (i = 1; i < proc_maps__count(m); i++)
		CHECK_U64(proc_maps__get(m, i - 1)->end, <=, proc_maps__get(m, i)->start);
	CHECK_STR(proc_maps__find(m, 0x7f0000000000)->path, "/lib/z");
	CHECK_STR(proc_maps__find(m, 0x7f0000001800)->path, "/lib/a");
	CHECK_STR(proc_maps__find(m, 0x7f0000002000)->path, "/lib/b");
	CHECK_STR(proc_maps__find(m, 0x7f0000003fff)->path, "/lib/c");
	proc_maps__free(m);
}

TEST(proc_maps_find_index)
{
	struct proc_maps *m = parse_fixture("pie.maps");
	const struct proc_map *p;
	size_t i, idx;

	for (i = 0; i < proc_maps__count(m); i++) {
		const struct proc_map *want = proc_maps__get(m, i);

		idx = SIZE_MAX;
		p = proc_maps__find_index(m, want->end - 1, &idx);
		CHECK(p == want);
		CHECK_INT(idx, ==, i);
	}
	idx = 77;
	CHECK(proc_maps__find_index(m, 0x1000, &idx) == NULL);
	CHECK_INT(idx, ==, 77);
	CHECK(proc_maps__find_index(m, 0x5581a3a00000, NULL) == proc_maps__get(m, 0));
	proc_maps__free(m);
}

TEST(proc_maps_no_trailing_newline)
{
	struct proc_maps *m = parse_fixture("no_newline.maps");

	CHECK_INT(proc_maps__count(m), ==, 1);
	CHECK_STR(proc_maps__get(m, 0)->path, "/lib/no-newline");
	proc_maps__free(m);
}

TEST(proc_maps_long_line_and_edge_input)
{
	static const char head[] = "7f0000000000-7f0000001000 r-xp 00000000 fe:00 7    /";
	size_t plen = 100000, len = sizeof(head) - 1 + plen;
	struct proc_maps *m = NULL;
	char *text = malloc(len);
	const struct proc_map *p;
	size_t i;

	CHECK(text);
	memcpy(text, head, sizeof(head) - 1);
	for (i = sizeof(head) - 1; i < len; i++)
		text[i] = 'a' + i % 26;
	/* Not NUL-terminated: the parser must stay within len. */
	CHECK_INT(proc_maps__parse(text, len, &m), ==, 0);
	p = proc_maps__find(m, 0x7f0000000000);
	CHECK(p);
	CHECK_INT(strlen(p->path), ==, plen + 1);
	CHECK_INT(p->path[0], ==, '/');
	proc_maps__free(m);
	free(text);

	CHECK_INT(proc_maps__parse("", 0, &m), ==, 0);
	CHECK_INT(proc_maps__count(m), ==, 0);
	CHECK(proc_maps__find(m, 0) == NULL);
	proc_maps__free(m);
	CHECK_INT(proc_maps__parse(NULL, 0, &m), ==, 0);
	proc_maps__free(m);
	CHECK_INT(proc_maps__parse("\n\n\n", 3, &m), ==, 0);
	CHECK_INT(proc_maps__bad_lines(m), ==, 0);
	proc_maps__free(m);
	/* Cut in the middle of a line. */
	CHECK_INT(proc_maps__parse(head, 20, &m), ==, 0);
	CHECK_INT(proc_maps__count(m), ==, 0);
	CHECK_INT(proc_maps__bad_lines(m), ==, 1);
	proc_maps__free(m);
	proc_maps__free(NULL);
	CHECK_INT(proc_maps__count(NULL), ==, 0);
	CHECK(proc_maps__find(NULL, 0) == NULL);
}

static __attribute__((noinline)) int a_function_in_this_binary(int x)
{
	return x * 7;
}

TEST(proc_maps_read_self)
{
	uint64_t addr = (uint64_t)(uintptr_t)&a_function_in_this_binary;
	struct proc_maps *m = NULL;
	const struct proc_map *p;
	char exe[4096];
	ssize_t n;
	int x = 0;

	CHECK_INT(proc_maps__read(getpid(), &m), ==, 0);
	CHECK_INT(proc_maps__count(m), >, 2);
	CHECK_INT(proc_maps__bad_lines(m), ==, 0);
	p = proc_maps__find(m, addr);
	CHECK(p);
	CHECK(p->perms & PROC_MAP_EXEC);
	CHECK_INT(p->kind, ==, PROC_MAP_FILE);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK_INT(n, >, 0);
	exe[n] = '\0';
	CHECK_STR(p->path, exe);
	/* Our stack is in a mapping too. */
	p = proc_maps__find(m, (uint64_t)(uintptr_t)&x);
	CHECK(p);
	CHECK(p->perms & PROC_MAP_WRITE);
	CHECK_INT(a_function_in_this_binary(1), ==, 7);
	proc_maps__free(m);
}

/* Forks a child that exits at once; returns its PID once it is a zombie. */
static pid_t fork_zombie(void)
{
	char path[64], stat[256];
	pid_t pid;
	FILE *f;
	int i;

	pid = fork();
	CHECK_INT(pid, >=, 0);
	if (pid == 0)
		_exit(0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 500; i++) {
		f = fopen(path, "r");
		if (f) {
			bool zombie = fgets(stat, sizeof(stat), f) && strstr(stat, ") Z ");

			fclose(f);
			if (zombie)
				return pid;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	test_fail(__FILE__, __LINE__, "PID %d never became a zombie", (int)pid);
	return pid;
}

TEST(proc_maps_read_gone_and_zombie)
{
	struct proc_maps *m = (struct proc_maps *)1;
	pid_t pid;

	/* Above any pid_max (4194304), so no process can have it. */
	CHECK_INT(proc_maps__read(0x7ffffff0, &m), ==, -ESRCH);
	CHECK(m == NULL);
	CHECK_INT(proc_maps__read(0, &m), ==, -EINVAL);

	/* Not reaped yet. */
	pid = fork_zombie();
	CHECK_INT(proc_maps__read(pid, &m), ==, -ESRCH);
	CHECK_INT(waitpid(pid, NULL, 0), ==, pid);
	CHECK_INT(proc_maps__read(pid, &m), ==, -ESRCH);
}

/*
 * A zombie is still listed in /proc but has no root and no map_files: the
 * file it mapped is opened by its path as cprof sees it (same identity).
 */
TEST(proc_map_open_through_a_zombie)
{
	uint64_t addr = (uint64_t)(uintptr_t)&a_function_in_this_binary;
	struct proc_maps *m = NULL;
	struct proc_map other;
	const struct proc_map *p;
	pid_t pid;
	int fd;

	CHECK_INT(proc_maps__read(getpid(), &m), ==, 0);
	p = proc_maps__find(m, addr);
	CHECK(p);
	pid = fork_zombie();
	fd = proc_map__open(pid, p);
	CHECK_INT(fd, >=, 0);
	close(fd);
	/* Another file's identity is refused, not opened by its path. */
	other = *p;
	other.inode++;
	CHECK_INT(proc_map__open(pid, &other), ==, -ESTALE);
	CHECK_INT(waitpid(pid, NULL, 0), ==, pid);
	fd = proc_map__open(pid, p);
	CHECK_INT(fd, >=, 0);
	close(fd);
	proc_maps__free(m);
}

TEST(proc_map_named_as_the_kernel_names_it)
{
	struct proc_map m;
	char file[] = "/usr/lib/libc.so.6", gone[] = "/tmp/prog (deleted)", anon[] = "//anon",
	     none[] = "", vdso[] = "[vdso]", memfd[] = "/memfd:jit (deleted)";

	proc_map__set_name(&m, file);
	CHECK_INT(m.kind, ==, PROC_MAP_FILE);
	CHECK_STR(m.path, "/usr/lib/libc.so.6");
	CHECK(!m.deleted);
	proc_map__set_name(&m, gone);
	CHECK_INT(m.kind, ==, PROC_MAP_FILE);
	CHECK_STR(m.path, "/tmp/prog");
	CHECK(m.deleted);
	proc_map__set_name(&m, anon);
	CHECK_INT(m.kind, ==, PROC_MAP_ANON);
	CHECK(!m.path && !m.deleted);
	proc_map__set_name(&m, none);
	CHECK_INT(m.kind, ==, PROC_MAP_ANON);
	proc_map__set_name(&m, vdso);
	CHECK_INT(m.kind, ==, PROC_MAP_SPECIAL);
	CHECK_STR(m.path, "[vdso]");
	proc_map__set_name(&m, memfd);
	CHECK_INT(m.kind, ==, PROC_MAP_FILE);
	CHECK_STR(m.path, "/memfd:jit");
	CHECK(m.deleted);
}
