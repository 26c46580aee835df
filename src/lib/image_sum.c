// SPDX-License-Identifier: MIT
#include <string.h>

#include "lib/hash.h"
#include "lib/image_sum.h"

uint64_t image_checksum(const void *buf, size_t n, size_t at)
{
	const uint8_t *p = buf;
	uint64_t h = n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		if (i == at)
			continue;
		memcpy(&w, p + i, 8);
		h = hash_u64(h ^ w);
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	return hash_u64(h ^ w);
}

void image_seal(void *buf, size_t n, size_t header, size_t at)
{
	uint64_t sum;

	if (n < header || n < at + sizeof(sum))
		return;
	sum = image_checksum(buf, n, at);
	memcpy((char *)buf + at, &sum, sizeof(sum));
}
