// SPDX-License-Identifier: MIT
/*
 * /proc/PID/mountinfo, one mount a line (proc(5)):
 *   ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS
 * MOUNTPOINT has space, tab, newline and backslash written \ooo.
 */
#include <stdbool.h>
#include <string.h>

#include "lib/mountinfo.h"

struct mount_line {
	const char *point;
	size_t point_len;
	const char *type;
	size_t type_len;
	uint32_t major, minor;
};

/*
 * FUSE's daemons run in user space and may hold any request as long as
 * they like. The other filesystems a user can mount in its own user
 * namespace (tmpfs, ramfs, proc, sysfs, devpts, mqueue, cgroup2, binderfs,
 * bind mounts of what it can already reach) are served by the kernel
 * itself, except overlayfs (Linux 5.11+ in a user namespace): it opens its
 * layers with the credentials of whoever mounted it, so a FUSE layer of a
 * user's own namespace, which never gets root's requests directly, gets
 * them through an overlay of that user's.
 */
enum mount_class mountinfo__class_of_type(const char *fstype, size_t len)
{
	if ((len == 4 && !memcmp(fstype, "fuse", 4)) ||
	    (len == 7 && !memcmp(fstype, "fuseblk", 7)) || (len > 5 && !memcmp(fstype, "fuse.", 5)))
		return MOUNT_FUSE;
	if (len == 7 && !memcmp(fstype, "overlay", 7))
		return MOUNT_STACKED;
	return MOUNT_OTHER;
}

static bool field(const char **p, const char *end, const char **f, size_t *n)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	*f = s;
	while (s < end && *s != ' ')
		s++;
	*n = (size_t)(s - *f);
	*p = s;
	return *n > 0;
}

static bool number(const char *s, size_t n, uint32_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || x > UINT32_MAX / 10)
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (!n || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* One line (without its newline) into l; false if it is not a mount line. */
static bool parse_line(const char *s, const char *end, struct mount_line *l)
{
	const char *f, *colon;
	size_t n;
	int i;

	for (i = 0; i < 2; i++)
		if (!field(&s, end, &f, &n))
			return false;
	if (!field(&s, end, &f, &n) || !(colon = memchr(f, ':', n)) ||
	    !number(f, (size_t)(colon - f), &l->major) ||
	    !number(colon + 1, n - (size_t)(colon + 1 - f), &l->minor))
		return false;
	if (!field(&s, end, &f, &n) || !field(&s, end, &l->point, &l->point_len) ||
	    !field(&s, end, &f, &n))
		return false;
	do {
		if (!field(&s, end, &f, &n))
			return false;
	} while (n != 1 || *f != '-');
	return field(&s, end, &l->type, &l->type_len);
}

/*
 * The unescaped length of mount point p if it contains path (it is "/" or
 * path continues after it with '/' or ends), else -1.
 */
static long containing(const char *p, size_t n, const char *path)
{
	size_t i = 0, j = 0;
	char c;

	if (n == 1 && *p == '/')
		return 0;
	while (i < n) {
		c = p[i];
		if (c == '\\' && i + 3 < n && p[i + 1] >= '0' && p[i + 1] <= '3' &&
		    p[i + 2] >= '0' && p[i + 2] <= '7' && p[i + 3] >= '0' && p[i + 3] <= '7') {
			c = (char)((p[i + 1] - '0') << 6 | (p[i + 2] - '0') << 3 |
				   (p[i + 3] - '0'));
			i += 4;
		} else
			i++;
		if (!path[j] || path[j] != c)
			return -1;
		j++;
	}
	return path[j] == '/' || path[j] == '\0' ? (long)j : -1;
}

/* Calls each mount line of text in turn; stops when fn returns true. */
static void each_line(const char *text, size_t len,
		      bool (*fn)(const struct mount_line *l, void *ctx), void *ctx)
{
	const char *end = text + len, *nl;
	struct mount_line l;

	while (text < end) {
		nl = memchr(text, '\n', (size_t)(end - text));
		if (!nl)
			nl = end;
		if (parse_line(text, nl, &l) && fn(&l, ctx))
			return;
		text = nl + 1;
	}
}

struct by_dev {
	uint32_t major, minor;
	enum mount_class class;
};

static bool match_dev(const struct mount_line *l, void *ctx)
{
	struct by_dev *d = ctx;

	if (l->major == d->major && l->minor == d->minor)
		d->class = mountinfo__class_of_type(l->type, l->type_len);
	return false;
}

enum mount_class mountinfo__class_of_dev(const char *text, size_t len, uint32_t major,
					 uint32_t minor)
{
	struct by_dev d = {.major = major, .minor = minor, .class = MOUNT_UNKNOWN};

	each_line(text, len, match_dev, &d);
	return d.class;
}

/* How much a class asks of a reader: the most any mount on a path asks is what the path asks. */
static int rank(enum mount_class c)
{
	return c == MOUNT_FUSE ? 2 : c == MOUNT_STACKED ? 1 : 0;
}

struct by_path {
	const char *path;
	long depth;
	enum mount_class class;
	uint32_t major, minor;
};

static bool match_path(const struct mount_line *l, void *ctx)
{
	struct by_path *b = ctx;
	long depth = containing(l->point, l->point_len, b->path);
	enum mount_class c;

	if (depth < 0)
		return false;
	c = mountinfo__class_of_type(l->type, l->type_len);
	/* The worst class of any mount on the way, its deepest (or latest) mount for the device. */
	if (b->depth < 0 || rank(c) > rank(b->class) ||
	    (rank(c) == rank(b->class) && depth >= b->depth)) {
		b->depth = depth;
		b->class = c;
		b->major = l->major;
		b->minor = l->minor;
	}
	return false;
}

enum mount_class mountinfo__class_of_path(const char *text, size_t len, const char *path,
					  uint32_t *dev_major, uint32_t *dev_minor)
{
	struct by_path b = {.path = path, .depth = -1, .class = MOUNT_UNKNOWN};

	if (*path != '/')
		return MOUNT_UNKNOWN;
	each_line(text, len, match_path, &b);
	if (b.depth < 0)
		return MOUNT_UNKNOWN;
	if (dev_major)
		*dev_major = b.major;
	if (dev_minor)
		*dev_minor = b.minor;
	return b.class;
}
