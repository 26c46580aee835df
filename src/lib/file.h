/* SPDX-License-Identifier: MIT */
/*
 * Bounded reads of whole files. Errors are the file's own (-ENOENT is "no such
 * file"); lib/procfs.h turns them into "the process is gone" where that is
 * what they mean.
 */
#ifndef CPROF_FILE_H
#define CPROF_FILE_H

#include <stddef.h>

/* Reads at most size-1 bytes of a file into buf, NUL-terminated; returns the length or -errno. */
int file__read_small(const char *path, char *buf, size_t size);
/* Reads a whole file of unknown size (as /proc files report size 0). Caller frees *out. */
int file__read_all(const char *path, char **out, size_t *len);
/* The same from an open file, which stays open. */
int file__read_fd(int fd, char **out, size_t *len);

#endif
