// SPDX-License-Identifier: MIT
/*
 * Symbol names come from any binary on the host: whatever the bytes, the
 * demangler returns a terminated name that fits, or nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name, small[32], *big;
	size_t n;

	/* Names are C strings: the input up to its first NUL. */
	name = malloc(size + 1);
	big = malloc(4096);
	if (!name || !big) {
		free(name);
		free(big);
		return 0;
	}
	memcpy(name, data, size);
	name[size] = '\0';
	n = demangle__name(name, big, 4096);
	if (n && (n >= 4096 || strlen(big) != n))
		abort();
	n = demangle__name(name, small, sizeof(small));
	if (n && (n >= sizeof(small) || strlen(small) != n))
		abort();
	free(name);
	free(big);
	return 0;
}
