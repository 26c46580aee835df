// SPDX-License-Identifier: MIT
/*
 * Symbol names come from any binary on the host: whatever the bytes, the
 * demangler returns a terminated name that fits, or nothing.
 */
#include "fuzz_cstring.h"
#include "resolve/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = fuzz_cstring(data, size), small[32], *big = malloc(4096);
	size_t n;

	if (!name || !big)
		goto cleanup;
	n = demangle__name(name, big, 4096);
	if (n && (n >= 4096 || strlen(big) != n))
		abort();
	n = demangle__name(name, small, sizeof(small));
	if (n && (n >= sizeof(small) || strlen(small) != n))
		abort();
cleanup:
	free(name);
	free(big);
	return 0;
}
