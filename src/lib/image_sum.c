// SPDX-License-Identifier: MIT
#include <string.h>

#include "lib/hash.h"
#include "lib/image_sum.h"

#define LANES 4

/* The word at i, or 0 for the checksum's own field. */
static uint64_t word(const uint8_t *p, size_t i, size_t at)
{
	uint64_t w;

	if (i == at)
		return 0;
	memcpy(&w, p + i, 8);
	return w;
}

/*
 * Four lanes that do not wait on each other: one chain of hash_u64 is
 * bound by its multiplies' latency, and these images are read back at
 * every start (libc's table and symbols, some 300 KB).
 */
uint64_t image_checksum(const void *buf, size_t n, size_t at)
{
	const uint8_t *p = buf;
	uint64_t h[LANES] = {n, n + 1, n + 2, n + 3}, w;
	size_t i, j;

	for (i = 0; i + 8 * LANES <= n; i += 8 * LANES)
		for (j = 0; j < LANES; j++)
			h[j] = hash_u64(h[j] ^ word(p, i + 8 * j, at));
	for (; i + 8 <= n; i += 8)
		h[0] = hash_u64(h[0] ^ word(p, i, at));
	w = 0;
	memcpy(&w, p + i, n - i);
	h[0] = hash_u64(h[0] ^ w);
	for (j = 1; j < LANES; j++)
		h[0] = hash_u64(h[0] ^ h[j]);
	return h[0];
}

void image_seal(void *buf, size_t n, size_t header, size_t at)
{
	uint64_t sum;

	if (n < header || n < at + sizeof(sum))
		return;
	sum = image_checksum(buf, n, at);
	memcpy((char *)buf + at, &sum, sizeof(sum));
}
