// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps is written by the kernel, but cprof also reads copies from
 * containers and tests feed it odd text: the parser must take any bytes.
 * Every parsed mapping is checked for the invariants lookups rely on.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *m = NULL;
	size_t i, n;

	if (proc_maps__parse((const char *)data, size, &m))
		return 0;
	n = proc_maps__count(m);
	for (i = 0; i < n; i++) {
		const struct proc_map *pm = proc_maps__get(m, i);
		size_t idx = (size_t)-1;

		if (pm->start >= pm->end)
			abort();
		if (i && proc_maps__get(m, i - 1)->end > pm->start)
			abort(); /* sorted, non-overlapping */
		if (proc_maps__find_index(m, pm->start, &idx) != pm || idx != i)
			abort();
		if (proc_maps__find(m, pm->end - 1) != pm)
			abort();
	}
	proc_maps__free(m);
	return 0;
}
