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

#include "lib/file.h"
#include "lib/procfs.h"
#include "lib/textscan.h"

static int gone_errno(int err)
{
	return err == -ENOENT ? -ESRCH : err;
}

int procfs__read_small(const char *path, char *buf, size_t size)
{
	return gone_errno(file__read_small(path, buf, size));
}

int procfs__read_all(const char *path, char **out, size_t *len)
{
	return gone_errno(file__read_all(path, out, len));
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

/*
 * The line of /proc/PID/status that starts with field ("Tgid:"): *value
 * just past the field name, *end at the line's end. -ENOENT if absent.
 */
static int status_field(uint32_t pid, const char *field, char *buf, size_t size, const char **value,
			const char **end)
{
	char path[64], key[32];
	const char *p;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	n = procfs__read_small(path, buf, size);
	if (n < 0)
		return n;
	snprintf(key, sizeof(key), "\n%s", field);
	p = strstr(buf, key);
	if (!p)
		return -ENOENT;
	*value = p + strlen(key);
	*end = strchr(*value, '\n');
	if (!*end)
		*end = buf + n;
	return 0;
}

int procfs__ns_pid(uint32_t pid, uint32_t *ns_pid)
{
	const char *p = NULL, *end = NULL;
	uint64_t v, last = 0;
	char buf[4096];
	int err;

	err = status_field(pid, "NSpid:", buf, sizeof(buf), &p, &end);
	/* Linux before 4.1 has no NSpid line: then nothing says the process is namespaced. */
	if (err == -ENOENT)
		err = 0;
	if (err)
		return err;
	*ns_pid = pid;
	/* "NSpid:\t<host pid>\t...\t<innermost pid>": the last one is what the process sees. */
	while (p && p < end) {
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (!textscan__dec(&p, end, &v) || v > UINT32_MAX)
			return -EINVAL;
		last = v;
	}
	if (last)
		*ns_pid = (uint32_t)last;
	return 0;
}

/* Field n (3 or more) of /proc/PID/stat as a number. */
static int stat_field(uint32_t pid, int n, unsigned long long *v)
{
	char path[64], buf[1024], *p;
	int len, field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	len = procfs__read_small(path, buf, sizeof(buf));
	if (len < 0)
		return len;
	/* comm (field 2) may contain spaces and parentheses: parse after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < n && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", v) != 1)
		return -EINVAL;
	return 0;
}

int procfs__start_time(uint32_t pid, uint64_t *ticks)
{
	unsigned long long v;
	int err = stat_field(pid, 22, &v);

	if (!err)
		*ticks = v;
	return err;
}

/* PF_KTHREAD in the flags (field 9): the kernel's own test, not a guess from empty maps. */
bool procfs__is_kernel_thread(uint32_t pid)
{
	unsigned long long flags;

	return stat_field(pid, 9, &flags) == 0 && (flags & 0x00200000ull);
}

/* The first number of a /proc/PID/status line ("Tgid:", "Uid:"). */
static int status_u32(uint32_t pid, const char *field, uint32_t *out)
{
	const char *p, *end;
	char buf[4096];
	uint64_t v;
	int err;

	err = status_field(pid, field, buf, sizeof(buf), &p, &end);
	if (err)
		return err == -ENOENT ? -EINVAL : err;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (!textscan__dec(&p, end, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* The real uid, as our user namespace (the host's) sees it: as fstat shows owners. */
int procfs__uid(uint32_t pid, uint32_t *uid)
{
	return status_u32(pid, "Uid:", uid);
}

int procfs__tgid(uint32_t tid, uint32_t *tgid)
{
	return status_u32(tid, "Tgid:", tgid);
}

int procfs__perf_max_sample_rate(uint64_t *rate)
{
	char buf[32], *end;
	unsigned long long v;
	int n;

	n = file__read_small("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf));
	if (n < 0)
		return n;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*rate = v;
	return 0;
}
