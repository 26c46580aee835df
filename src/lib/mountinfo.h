/* SPDX-License-Identifier: MIT */
/*
 * Which mount of a process a file is on, from /proc/PID/mountinfo: procfs
 * answers it from the kernel's own tables, so no filesystem, and no user's
 * FUSE daemon, is asked. Parsing works on a buffer so it can be tested and
 * fuzzed on any text.
 */
#ifndef CPROF_MOUNTINFO_H
#define CPROF_MOUNTINFO_H

#include <stddef.h>
#include <stdint.h>

enum mount_class {
	MOUNT_OTHER,   /* a filesystem the kernel serves itself */
	MOUNT_FUSE,    /* "fuse", "fuseblk", "fuse.NAME": served by a user-space daemon */
	MOUNT_STACKED, /* "overlay": its layers, maybe FUSE, opened as whoever mounted it */
	MOUNT_UNKNOWN, /* not in the table: unmounted since, or the text is odd */
};

/* The class of the filesystem type named fstype (len bytes). */
enum mount_class mountinfo__class_of_type(const char *fstype, size_t len);
/*
 * The class of the mount whose device is major:minor (the last such line:
 * a later mount of the same device says the same type), in mountinfo text.
 */
enum mount_class mountinfo__class_of_dev(const char *text, size_t len, uint32_t major,
					 uint32_t minor);
/*
 * The class of the mounts a walk to path (absolute, as the process sees
 * it) may pass: the worst of every mount whose mount point contains it,
 * since a lookup inside a FUSE directory asks its daemon even on the way
 * to a mount below it (also of a mount hidden by a later one: a walk may
 * have begun before). *dev_major, *dev_minor (may be NULL) get the device
 * of that mount, the deepest (the later of equal ones) among the worst.
 */
enum mount_class mountinfo__class_of_path(const char *text, size_t len, const char *path,
					  uint32_t *dev_major, uint32_t *dev_minor);

#endif
