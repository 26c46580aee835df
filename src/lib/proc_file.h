/* SPDX-License-Identifier: MIT */
/*
 * The one rule for files cprof, as root, opens on a process's behalf: its
 * perf map, the files it maps, their debug files. The process chose the
 * path and may own every directory on it, so the file is opened
 *   - inside the process's root, never through a link out of it, a /proc
 *     magic link, or (for a perf map) any symbolic link at all;
 *   - without blocking (a FIFO or device is refused, never waited on);
 *   - only if it is a regular file;
 *   - where asked, only if the process's own user could read it: owned by
 *     its user, or by root and readable by everyone and writable by no one
 *     else. A link or a bind mount to a root-only file is refused, so no
 *     byte of it reaches a profile.
 * Reads of what was opened are bounded by the callers, before reading, from
 * the size fstat gives.
 */
#ifndef CPROF_PROC_FILE_H
#define CPROF_PROC_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Why a file was refused; counted by reason in the summary. */
enum proc_file_refusal {
	PROC_FILE_OK,
	PROC_FILE_LINK,	       /* a symbolic link where none may be, or a way out of the root */
	PROC_FILE_NOT_REGULAR, /* a FIFO, device, socket or directory */
	PROC_FILE_NOT_OWNER,   /* not readable by the process's own user */
	PROC_FILE_TOO_BIG,     /* over the caller's size cap */
	PROC_FILE_REFUSALS,
};

/* No symbolic link anywhere on the path (perf maps: perf's own rule, stricter). */
#define PROC_FILE_NO_LINKS 1u
/* Owned by the process's user, or by root and world-readable, not writable by others. */
#define PROC_FILE_OWNED 2u

/*
 * Opens path (absolute) as process pid sees it, through its root; pid 0 is
 * our own root (no ownership to check). Returns an fd (O_RDONLY, O_NONBLOCK)
 * or -errno; *why (may be NULL) says which rule refused it, PROC_FILE_OK for
 * an ordinary failure such as -ENOENT.
 */
int proc_file__open(uint32_t pid, const char *path, unsigned flags, enum proc_file_refusal *why);
/*
 * The same in our own root, for a process that has exited and shared it:
 * the owner rule is checked against uid, its user remembered while it lived.
 */
int proc_file__open_as(uint32_t uid, const char *path, unsigned flags, enum proc_file_refusal *why);
/*
 * The pre-5.6 way (no openat2): path walked one component at a time under
 * dfd with O_NOFOLLOW, ".." refused. Used when openat2 is missing; exposed
 * for its tests.
 */
int proc_file__walk(int dfd, const char *path);
/* Whether a user uid could read the file st describes, by the rule above. */
bool proc_file__readable_by(const struct stat *st, uint32_t uid);
/* A short phrase for the summary: "a symbolic link", ... */
const char *proc_file__refusal_name(enum proc_file_refusal why);

#endif
