// SPDX-License-Identifier: MIT
/*
 * Apart from the rest: <linux/stat.h> (struct statx, which musl lacks) and
 * musl's <sys/stat.h> define the same mode macros differently.
 */
#include <errno.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/stat_cached.h"

int stat_cached(const char *path, uint64_t *dev_major, uint64_t *dev_minor, uint64_t *ino)
{
	struct statx stx;

	if (syscall(SYS_statx, AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &stx))
		return -errno;
	*dev_major = stx.stx_dev_major;
	*dev_minor = stx.stx_dev_minor;
	*ino = stx.stx_ino;
	return 0;
}
