// SPDX-License-Identifier: MIT
/*
 * /tmp/perf-PID.map text is written by the profiled process: any bytes parse
 * or fail cleanly, and a lookup returns a name only inside a parsed range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_map *m = NULL;
	uint64_t probe;
	size_t i;

	if (perf_map__parse((const char *)data, size, &m))
		return 0;
	if (perf_map__count(m) + perf_map__bad_lines(m) > size)
		abort();
	/* Probe addresses taken from the input itself, and the extremes. */
	for (i = 0; i + 8 <= size && i < 128; i += 8) {
		const char *name;

		memcpy(&probe, data + i, 8);
		name = perf_map__lookup(m, probe);
		if (name && strlen(name) > size)
			abort();
	}
	perf_map__lookup(m, 0);
	perf_map__lookup(m, UINT64_MAX);
	perf_map__free(m);
	return 0;
}
