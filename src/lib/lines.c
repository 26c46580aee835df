// SPDX-License-Identifier: MIT
/* Chunked line reading; see lines.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/lines.h"

/* Where lines come from: a file, or memory handed out as read(2) would. */
struct source {
	int fd; /* -1: memory */
	const char *mem;
	size_t mem_len;
	size_t mem_pos;
	size_t chunk; /* bytes per read */
};

static ssize_t source_read(struct source *src, char *buf, size_t room)
{
	size_t n;
	ssize_t r;

	if (room > src->chunk)
		room = src->chunk;
	if (src->fd < 0) {
		n = src->mem_len - src->mem_pos;
		if (n > room)
			n = room;
		/* NULL text of length 0 is an empty input; NULL + 0 is not allowed. */
		if (n)
			memcpy(buf, src->mem + src->mem_pos, n);
		src->mem_pos += n;
		return (ssize_t)n;
	}
	do
		r = read(src->fd, buf, room);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static int read_lines(struct source *src, lines_fn fn, void *ctx)
{
	size_t cap = src->chunk, len = 0;
	char *buf = malloc(cap), *nbuf;
	const char *line, *scan, *end, *nl;
	ssize_t r;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			/* A line longer than the buffer: make room for all of it. */
			nbuf = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
			if (!nbuf) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nbuf;
			cap *= 2;
		}
		r = source_read(src, buf + len, cap - len);
		if (r < 0) {
			err = (int)r;
			goto cleanup;
		}
		if (!r)
			break;
		line = buf;
		scan = buf + len;
		end = buf + len + r;
		while ((nl = memchr(scan, '\n', end - scan))) {
			err = fn(ctx, line, nl);
			if (err)
				goto cleanup;
			line = scan = nl + 1;
		}
		len = end - line;
		memmove(buf, line, len);
	}
	if (len)
		err = fn(ctx, buf, buf + len);
cleanup:
	free(buf);
	return err;
}

int lines__read_fd(int fd, size_t chunk, lines_fn fn, void *ctx)
{
	struct source src = {.fd = fd, .chunk = chunk};

	if (fd < 0 || !chunk)
		return -EINVAL;
	return read_lines(&src, fn, ctx);
}

int lines__read_mem(const char *text, size_t len, size_t chunk, lines_fn fn, void *ctx)
{
	struct source src = {.fd = -1, .mem = text, .mem_len = len, .chunk = chunk};

	if ((!text && len) || !chunk)
		return -EINVAL;
	return read_lines(&src, fn, ctx);
}
