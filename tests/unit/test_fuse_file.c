// SPDX-License-Identifier: MIT
/*
 * The child that reads a FUSE file (lib/fuse_file.h), with files that need
 * no FUSE mount: a regular file comes back as a private copy with the
 * file's own identity; an open that never returns (a FIFO nobody writes,
 * standing in for a daemon that holds a request) costs the caller the
 * timeout once, is counted, and its mount is not tried again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fuse_file.h"
#include "test.h"

static int open_plain(const void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static const char *tmp_path(const char *name)
{
	static char path[2][1024];
	static int next;
	char *p = path[next++ % 2];

	snprintf(p, sizeof(path[0]), "%s/fuse_file-%s", test_tmp_dir(), name);
	return p;
}

TEST(fuse_file_copy_of_a_regular_file)
{
	const char *path = tmp_path("plain");
	struct fuse_file_counts before, after;
	struct stat st, orig;
	char buf[64] = {0};
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "symbols\n", 8), ==, 8);
	close(fd);
	CHECK_INT(stat(path, &orig), ==, 0);
	fuse_file__counts(&before);
	fd = fuse_file__copy(1, open_plain, path, &st);
	CHECK(fd >= 0);
	CHECK_INT(pread(fd, buf, sizeof(buf), 0), ==, 8);
	CHECK_STR(buf, "symbols\n");
	/* The identity is the file's, not the copy's. */
	CHECK_U64(st.st_ino, ==, orig.st_ino);
	CHECK_U64(st.st_dev, ==, orig.st_dev);
	close(fd);
	fuse_file__counts(&after);
	CHECK_U64(after.copied, ==, before.copied + 1);
	CHECK_U64(after.unanswered, ==, before.unanswered);
	CHECK_INT(fuse_file__copy(1, open_plain, tmp_path("missing"), &st), ==, -ENOENT);
	CHECK_INT(fuse_file__copy(1, open_plain, test_tmp_dir(), &st), ==, -EINVAL);
}

TEST(fuse_file_silent_server_given_up_once)
{
	const char *fifo = tmp_path("fifo");
	struct fuse_file_counts before, after;
	struct stat st;
	uint64_t t0, took;

	unlink(fifo);
	CHECK_INT(mkfifo(fifo, 0600), ==, 0);
	fuse_file__counts(&before);
	t0 = clock__mono_ns();
	/* open(O_RDONLY) of a FIFO without a writer waits, as a held FUSE request does. */
	CHECK_INT(fuse_file__copy(2, open_plain, fifo, &st), ==, -ETIMEDOUT);
	took = clock__mono_ns() - t0;
	CHECK_U64(took, >=, FUSE_FILE_TIMEOUT_MS * 1000000ull);
	CHECK_U64(took, <, 3 * FUSE_FILE_TIMEOUT_MS * 1000000ull);
	/* The same mount again: given up at once. */
	t0 = clock__mono_ns();
	CHECK_INT(fuse_file__copy(2, open_plain, fifo, &st), ==, -ETIMEDOUT);
	CHECK_U64(clock__mono_ns() - t0, <, 100000000ull);
	fuse_file__counts(&after);
	CHECK_U64(after.unanswered, ==, before.unanswered + 2);
	unlink(fifo);
}
