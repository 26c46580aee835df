// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "deliver/output.h"

#define LOG_MODULE "output"
#include "lib/file.h"
#include "lib/log.h"

#define MAX_LINKS	 8 /* the operator's own links followed to the file they name */
#define PROC_SUPER_MAGIC 0x9fa0

struct output {
	char *path;	/* as given */
	char *dir_path; /* the directory holding name, as a path: for the signal handler */
	char *name;	/* what is replaced in dir_fd (or written in place) */
	char *tmp_path; /* dir_path/tmp_name */
	char tmp_name[NAME_MAX + 1];
	char reason[200]; /* why the path was refused, when errno alone cannot say */
	int dir_fd;	  /* opened once: the path is never resolved again */
	int fd;
	bool is_stdout;
	bool truncate; /* a regular file written in place, through a descriptor cprof was given */
	bool renamed;  /* tmp_name is now name */
	int dir_links; /* links followed on the way to directories */
};

/* Root is trusted; so is cprof's own user (it may run with capabilities instead). */
static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static int open_dir(struct output *o, int at, const char *path);

/*
 * The directory a link on the path names, if the link is root's or cprof's
 * user's: another user's could send the profile into any directory (and
 * over a file there of the operator's chosen name), so it is refused.
 */
static int through_link(struct output *o, int at, const char *name)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, err;

	/* The link itself, looked at and read through one descriptor: it cannot be swapped. */
	fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) ? -errno : 0;
	if (!err && !S_ISLNK(st.st_mode))
		err = -ENOTDIR;
	if (!err && !trusted_owner(st.st_uid)) {
		snprintf(
			o->reason, sizeof(o->reason),
			"a directory on its path, '%s', is a symbolic link owned by uid %u, not by "
			"cprof's user (uid %u): remove it or write elsewhere",
			name, (unsigned)st.st_uid, (unsigned)geteuid());
		err = -EPERM;
	}
	n = err ? 0 : readlinkat(fd, "", target, sizeof(target) - 1);
	if (n < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	target[n] = '\0';
	return open_dir(o, at, target);
}

/*
 * Opens the directory path names (relative to at), one name at a time:
 * links on the way are followed only if trusted_owner's (at most MAX_LINKS
 * of them in all, as the kernel's 40 would be too many to say why).
 */
static int open_dir(struct output *o, int at, const char *path)
{
	char comp[NAME_MAX + 1];
	int cur, next;
	size_t n;

	cur = openat(*path == '/' ? AT_FDCWD : at, *path == '/' ? "/" : ".",
		     O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	for (;;) {
		while (*path == '/')
			path++;
		n = strcspn(path, "/");
		if (!n)
			return cur;
		if (n >= sizeof(comp)) {
			close(cur);
			return -ENAMETOOLONG;
		}
		memcpy(comp, path, n);
		comp[n] = '\0';
		path += n;
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			next = errno != ENOTDIR		    ? -errno
			       : ++o->dir_links > MAX_LINKS ? -ELOOP
							    : through_link(o, cur, comp);
		close(cur);
		if (next < 0)
			return next;
		cur = next;
	}
}

/*
 * Moves to the directory holding target (relative to at: the working
 * directory or the directory of the link that named target) and its name.
 */
static int enter(struct output *o, int at, const char *target)
{
	const char *slash = strrchr(target, '/');
	char *dir, *dir_path = NULL;
	int fd, err = 0;

	dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
	free(o->name);
	o->name = strdup(slash ? slash + 1 : target);
	if (!dir || !o->name)
		err = -ENOMEM;
	else if (!*o->name || !strcmp(o->name, ".") || !strcmp(o->name, ".."))
		err = -EISDIR;
	else if (dir[0] != '/' && o->dir_path && asprintf(&dir_path, "%s/%s", o->dir_path, dir) < 0)
		err = -ENOMEM;
	if (err) {
		free(dir);
		return err;
	}
	fd = open_dir(o, at, dir);
	if (fd < 0) {
		free(dir);
		free(dir_path);
		return fd;
	}
	if (dir_path)
		free(dir);
	free(o->dir_path);
	o->dir_path = dir_path ? dir_path : dir;
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	o->dir_fd = fd;
	return 0;
}

/* Others can add a name to the directory: a hard link to anything they can reach. */
static bool others_add(const struct stat *dir)
{
	return !trusted_owner(dir->st_uid) || (dir->st_mode & (S_IWGRP | S_IWOTH));
}

/* Others can take away or replace a name cprof's user made (no sticky bit). */
static bool others_replace(const struct stat *dir)
{
	return !trusted_owner(dir->st_uid) ||
	       ((dir->st_mode & (S_IWGRP | S_IWOTH)) && !(dir->st_mode & S_ISVTX));
}

static const char *kind(mode_t mode)
{
	if (S_ISLNK(mode))
		return "symbolic link";
	if (S_ISFIFO(mode))
		return "FIFO";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return S_ISSOCK(mode) ? "socket" : "special file";
}

/*
 * A link, FIFO, device or socket that someone else may have put at the name:
 * owned by another user, or a second name of cprof's own one, linked into a
 * directory others write. Following it or writing into it could replace a
 * file of root's, block cprof, or hand the profile to whoever reads it.
 */
static int refuse_planted(struct output *o, const struct stat *st, const struct stat *dir)
{
	if (!trusted_owner(st->st_uid))
		snprintf(o->reason, sizeof(o->reason),
			 "it is a %s owned by uid %u, not by cprof's user (uid %u): remove it or "
			 "write elsewhere",
			 kind(st->st_mode), (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_nlink > 1 && others_add(dir))
		snprintf(o->reason, sizeof(o->reason),
			 "it is a %s with %u names, in a directory others can write: remove it or "
			 "write elsewhere",
			 kind(st->st_mode), (unsigned)st->st_nlink);
	else
		return 0;
	return -EPERM;
}

/*
 * A file being written never stands under its final name: the profile goes to
 * a new file beside it (O_EXCL, not following anything found there), renamed
 * over the name once complete, so an interruption leaves the old file or none,
 * never half a one. Whatever stood at the name (a file, a link) is replaced,
 * never written through. 0600: a whole-system profile shows every user's
 * processes and the kernel's addresses.
 */
static int create_temporary(struct output *o)
{
	char prefix[NAME_MAX + 1];

	if ((size_t)snprintf(prefix, sizeof(prefix), ".%s.cprof-", o->name) >= sizeof(prefix) - 6)
		return -ENAMETOOLONG;
	o->fd = file__create_unique(o->dir_fd, prefix, o->tmp_name, sizeof(o->tmp_name));
	if (o->fd < 0) {
		o->tmp_name[0] = '\0';
		return o->fd;
	}
	if (asprintf(&o->tmp_path, "%s/%s", o->dir_path, o->tmp_name) < 0) {
		o->tmp_path = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * A device or pipe (/dev/null, a FIFO, the shell's >(...)) is written where it
 * is. O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of
 * holding cprof, and signals, before sampling; writes then block as usual.
 * was: what stood at the name, NULL through a descriptor's link in /proc.
 */
static int open_in_place(struct output *o, const struct stat *was)
{
	int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (was ? O_NOFOLLOW : 0);
	struct stat st;

	o->fd = openat(o->dir_fd, o->name, flags);
	if (o->fd < 0) {
		int err = -errno;

		if (err == -ENXIO && !fstatat(o->dir_fd, o->name, &st, 0) && S_ISFIFO(st.st_mode))
			snprintf(o->reason, sizeof(o->reason),
				 "it is a FIFO that no process reads, and cprof does not wait "
				 "for one: start the reader first");
		return err;
	}
	if (fstat(o->fd, &st))
		return -errno;
	if (was && (st.st_dev != was->st_dev || st.st_ino != was->st_ino)) {
		snprintf(o->reason, sizeof(o->reason), "it was replaced while being opened");
		return -EAGAIN;
	}
	/* A file behind /dev/stdout or /proc/self/fd/N is cprof's to write whole. */
	o->truncate = S_ISREG(st.st_mode);
	flags = fcntl(o->fd, F_GETFL);
	if (flags < 0 || fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK))
		return -errno;
	return 0;
}

/* The target of the operator's own link, which others cannot change: followed. */
static int follow(struct output *o)
{
	char target[PATH_MAX];
	ssize_t n;

	n = readlinkat(o->dir_fd, o->name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return enter(o, o->dir_fd, target);
}

static bool on_procfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

/*
 * The path is looked at one name at a time from its directory, never resolved
 * whole: what stands at the name decides whether it is replaced, written in
 * place, followed (only the operator's own links) or refused.
 */
static int open_file(struct output *o)
{
	struct stat st, dir;
	int links, err;

	err = enter(o, AT_FDCWD, o->path);
	for (links = 0; !err; links++) {
		if (fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW))
			return errno == ENOENT ? create_temporary(o) : -errno;
		if (S_ISREG(st.st_mode))
			return create_temporary(o);
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (fstat(o->dir_fd, &dir))
			return -errno;
		err = refuse_planted(o, &st, &dir);
		if (err)
			return err;
		if (!S_ISLNK(st.st_mode))
			return open_in_place(o, &st);
		/* Someone else could swap the link for another between looking and following. */
		if (others_replace(&dir))
			return create_temporary(o);
		/* /proc/self/fd/N (/dev/stdout, >(...)): a descriptor, not a path. */
		if (on_procfs(o->dir_fd))
			return open_in_place(o, NULL);
		if (links == MAX_LINKS)
			return -ELOOP;
		err = follow(o);
	}
	return err;
}

int output__open(const char *path, bool binary, struct output **out)
{
	struct output *o;
	int err;

	*out = NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = -1;
	o->dir_fd = -1;
	o->path = strdup(path);
	if (!o->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (strcmp(path, "-") == 0) {
		if (binary && isatty(STDOUT_FILENO)) {
			pr_err("refusing to write a binary profile to a terminal: use -o FILE, "
			       "redirect stdout, or --format folded");
			err = -EINVAL;
			goto cleanup;
		}
		o->is_stdout = true;
		o->fd = STDOUT_FILENO;
		*out = o;
		return 0;
	}
	err = open_file(o);
	if (err) {
		pr_err("cannot write output file '%s': %s", path,
		       o->reason[0] ? o->reason : strerror(-err));
		goto cleanup;
	}
	*out = o;
	return 0;
cleanup:
	output__free(o);
	return err;
}

/* The same care as for the output: a new file (O_EXCL), nothing followed, 0600. */
static int create_fallback(const char *dir, const char *name, char *created, size_t size)
{
	char prefix[NAME_MAX + 1];
	int dir_fd, fd;

	dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	snprintf(created, size, "%s", name);
	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* The name can be guessed, and taken first: then one no one can guess. */
	if (fd < 0 && errno == EEXIST) {
		snprintf(prefix, sizeof(prefix), "%.*s.", NAME_MAX - 8, name);
		fd = file__create_unique(dir_fd, prefix, created, size);
	} else if (fd < 0) {
		fd = -errno;
	}
	close(dir_fd);
	return fd;
}

static void save_fallback(const struct output *o, const void *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	const char *base = strrchr(o->path, '/');
	char name[NAME_MAX + 1], created[NAME_MAX + 1];
	int fd, err;

	base = base ? base + 1 : o->path;
	if (o->is_stdout || !*base)
		base = "cprof.out";
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(name, sizeof(name), "cprof-%d-%ld-%s", (int)getpid(), (long)time(NULL), base);
	fd = create_fallback(dir, name, created, sizeof(created));
	if (fd < 0) {
		pr_err("the profile could not be saved to %s/%s either: %s", dir, name,
		       strerror(-fd));
		return;
	}
	err = file__write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		pr_err("the profile could not be saved to %s/%s either: %s", dir, created,
		       strerror(-err));
		return;
	}
	pr_err("the profile was saved to %s/%s instead", dir, created);
}

int output__write(struct output *o, const void *data, size_t len)
{
	int err = 0;

	if (o->truncate && ftruncate(o->fd, 0))
		err = -errno;
	if (!err)
		err = file__write_all(o->fd, data, len);
	/* close() is where some filesystems report a failed write. */
	if (!err && !o->is_stdout) {
		if (close(o->fd))
			err = -errno;
		o->fd = -1;
	}
	if (!err && o->tmp_path && renameat(o->dir_fd, o->tmp_name, o->dir_fd, o->name))
		err = -errno;
	if (!err) {
		o->renamed = o->tmp_path != NULL;
		return 0;
	}
	pr_err("cannot write %s: %s", o->is_stdout ? "to stdout" : o->path, strerror(-err));
	save_fallback(o, data, len);
	return err;
}

const char *output__temporary_path(const struct output *o)
{
	/* Kept until output__free, so a signal handler may hold on to it. */
	return o->renamed ? NULL : o->tmp_path;
}

const char *output__path(const struct output *o)
{
	return o->is_stdout ? "stdout" : o->path;
}

void output__free(struct output *o)
{
	if (!o)
		return;
	if (o->fd >= 0 && !o->is_stdout)
		close(o->fd);
	if (o->tmp_name[0] && !o->renamed)
		unlinkat(o->dir_fd, o->tmp_name, 0);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	free(o->tmp_path);
	free(o->dir_path);
	free(o->name);
	free(o->path);
	free(o);
}
