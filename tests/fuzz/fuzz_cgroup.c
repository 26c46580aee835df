// SPDX-License-Identifier: MIT
/*
 * /proc/PID/cgroup names paths a container's own software chooses, and the
 * parsed identity becomes series labels sent to a server: the parser must
 * take any bytes and always leave NUL-terminated strings of the fields'
 * sizes, a container ID of exactly 64 lower-case hex digits or none, and a
 * unit that is a part of the path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/labels.h"

static void check_id(const char *id)
{
	size_t n = strnlen(id, 65);

	if (n != 0 && n != 64)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgroup_identity cg;
	size_t plen, ulen;

	memset(&cg, 0xa5, sizeof(cg));
	if (labels__parse_cgroup((const char *)data, size, &cg))
		return 0;
	plen = strnlen(cg.path, sizeof(cg.path));
	ulen = strnlen(cg.unit, sizeof(cg.unit));
	if (plen == sizeof(cg.path) || ulen == sizeof(cg.unit) ||
	    strnlen(cg.container_id, sizeof(cg.container_id)) == sizeof(cg.container_id))
		abort(); /* not terminated */
	check_id(cg.container_id);
	if (ulen && (ulen > plen || !strstr(cg.path, cg.unit)))
		abort();
	return 0;
}
