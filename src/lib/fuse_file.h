/* SPDX-License-Identifier: MIT */
/*
 * Files of a process that sit on FUSE, read so that the FUSE daemon cannot
 * stall cprof. The daemon (any user's, where the kernel lets root in: a
 * mount with allow_other, or the fuse module's allow_sys_admin_access) may
 * hold a request as long as it likes, O_NONBLOCK does not apply, and a
 * request the daemon has read is waited out even by SIGKILL: a thread of
 * cprof stuck there would keep the whole process from exiting. So such a
 * file is opened and copied by a short-lived child process into a private
 * memfd, which then stands in for the file; a child that does not answer in
 * time is killed and left behind (never waited for), and no other file of
 * that mount is tried in this run. Whether a file is on FUSE is decided
 * from /proc/PID/mountinfo (lib/mountinfo.h), which no daemon sees; a
 * device that table no longer lists counts as FUSE, and so does an overlay
 * in a mount namespace of a user namespace other than cprof's: overlayfs
 * opens its layers as whoever mounted it, and a FUSE layer of a user's own
 * namespace, which never gets root's requests directly (root's uid has no
 * name there), gets them through it.
 */
#ifndef CPROF_FUSE_FILE_H
#define CPROF_FUSE_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* How long a child may take to open and copy one file. */
#define FUSE_FILE_TIMEOUT_MS 1000
/*
 * How long all FUSE reads of a run, or of one profile of continuous mode,
 * may take together: past it none is tried until the next profile, so that
 * daemons that answer slowly, or not at all, on many mounts cost a profile
 * at most this much, and a daemon's weeks of quick reads never spend it.
 */
#define FUSE_FILE_RUN_BUDGET_MS 2000
/* The largest file copied (whole: a memfd in memory). */
#define FUSE_FILE_MAX_BYTES (256ull << 20)

/*
 * What the child runs to open the file: only async-signal-safe calls (the
 * child of a multithreaded process), no malloc, no log. Returns an fd or
 * -errno.
 */
typedef int (*fuse_file_open_fn)(const void *arg);

/*
 * Whether the file process pid maps from device major:minor must be read
 * through a child (by the rule above); *key names its mount for
 * fuse_file__copy.
 */
bool fuse_file__dev_needs_child(uint32_t pid, uint32_t major, uint32_t minor, uint64_t *key);
/* Same for a path as pid sees it (pid 0: cprof's own view). */
bool fuse_file__path_needs_child(uint32_t pid, const char *path, uint64_t *key);
/*
 * Runs open_fn(arg) in a child that copies the file into a memfd: returns
 * the memfd (read-only use; offset 0) and in *st the file's own fstat, or
 * -errno: -ETIMEDOUT when the child did not answer in time, the mount key
 * had such a child before, or the run's budget is spent (counted); -EFBIG
 * over FUSE_FILE_MAX_BYTES;
 * -EINVAL not a regular file (*st set); what open_fn returned.
 */
int fuse_file__copy(uint64_t key, fuse_file_open_fn open_fn, const void *arg, struct stat *st);

struct fuse_file_counts {
	uint64_t copied;     /* files read through a child */
	uint64_t unanswered; /* given up: the server did not answer in time, or the budget */
};

void fuse_file__counts(struct fuse_file_counts *c);
/* A profile begins (continuous mode): its FUSE reads get the budget afresh. */
void fuse_file__new_interval(void);

#endif
