// SPDX-License-Identifier: MIT
/*
 * Perf map parsing: the formats runtimes write (with and without 0x, names
 * with spaces, CRLF), garbage lines counted and skipped, overlapping lines
 * resolved in favour of the later one, and exact range ends. Then reading a
 * real file through proc_file__open, and refusing what is not a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/proc_file.h"
#include "resolve/perf_map.h"
#include "test.h"

static struct perf_map *parse(const char *text)
{
	struct perf_map *m = NULL;

	CHECK_INT(perf_map__parse(text, strlen(text), &m), ==, 0);
	CHECK(m);
	return m;
}

TEST(perf_map_formats)
{
	struct perf_map *m = parse("7f0000001000 40 LazyCompile:*hot /app/a.js:3\n"
				   "0x7f0000002000 0x10 Interpreter\r\n"
				   "7F0000003000 8 stub with  two spaces  \n"
				   "7f0000004000  20 padded size\n");

	CHECK_INT(perf_map__count(m), ==, 4);
	CHECK_INT(perf_map__bad_lines(m), ==, 0);
	CHECK_STR(perf_map__lookup(m, 0x7f0000001000), "LazyCompile:*hot /app/a.js:3");
	CHECK_STR(perf_map__lookup(m, 0x7f000000103f), "LazyCompile:*hot /app/a.js:3");
	CHECK(perf_map__lookup(m, 0x7f0000001040) == NULL);
	CHECK(perf_map__lookup(m, 0x7f0000000fff) == NULL);
	CHECK_STR(perf_map__lookup(m, 0x7f000000200f), "Interpreter");
	CHECK(perf_map__lookup(m, 0x7f0000002010) == NULL);
	CHECK_STR(perf_map__lookup(m, 0x7f0000003004), "stub with  two spaces");
	CHECK_STR(perf_map__lookup(m, 0x7f0000004000), "padded size");
	CHECK(perf_map__lookup(m, 0) == NULL);
	CHECK(perf_map__lookup(m, UINT64_MAX) == NULL);
	perf_map__free(m);
}

TEST(perf_map_garbage_lines_are_counted)
{
	static const char text[] = "garbage\n"
				   "1000 10\n"			   /* no name */
				   "1000 10 \n"			   /* empty name */
				   "1000 0 zero-size\n"		   /* empty blob */
				   "zz00 10 not-hex\n"		   /* bad start */
				   "1000 1g bad-size\n"		   /* bad size */
				   "ffffffffffffff00 1000 wraps\n" /* past the end of memory */
				   "11112222333344445 10 too-long\n"
				   "\n"
				   "2000 10 good\n"
				   "3000 10 no-newline-at-end";
	struct perf_map *m = parse(text);

	CHECK_INT(perf_map__count(m), ==, 2);
	CHECK_INT(perf_map__bad_lines(m), ==, 8);
	CHECK(perf_map__lookup(m, 0x1000) == NULL);
	CHECK_STR(perf_map__lookup(m, 0x2005), "good");
	CHECK_STR(perf_map__lookup(m, 0x300f), "no-newline-at-end");
	CHECK(perf_map__lookup(m, 0xffffffffffffff10ULL) == NULL);
	perf_map__free(m);
}

TEST(perf_map_later_lines_win)
{
	/*
	 * old [1000,1100), then new [1040,1080) reuses its middle, then newer
	 * [10f0,1200) overlaps its end, then a line with the same start as the
	 * first replaces its head, and a stale short line inside "newer".
	 */
	struct perf_map *m = parse("1000 100 old\n"
				   "1040 40 new\n"
				   "10f0 110 newer\n"
				   "1000 10 head\n");

	CHECK_STR(perf_map__lookup(m, 0x1000), "head");
	CHECK_STR(perf_map__lookup(m, 0x100f), "head");
	CHECK_STR(perf_map__lookup(m, 0x1010), "old");
	CHECK_STR(perf_map__lookup(m, 0x103f), "old");
	CHECK_STR(perf_map__lookup(m, 0x1040), "new");
	CHECK_STR(perf_map__lookup(m, 0x107f), "new");
	CHECK_STR(perf_map__lookup(m, 0x1080), "old");
	CHECK_STR(perf_map__lookup(m, 0x10ef), "old");
	CHECK_STR(perf_map__lookup(m, 0x10f0), "newer");
	CHECK_STR(perf_map__lookup(m, 0x11ff), "newer");
	CHECK(perf_map__lookup(m, 0x1200) == NULL);
	perf_map__free(m);

	/* An older line entirely inside a newer one never shows. */
	m = parse("1010 10 stale\n"
		  "1000 100 fresh\n");
	CHECK_STR(perf_map__lookup(m, 0x1015), "fresh");
	CHECK_STR(perf_map__lookup(m, 0x1000), "fresh");
	CHECK_STR(perf_map__lookup(m, 0x10ff), "fresh");
	perf_map__free(m);
}

TEST(perf_map_empty_and_null)
{
	struct perf_map *m = NULL;

	CHECK_INT(perf_map__parse(NULL, 0, &m), ==, 0);
	CHECK_INT(perf_map__count(m), ==, 0);
	CHECK(perf_map__lookup(m, 0x1000) == NULL);
	perf_map__free(m);
	CHECK_INT(perf_map__parse(NULL, 5, &m), ==, -EINVAL);
	CHECK(perf_map__lookup(NULL, 1) == NULL);
	perf_map__free(NULL);
}

/* Many lines in reverse address order, each overlapping the next: the sweep stays exact. */
TEST(perf_map_many_overlapping_lines)
{
	size_t n = 20000, i, len = 0;
	char *text = malloc(n * 48);
	struct perf_map *m = NULL;
	char want[32];

	CHECK(text);
	for (i = 0; i < n; i++)
		len += sprintf(text + len, "%zx 20 f%zu\n", 0x100000 - 0x10 * i, i);
	CHECK_INT(perf_map__parse(text, len, &m), ==, 0);
	CHECK_INT(perf_map__count(m), ==, n);
	for (i = 0; i < n; i += 997) {
		/* Line i covers [b, b+0x20); line i+1 (later) covers [b-0x10, b+0x10). */
		uint64_t b = 0x100000 - 0x10 * i;

		snprintf(want, sizeof(want), "f%zu", i);
		CHECK_STR(perf_map__lookup(m, b + 0x10), want);
		CHECK_STR(perf_map__lookup(m, b + 0x1f), want);
		if (i + 1 < n) {
			snprintf(want, sizeof(want), "f%zu", i + 1);
			CHECK_STR(perf_map__lookup(m, b), want);
		}
	}
	perf_map__free(m);
	free(text);
}

TEST(perf_map_read_file_in_own_root)
{
	char path[512];
	struct perf_map *m = NULL;
	uint32_t fake = 4000000000u - (uint32_t)getpid();
	FILE *f;

	/* /tmp/perf-N.map with an N no real process has, seen through our own root. */
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", fake);
	f = fopen(path, "w");
	if (!f)
		SKIP("cannot write %s", path);
	fputs("1000 10 jitted\nbad line\n", f);
	fclose(f);
	CHECK_INT(perf_map__read(getpid(), fake, &m), ==, 0);
	CHECK_STR(perf_map__lookup(m, 0x1008), "jitted");
	CHECK_INT(perf_map__bad_lines(m), ==, 1);
	perf_map__free(m);
	unlink(path);

	/* A FIFO must neither block nor be read. */
	CHECK_INT(mkfifo(path, 0600), ==, 0);
	CHECK_INT(perf_map__read(getpid(), fake, &m), ==, -EINVAL);
	CHECK(m == NULL);
	unlink(path);
	CHECK_INT(perf_map__read(getpid(), fake, &m), ==, -ENOENT);
}

/*
 * A process in a chroot links its perf map to an absolute path: the link must
 * resolve inside its root, not to the host file of that name.
 */
TEST(perf_map_symlink_stays_in_process_root)
{
	char root[512], dir[600], link[700], host_dir[600], host_file[700];
	struct perf_map *m = NULL;
	int ready[2], err, fd;
	pid_t child;
	char c;
	FILE *f;

	/* Host files the links name, which must not be read. */
	snprintf(host_dir, sizeof(host_dir), "%s/host", test_tmp_dir());
	CHECK_INT(mkdir(host_dir, 0755), ==, 0);
	snprintf(host_file, sizeof(host_file), "%s/perf-77.map", host_dir);
	f = fopen(host_file, "w");
	CHECK(f);
	fputs("1000 10 host_secret\n", f);
	fclose(f);
	/* root/tmp links to the host directory, root/tmp2/perf-78.map to the host file. */
	snprintf(root, sizeof(root), "%s/root", test_tmp_dir());
	CHECK_INT(mkdir(root, 0755), ==, 0);
	snprintf(link, sizeof(link), "%s/tmp", root);
	CHECK_INT(symlink(host_dir, link), ==, 0);
	snprintf(dir, sizeof(dir), "%s/tmp2", root);
	CHECK_INT(mkdir(dir, 0755), ==, 0);
	snprintf(link, sizeof(link), "%s/tmp2/perf-78.map", root);
	CHECK_INT(symlink(host_file, link), ==, 0);

	CHECK_INT(pipe(ready), ==, 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		c = chroot(root) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		c = 'n';
	if (c != 'y') {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP("chroot needs root");
	}
	/* (Inside the root, root/tmp links to itself: ELOOP rather than ENOENT.) */
	err = perf_map__read((uint32_t)child, 77, &m);
	fd = proc_file__open((uint32_t)child, "/tmp2/perf-78.map", 0, NULL);
	/* The child goes before any check can end the test. */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(err < 0);
	CHECK(m == NULL);
	CHECK(fd < 0);
}

/* Writes text then pad bytes of padding lines to /tmp/perf-N.map; returns N. */
static uint32_t write_big_map(const char *head, size_t lines, size_t pad)
{
	uint32_t fake = 4000000000u - (uint32_t)getpid();
	char path[64];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", fake);
	f = fopen(path, "w");
	CHECK(f);
	fputs(head, f);
	for (i = 0; i < lines; i++)
		fprintf(f, "%zx 1 f%zu\n", 0x100000 + i * 2, i);
	for (i = 0; i < pad / 64; i++)
		fprintf(f, "%063zu\n", i);
	fclose(f);
	return fake;
}

/* Past 16 MiB only the head is read, whole lines; past 256Ki lines, the first ones. */
TEST(perf_map_caps_bytes_and_lines)
{
	struct perf_map_source src = {0};
	struct perf_map *m = NULL;
	uint32_t fake;
	char path[64];

	fake = write_big_map("1000 10 head\n", 0, 20u << 20);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", fake);
	CHECK_INT(perf_map__reread(getpid(), fake, &src, &m), ==, 1);
	CHECK_STR(perf_map__lookup(m, 0x1008), "head");
	CHECK(perf_map__capped(m));
	CHECK(src.capped);
	/* Capped lines are not counted as malformed, nor a line cut in two. */
	CHECK_INT(perf_map__bad_lines(m), ==, ((16u << 20) - 13) / 64);
	perf_map__free(m);
	/* The same file (longer or not): its head has not changed, it is not read again. */
	CHECK_INT(perf_map__reread(getpid(), fake, &src, &m), ==, 0);
	CHECK(m == NULL);
	unlink(path);

	fake = write_big_map("", (256u << 10) + 1, 0);
	CHECK_INT(perf_map__read(getpid(), fake, &m), ==, 0);
	CHECK(perf_map__capped(m));
	CHECK_U64(perf_map__count(m), ==, 256u << 10);
	CHECK_STR(perf_map__lookup(m, 0x100000), "f0");
	CHECK(perf_map__lookup(m, 0x100000 + (256u << 10) * 2) == NULL);
	perf_map__free(m);
	unlink(path);
}

/* A map must not be a link at all, even to a file the process owns. */
TEST(perf_map_link_refused)
{
	struct perf_map_source src = {0};
	uint32_t fake = 4000000000u - (uint32_t)getpid();
	char path[64], target[600];
	struct perf_map *m = NULL;
	FILE *f;

	snprintf(target, sizeof(target), "%s/map", test_tmp_dir());
	f = fopen(target, "w");
	CHECK(f);
	fputs("1000 10 linked\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", fake);
	unlink(path);
	CHECK_INT(symlink(target, path), ==, 0);
	CHECK_INT(perf_map__reread(getpid(), fake, &src, &m), ==, -ELOOP);
	CHECK_INT(src.refused, ==, PROC_FILE_LINK);
	CHECK(m == NULL);
	unlink(path);
}
