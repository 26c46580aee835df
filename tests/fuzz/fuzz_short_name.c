// SPDX-License-Identifier: MIT
/*
 * Names come from any binary on the host, demangled or not: whatever the
 * bytes, the summary's short name is a terminated string that fits, and no
 * longer than the name.
 */
#include "fuzz_cstring.h"
#include "lib/short_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = fuzz_cstring(data, size), *big = malloc(size + 1), small[16];

	if (!name || !big)
		goto cleanup;
	if (strlen(short_name__trim(name, big, size + 1)) > strlen(name))
		abort();
	if (strlen(short_name__trim(name, small, sizeof(small))) >= sizeof(small))
		abort();
cleanup:
	free(name);
	free(big);
	return 0;
}
