/* SPDX-License-Identifier: MIT */
/*
 * Delivers the encoded profile to a file or stdout. The destination is opened
 * before profiling starts so that a bad path fails in a second, not after
 * ten minutes of collection; if the final write still fails, the profile is
 * saved to a fallback file rather than lost.
 */
#ifndef CPROF_OUTPUT_H
#define CPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

struct output;

/*
 * path "-" is stdout; binary output to a terminal is refused. The path is
 * never resolved whole: a link, FIFO, device or socket another user put at
 * its name is refused (with a one-line error); a new file is made 0600.
 */
int output__open(const char *path, bool binary, struct output **out);
/*
 * Writes the whole profile. On failure, logs the reason, saves the data to
 * a fallback file in $TMPDIR (or /tmp) and names it, and returns the error.
 */
int output__write(struct output *o, const void *data, size_t len);
const char *output__path(const struct output *o);
/* Where a file is written until complete (then renamed to its path); NULL if none. */
const char *output__temporary_path(const struct output *o);
/* Closes; removes the temporary file if the profile was never written. */
void output__free(struct output *o);

#endif
