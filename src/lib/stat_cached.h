/* SPDX-License-Identifier: MIT */
/*
 * The device and inode of what a path names, from what the kernel already
 * holds: statx with AT_STATX_DONT_SYNC, which a FUSE filesystem honours by
 * not asking its daemon (which could hold a stat(2) as long as it liked,
 * lib/fuse_file.h). For /proc/PID/exe and /proc/PID/root, whose targets a
 * user may put on FUSE.
 */
#ifndef CPROF_STAT_CACHED_H
#define CPROF_STAT_CACHED_H

#include <stdint.h>

/* 0, or -errno (-ENOSYS before Linux 4.11, which has no statx). */
int stat_cached(const char *path, uint64_t *dev_major, uint64_t *dev_minor, uint64_t *ino);

#endif
