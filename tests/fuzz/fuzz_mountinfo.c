// SPDX-License-Identifier: MIT
/*
 * /proc/PID/mountinfo names mount points a user chose (in its own mount
 * namespace): the parser must take any bytes, and a path's mount, when
 * found, must have its device in the same table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {"/", "/tmp/perf-1.map", "/a b/c", "/usr/lib/x.so"};
	const char *text = (const char *)data;
	uint32_t major, minor;
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		enum mount_class c = mountinfo__class_of_path(text, size, paths[i], &major, &minor);

		if (c != MOUNT_OTHER && c != MOUNT_FUSE && c != MOUNT_STACKED && c != MOUNT_UNKNOWN)
			abort();
		if (c != MOUNT_UNKNOWN &&
		    mountinfo__class_of_dev(text, size, major, minor) == MOUNT_UNKNOWN)
			abort(); /* the device of a mount found is in the table */
	}
	mountinfo__class_of_dev(text, size, 0, 0);
	return 0;
}
