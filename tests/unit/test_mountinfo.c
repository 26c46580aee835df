// SPDX-License-Identifier: MIT
/*
 * Which mount a file of a process is on (lib/mountinfo.h), from mountinfo
 * text as the kernel writes it: FUSE by its type names, the deepest mount
 * point containing a path (the later of equal ones), escaped mount points,
 * lines that are not mounts, and overlays, whose layers may be FUSE.
 */
#include <string.h>

#include "lib/mountinfo.h"
#include "test.h"

static const char table[] =
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
	"24 22 0:23 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw\n"
	"40 24 0:40 / /tmp/a\\040b rw,nosuid,nodev - fuse.sshfs host:/x rw,user_id=1000\n"
	"41 22 0:41 / /home/u/mnt rw - fuse fuse rw,user_id=1000,allow_other\n"
	"42 22 8:17 / /media/usb rw - fuseblk /dev/sdb1 rw\n"
	"43 24 0:43 / /tmp rw - fuse fuse rw\n"
	"not a mount line at all\n"
	"44 22 0:44 / /fusey rw - fusectl fusectl rw\n"
	"45 22 0:45 / /merged rw - overlay overlay rw,lowerdir=/home/u/mnt,upperdir=/u\n"
	"46 41 0:46 / /home/u/mnt/sub rw - tmpfs tmpfs rw\n";

static enum mount_class of_path(const char *path, uint32_t *minor)
{
	uint32_t major = 99;

	*minor = 99;
	return mountinfo__class_of_path(table, strlen(table), path, &major, minor);
}

TEST(mountinfo_types_named_fuse)
{
	CHECK_INT(mountinfo__class_of_type("fuse", 4), ==, MOUNT_FUSE);
	CHECK_INT(mountinfo__class_of_type("fuseblk", 7), ==, MOUNT_FUSE);
	CHECK_INT(mountinfo__class_of_type("fuse.sshfs", 10), ==, MOUNT_FUSE);
	CHECK_INT(mountinfo__class_of_type("fuse.", 5), ==, MOUNT_OTHER);
	CHECK_INT(mountinfo__class_of_type("fusectl", 7), ==, MOUNT_OTHER);
	CHECK_INT(mountinfo__class_of_type("tmpfs", 5), ==, MOUNT_OTHER);
	CHECK_INT(mountinfo__class_of_type("overlay", 7), ==, MOUNT_STACKED);
	CHECK_INT(mountinfo__class_of_type("overlayfs", 9), ==, MOUNT_OTHER);
}

TEST(mountinfo_device_classes)
{
	size_t n = strlen(table);

	CHECK_INT(mountinfo__class_of_dev(table, n, 254, 0), ==, MOUNT_OTHER);
	CHECK_INT(mountinfo__class_of_dev(table, n, 0, 41), ==, MOUNT_FUSE);
	CHECK_INT(mountinfo__class_of_dev(table, n, 8, 17), ==, MOUNT_FUSE);
	CHECK_INT(mountinfo__class_of_dev(table, n, 0, 44), ==, MOUNT_OTHER);
	/* Unmounted since (a lazily detached FUSE mount still mapped): unknown. */
	CHECK_INT(mountinfo__class_of_dev(table, n, 0, 77), ==, MOUNT_UNKNOWN);
	CHECK_INT(mountinfo__class_of_dev("", 0, 254, 0), ==, MOUNT_UNKNOWN);
}

TEST(mountinfo_deepest_mount_point_holds_a_path)
{
	uint32_t minor;

	CHECK_INT(of_path("/usr/bin/ls", &minor), ==, MOUNT_OTHER);
	CHECK_INT(minor, ==, 0);
	CHECK_INT(of_path("/home/u/mnt/prog", &minor), ==, MOUNT_FUSE);
	CHECK_INT(minor, ==, 41);
	CHECK_INT(of_path("/home/u/mnt", &minor), ==, MOUNT_FUSE);
	/* A name that only starts like a mount point is not under it. */
	CHECK_INT(of_path("/home/u/mntx/prog", &minor), ==, MOUNT_OTHER);
	CHECK_INT(of_path("/proc/1/maps", &minor), ==, MOUNT_OTHER);
	CHECK_INT(minor, ==, 21);
	CHECK_INT(of_path("/media/usb/a.debug", &minor), ==, MOUNT_FUSE);
	CHECK_INT(of_path("/merged/tmp/perf-1.map", &minor), ==, MOUNT_STACKED);
	CHECK_INT(minor, ==, 45);
}

TEST(mountinfo_worst_mount_on_the_way)
{
	uint32_t minor;

	/* FUSE mounted over the tmpfs /tmp: the perf map is on FUSE. */
	CHECK_INT(of_path("/tmp/perf-42.map", &minor), ==, MOUNT_FUSE);
	CHECK_INT(minor, ==, 43);
	/* A tmpfs below a FUSE directory is reached through it. */
	CHECK_INT(of_path("/home/u/mnt/sub/perf-1.map", &minor), ==, MOUNT_FUSE);
	CHECK_INT(minor, ==, 41);
}

TEST(mountinfo_escaped_mount_points)
{
	uint32_t minor;

	CHECK_INT(of_path("/tmp/a b/lib.so", &minor), ==, MOUNT_FUSE);
	CHECK_INT(minor, ==, 40);
	/* "\\040" is not a space in the path itself. */
	CHECK_INT(of_path("/tmp/a\\040b/lib.so", &minor), ==, MOUNT_FUSE);
	CHECK_INT(minor, ==, 43);
}

TEST(mountinfo_odd_text)
{
	uint32_t minor;
	static const char truncated[] = "22 1 254:0 / / rw shared:1 - ext4";
	static const char no_dash[] = "22 1 254:0 / / rw shared:1 ext4 /dev/vda rw\n";
	static const char bad_dev[] = "22 1 254x0 / / rw - ext4 /dev/vda rw\n";

	CHECK_INT(mountinfo__class_of_path(table, strlen(table), "relative", NULL, NULL), ==,
		  MOUNT_UNKNOWN);
	CHECK_INT(mountinfo__class_of_path(truncated, strlen(truncated), "/x", NULL, &minor), ==,
		  MOUNT_OTHER);
	CHECK_INT(mountinfo__class_of_path(no_dash, strlen(no_dash), "/x", NULL, NULL), ==,
		  MOUNT_UNKNOWN);
	CHECK_INT(mountinfo__class_of_path(bad_dev, strlen(bad_dev), "/x", NULL, NULL), ==,
		  MOUNT_UNKNOWN);
	/* Text without a final newline, cut inside a field. */
	CHECK_INT(mountinfo__class_of_dev(table, 30, 254, 0), ==, MOUNT_UNKNOWN);
}
