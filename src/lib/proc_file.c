// SPDX-License-Identifier: MIT
/*
 * Opening a file on a process's behalf; the rule is in proc_file.h.
 * openat2 (5.6) resolves the whole path inside the root in one call. Before
 * it, each component is opened in turn with O_NOFOLLOW, which refuses every
 * symbolic link, also those a container's own root would have resolved:
 * stricter, never looser. The walk also stands in where a seccomp filter
 * refuses openat2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/fuse_file.h"
#include "lib/proc_file.h"
#include "lib/procfs.h"

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK)

int proc_file__walk(int dfd, const char *path)
{
	char comp[256];
	int cur = dfd, next;
	size_t n;

	for (;;) {
		while (*path == '/')
			path++;
		n = strcspn(path, "/");
		if (!n || n >= sizeof(comp)) {
			next = -(n ? ENAMETOOLONG : ENOENT);
			break;
		}
		memcpy(comp, path, n);
		comp[n] = '\0';
		path += n;
		while (*path == '/')
			path++;
		if (!strcmp(comp, "..")) {
			next = -ELOOP;
			break;
		}
		if (!*path) {
			next = openat(cur, comp, OPEN_FLAGS | O_NOFOLLOW);
			next = next < 0 ? -errno : next;
			break;
		}
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			/* A symbolic link opened as a directory with O_NOFOLLOW: ENOTDIR. */
			next = errno == ENOTDIR ? -ELOOP : -errno;
			break;
		}
		if (cur != dfd)
			close(cur);
		cur = next;
	}
	if (cur != dfd)
		close(cur);
	return next;
}

static int openat2_fd(int dfd, const char *path, const struct open_how *how)
{
#ifdef SYS_openat2
	return (int)syscall(SYS_openat2, dfd, path, how, sizeof(*how));
#else
	(void)dfd, (void)path, (void)how;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Whether openat2 runs here, asked once an open failed as if it did not:
 * ENOSYS before 5.6, EPERM from a seccomp filter that predates it (Docker's
 * default profile before 20.10). Opening "/" cannot fail otherwise.
 */
static bool openat2_missing(int err)
{
	static int missing = -1; /* unknown; two threads asking get the same answer */
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	int fd, m = __atomic_load_n(&missing, __ATOMIC_RELAXED);

	if (err != ENOSYS && err != EPERM)
		return false;
	if (m < 0) {
		fd = openat2_fd(AT_FDCWD, "/", &how);
		m = fd < 0 && (errno == ENOSYS || errno == EPERM);
		if (fd >= 0)
			close(fd);
		__atomic_store_n(&missing, m, __ATOMIC_RELAXED);
	}
	return m;
}

static int open_beneath(int dfd, const char *path, unsigned flags)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (flags & PROC_FILE_NO_LINKS)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	while (*path == '/')
		path++;
	fd = openat2_fd(dfd, path, &how);
	if (fd < 0 && openat2_missing(errno))
		return proc_file__walk(dfd, path);
	return fd < 0 ? -errno : fd;
}

bool proc_file__readable_by(const struct stat *st, uint32_t uid)
{
	if (st->st_uid == uid)
		return true;
	/* Root's file that every user may read, and no user but root may have written. */
	return st->st_uid == 0 && (st->st_mode & S_IROTH) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * The ownership check: needs the process's user, which it cannot choose
 * (*uid when known, as for a process that has exited; else read now).
 */
static int check_owner(uint32_t pid, const uint32_t *known, const struct stat *st,
		       enum proc_file_refusal *why)
{
	uint32_t uid;
	int err;

	if (known)
		uid = *known;
	else if (!pid)
		return 0;
	else if ((err = procfs__uid(pid, &uid)))
		return err;
	if (proc_file__readable_by(st, uid))
		return 0;
	*why = PROC_FILE_NOT_OWNER;
	return -EACCES;
}

struct in_root {
	char root[64];
	const char *path;
	unsigned flags;
	bool owned; /* checked in the child too, before a byte is copied */
	uint32_t uid;
};

/* Async-signal-safe: also run by the child that reads a FUSE file (lib/fuse_file.h). */
static int open_in_root(const void *arg)
{
	const struct in_root *a = arg;
	struct stat st;
	int dfd, fd;

	dfd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = open_beneath(dfd, a->path, a->flags);
	close(dfd);
	/* -EPERM: by the owner rule (told apart from the open's own -EACCES). */
	if (fd >= 0 && a->owned && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    !proc_file__readable_by(&st, a->uid)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The file opened (or its FUSE copy, with st its own): checked by the rule. */
static int check_opened(uint32_t pid, const uint32_t *uid, int fd, const struct stat *st,
			unsigned flags, enum proc_file_refusal *why)
{
	int err = 0;

	if (!S_ISREG(st->st_mode)) {
		*why = PROC_FILE_NOT_REGULAR;
		err = -EINVAL;
	} else if (flags & PROC_FILE_OWNED)
		err = check_owner(pid, uid, st, why);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int open_here(struct in_root *a, struct stat *st)
{
	int fd = open_in_root(a), err;

	if (fd >= 0 && fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A copy made by a child (lib/fuse_file.h), which refuses by the owner rule itself. */
static int open_by_child(uint32_t pid, const uint32_t *uid, struct in_root *a, uint64_t mount,
			 struct stat *st, enum proc_file_refusal *why)
{
	int fd;

	if ((a->flags & PROC_FILE_OWNED) && uid) {
		a->uid = *uid;
		a->owned = true;
	} else if ((a->flags & PROC_FILE_OWNED) && pid) {
		fd = procfs__uid(pid, &a->uid);
		if (fd)
			return fd;
		a->owned = true;
	}
	fd = fuse_file__copy(mount, open_in_root, a, st);
	if (fd == -EPERM) {
		*why = PROC_FILE_NOT_OWNER;
		fd = -EACCES;
	} else if (fd == -EINVAL)
		*why = PROC_FILE_NOT_REGULAR;
	else if (fd == -EFBIG)
		*why = PROC_FILE_TOO_BIG;
	return fd;
}

/* Opens path inside pid's root (0: ours), the owner checked against *uid, or pid's own user. */
static int open_rooted(uint32_t pid, const uint32_t *uid, const char *path, unsigned flags,
		       enum proc_file_refusal *why)
{
	struct in_root a = {.path = path, .flags = flags};
	enum proc_file_refusal dummy;
	struct stat st;
	uint64_t mount;
	int fd;

	why = why ? why : &dummy;
	*why = PROC_FILE_OK;
	snprintf(a.root, sizeof(a.root), pid ? "/proc/%u/root" : "/", pid);
	if (fuse_file__path_needs_child(pid, path, &mount))
		fd = open_by_child(pid, uid, &a, mount, &st, why);
	else
		fd = open_here(&a, &st);
	/* ELOOP: a link where none may be; EXDEV: a way out of the root. */
	if (fd == -ELOOP || fd == -EXDEV)
		*why = PROC_FILE_LINK;
	if (fd < 0)
		return fd;
	return check_opened(pid, uid, fd, &st, flags, why);
}

int proc_file__open(uint32_t pid, const char *path, unsigned flags, enum proc_file_refusal *why)
{
	return open_rooted(pid, NULL, path, flags, why);
}

int proc_file__open_as(uint32_t uid, const char *path, unsigned flags, enum proc_file_refusal *why)
{
	return open_rooted(0, &uid, path, flags, why);
}

const char *proc_file__refusal_name(enum proc_file_refusal why)
{
	static const char *const names[PROC_FILE_REFUSALS] = {
		[PROC_FILE_OK] = "none",
		[PROC_FILE_LINK] = "a symbolic link",
		[PROC_FILE_NOT_REGULAR] = "not a regular file",
		[PROC_FILE_NOT_OWNER] = "not owned by the process's user",
		[PROC_FILE_TOO_BIG] = "over the size cap",
	};

	return (unsigned)why < PROC_FILE_REFUSALS ? names[why] : "?";
}
