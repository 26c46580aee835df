// SPDX-License-Identifier: MIT
/*
 * Chunked line reading: every chunk size gives the same lines, from memory
 * and from a file; lines longer than a chunk, a last line without newline,
 * empty lines, and a callback that stops the reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/lines.h"
#include "test.h"

struct collected {
	char text[8192];
	size_t len;
	int lines;
	int stop_after; /* 0: never */
};

/* Joins the lines with '|', so that where they were split shows. */
static int collect(void *ctx, const char *line, const char *end)
{
	struct collected *c = ctx;
	size_t n = end - line;

	CHECK(c->len + n + 1 < sizeof(c->text));
	memcpy(c->text + c->len, line, n);
	c->len += n;
	c->text[c->len++] = '|';
	c->text[c->len] = '\0';
	if (++c->lines == c->stop_after)
		return -ECANCELED;
	return 0;
}

TEST(lines_every_chunk_size_from_memory_and_file)
{
	char text[3000], path[512], want[3100];
	struct collected c;
	size_t chunk, len;
	int fd;

	/* Short lines, an empty one, a CR kept, a line of 2000 bytes, no final newline. */
	memcpy(text, "one\n\ntwo\r\n", 10);
	memset(text + 10, 'x', 2000);
	memcpy(text + 2010, "\nlast", 5);
	len = 2015;
	snprintf(want, sizeof(want), "one||two\r|%.*s|last|", 2000, text + 10);
	snprintf(path, sizeof(path), "%s/lines.%d", test_tmp_dir(), (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, len), ==, len);
	for (chunk = 1; chunk <= 4096; chunk = chunk * 3 + 1) {
		memset(&c, 0, sizeof(c));
		CHECK_INT(lines__read_mem(text, len, chunk, collect, &c), ==, 0);
		CHECK_STR(c.text, want);
		memset(&c, 0, sizeof(c));
		CHECK_INT(lseek(fd, 0, SEEK_SET), ==, 0);
		CHECK_INT(lines__read_fd(fd, chunk, collect, &c), ==, 0);
		CHECK_STR(c.text, want);
	}
	close(fd);
	unlink(path);
}

TEST(lines_stop_and_bad_arguments)
{
	struct collected c = {.stop_after = 2};

	CHECK_INT(lines__read_mem("a\nb\nc\n", 6, 2, collect, &c), ==, -ECANCELED);
	CHECK_STR(c.text, "a|b|");
	memset(&c, 0, sizeof(c));
	CHECK_INT(lines__read_mem(NULL, 0, 16, collect, &c), ==, 0);
	CHECK_INT(c.lines, ==, 0);
	CHECK_INT(lines__read_mem(NULL, 1, 16, collect, &c), ==, -EINVAL);
	CHECK_INT(lines__read_mem("a", 1, 0, collect, &c), ==, -EINVAL);
	CHECK_INT(lines__read_fd(-1, 16, collect, &c), ==, -EINVAL);
	/* A read error ends the reading with it. */
	CHECK_INT(lines__read_fd(1000000, 16, collect, &c), ==, -EBADF);
}
