// SPDX-License-Identifier: MIT
/* /proc/kallsyms-format text: any bytes parse or fail cleanly; lookups stay in bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k = NULL;
	uint64_t probe;
	size_t i;

	if (ksyms__parse((const char *)data, size, &k))
		return 0;
	/* Probe addresses taken from the input itself, and the extremes. */
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		const struct ksym *s;

		memcpy(&probe, data + i, 8);
		s = ksyms__lookup(k, probe);
		if (s && (s->addr > probe || !s->name))
			abort();
	}
	ksyms__lookup(k, 0);
	ksyms__lookup(k, UINT64_MAX);
	ksyms__free(k);
	return 0;
}
