// SPDX-License-Identifier: MIT
/*
 * memcpy as the binary links it (src/lib/memcpy.c in the static x86_64
 * build, the libc's elsewhere): every length up to past the rep movsb
 * threshold, every alignment of both ends, and memmove, which musl builds
 * on it for copies that may run forwards.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"

#define MAX_LEN 1100
#define AREA	(MAX_LEN + 64)

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 131 + (i >> 8));
}

/* Copies len bytes from offset so to offset d0 and checks them and the bytes around. */
static int copy_ok(unsigned char *src, unsigned char *dst, size_t so, size_t d0, size_t len)
{
	/* Through a volatile pointer: the compiler must call memcpy, not inline a copy. */
	void *(*volatile copy)(void *restrict, const void *restrict, size_t) = memcpy;
	size_t i;

	fill(src, AREA, (unsigned int)(len + so));
	memset(dst, 0xa5, AREA);
	if (copy(dst + d0, src + so, len) != dst + d0)
		return 0;
	for (i = 0; i < AREA; i++) {
		unsigned char want = i >= d0 && i < d0 + len ? src[so + i - d0] : 0xa5;

		if (dst[i] != want)
			return 0;
	}
	return 1;
}

TEST(memcpy_every_length_and_alignment)
{
	static unsigned char src[AREA], dst[AREA];
	size_t len, so, d0, bad = 0;

	for (len = 0; len <= MAX_LEN; len += len < 300 ? 1 : 7)
		for (so = 0; so < 16; so += len < 64 ? 1 : 5)
			for (d0 = 0; d0 < 16; d0 += len < 64 ? 1 : 3)
				bad += !copy_ok(src, dst, so, d0, len);
	CHECK_INT(bad, ==, 0);
}

/* memmove both ways over the same buffer, at every distance of the two ends. */
TEST(memmove_overlapping_both_ways)
{
	static unsigned char buf[AREA], want[AREA];
	void *(*volatile move)(void *, const void *, size_t) = memmove;
	size_t len, dist, bad = 0;
	int down;

	for (len = 1; len <= 700; len += len < 100 ? 1 : 13)
		for (dist = 1; dist <= 40; dist += dist < 20 ? 1 : 7)
			for (down = 0; down < 2; down++) {
				size_t from = down ? 40 : 0, to = down ? 40 - dist : dist;

				fill(buf, AREA, (unsigned int)len);
				memcpy(want, buf, AREA);
				for (size_t i = 0; i < len; i++)
					want[to + i] = buf[from + i];
				move(buf + to, buf + from, len);
				bad += memcmp(buf, want, AREA) != 0;
			}
	CHECK_INT(bad, ==, 0);
}
