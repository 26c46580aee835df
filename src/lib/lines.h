/* SPDX-License-Identifier: MIT */
/*
 * Line-by-line reading of a file, or of text in memory, through a buffer of
 * a fixed size: a large file (/proc/kallsyms is 5+ MB) is streamed, never
 * held. A line cut by a read is carried over to the next one; the buffer
 * grows only for a line longer than itself. Memory is handed out in chunks
 * just as read(2) would, so that tests and fuzzers exercise every split.
 */
#ifndef CPROF_LINES_H
#define CPROF_LINES_H

#include <stddef.h>

/* Called for each line, without its newline; a nonzero return stops the reading. */
typedef int (*lines_fn)(void *ctx, const char *line, const char *end);

/*
 * Calls fn for every line read from fd, chunk bytes at a time, the last
 * line also when it has no newline. 0, fn's nonzero return, or -errno.
 */
int lines__read_fd(int fd, size_t chunk, lines_fn fn, void *ctx);
/* The same for text[0..len) (NULL when len is 0). */
int lines__read_mem(const char *text, size_t len, size_t chunk, lines_fn fn, void *ctx);

#endif
