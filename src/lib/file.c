// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/file.h"

#define READ_ALL_LIMIT (256u << 20) /* no file we read whole is legitimately larger */

int file__read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return err ? err : (int)len;
}

int file__read_all(const char *path, char **out, size_t *len)
{
	int fd, err;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = file__read_fd(fd, out, len);
	close(fd);
	return err;
}

/*
 * Room for a file's content: its size, and a byte more to see its end in
 * one read; /proc files, which say 0, start at 16 KiB and grow.
 */
static size_t first_capacity(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size >= READ_ALL_LIMIT)
		return 16384;
	return (size_t)st.st_size + 1;
}

int file__read_fd(int fd, char **out, size_t *len)
{
	size_t cap = first_capacity(fd), n = 0;
	char *buf = NULL, *tmp;
	ssize_t r;
	int err = 0;

	*out = NULL;
	*len = 0;
	buf = malloc(cap + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= READ_ALL_LIMIT) {
				err = -EFBIG;
				goto cleanup;
			}
			cap *= 2;
			tmp = realloc(buf, cap + 1);
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = tmp;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		n += r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	return err;
}

int file__write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file__make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, i == n ? 0700 : 0755) && errno != EEXIST)
			return -errno;
		path[i] = i == n ? '\0' : '/';
	}
	return 0;
}

int file__check_private_dir(int fd, char *why, size_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		snprintf(why, size, "not a directory");
	else if (st.st_uid != geteuid())
		snprintf(why, size, "owned by uid %u, not by uid %u", (unsigned)st.st_uid,
			 (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, size, "writable by %s (mode %04o)",
			 st.st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned)(st.st_mode & 07777));
	else
		return 0;
	return -EPERM;
}

bool file__is_ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

int file__open_ours(int dir_fd, const char *name, int flags)
{
	struct stat before, st;
	int fd;

	if (fstatat(dir_fd, name, &before, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!file__is_ours(&before))
		return -EPERM;
	fd = openat(dir_fd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO ? -EPERM : -errno;
	if (fstat(fd, &st) || !file__is_ours(&st) || st.st_dev != before.st_dev ||
	    st.st_ino != before.st_ino) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int file__create_unique(int dir_fd, const char *prefix, char *name, size_t size)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t r[6];
	char suffix[sizeof(r) + 1];
	int i, tries, fd;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			/* No entropy yet (early boot): O_EXCL still keeps it safe. */
			uint64_t v =
				clock__mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;

			memcpy(r, &v, sizeof(r));
		}
		for (i = 0; i < (int)sizeof(r); i++)
			suffix[i] = chars[r[i] % (sizeof(chars) - 1)];
		suffix[sizeof(r)] = '\0';
		if ((size_t)snprintf(name, size, "%s%s", prefix, suffix) >= size)
			return -ENAMETOOLONG;
		fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}
