/* SPDX-License-Identifier: MIT */
/*
 * Bounded reads of whole files. Errors are the file's own (-ENOENT is "no such
 * file"); lib/procfs.h turns them into "the process is gone" where that is
 * what they mean.
 */
#ifndef CPROF_FILE_H
#define CPROF_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct stat;

/* Reads at most size-1 bytes of a file into buf, NUL-terminated; returns the length or -errno. */
int file__read_small(const char *path, char *buf, size_t size);
/* Reads a whole file of unknown size (as /proc files report size 0). Caller frees *out. */
int file__read_all(const char *path, char **out, size_t *len);
/* The same from an open file, which stays open. */
int file__read_fd(int fd, char **out, size_t *len);
/* mkdir -p dir: its missing parents 0755, dir itself 0700. 0 or -errno. */
int file__make_dirs(const char *dir);
/*
 * Whether the open directory fd is one only we may change: owned by the
 * effective uid and not writable by group or others, as a directory whose
 * files steer or speak for root must be. 0, or -EPERM with the reason in why.
 */
int file__check_private_dir(int fd, char *why, size_t size);
/* Writes all len bytes of data to fd (through short writes and EINTR); 0 or -errno. */
int file__write_all(int fd, const void *data, size_t len);
/* A regular file owned by cprof's user. */
bool file__is_ours(const struct stat *st);
/*
 * Opens name, an existing file in dir_fd, only if it is a regular file of
 * cprof's user, never through a link, a FIFO or a device: it is looked at
 * before it is opened, and the opened file must be the one looked at.
 * Returns the descriptor (flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
 * -EPERM for a file that is not ours, or -errno.
 */
int file__open_ours(int dir_fd, const char *name, int flags);
/*
 * Creates a new file, 0600, named prefix and six random characters, in
 * dir_fd: O_CREAT|O_EXCL|O_NOFOLLOW, so nothing already there (a link
 * someone planted) is opened. Its name goes to name; returns the open
 * descriptor (O_RDWR: what was written may be read back) or -errno.
 */
int file__create_unique(int dir_fd, const char *prefix, char *name, size_t size);

#endif
