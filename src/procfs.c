// SPDX-License-Identifier: MIT
/*
 * /proc reads for process identity. A process may exit between any two
 * reads, so every function reports -ESRCH for "gone" and callers treat that
 * as ordinary. Contents are untrusted (comm is chosen by the process).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

#define READ_ALL_LIMIT (256u << 20) /* no /proc file we read is legitimately larger */

static int gone_errno(int err)
{
	return err == -ENOENT ? -ESRCH : err;
}

int procfs__read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone_errno(-errno);
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = gone_errno(-errno);
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

int procfs__read_all(const char *path, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = NULL, *tmp;
	ssize_t r;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone_errno(-errno);
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
			err = gone_errno(-errno);
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
	close(fd);
	return err;
}

int procfs__comm(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	n = procfs__read_small(path, buf, size);
	if (n < 0)
		return n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

bool procfs__pid_exists(uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) == 0;
}

int procfs__start_time(uint32_t pid, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	int n, field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* comm (field 2) may contain spaces and parentheses: parse after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p + 1, ' ');
	}
	if (!p || sscanf(p, " %llu", &v) != 1)
		return -EINVAL;
	*ticks = v;
	return 0;
}

int procfs__tgid(uint32_t tid, uint32_t *tgid)
{
	char path[64], buf[4096], *p;
	unsigned int v;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%u", &v) != 1)
		return -EINVAL;
	*tgid = v;
	return 0;
}
