// SPDX-License-Identifier: MIT
/*
 * memcpy for the static x86_64 binary (CPROF_OWN_MEMCPY, set by the
 * Makefile for that build only: the others keep their libc's, which the
 * sanitizers intercept). musl's copies with rep movsq between two loops of
 * single movsb for the unaligned head and the tail, so a copy of 20 bytes
 * costs some 100 cycles; cprof copies names, frames and records of tens of
 * bytes by the thousand (the folded encoder spent 40% of its time in it).
 * Here a short block is two overlapping loads and stores, a middling one
 * 32 bytes a step, and a large one rep movsb, which processors with fast
 * strings (ERMS) run at full speed.
 *
 * memmove is here too: musl's jumps into the middle of its memcpy, which
 * would be linked along. It copies forwards with memcpy, which makes every
 * load before the stores that could overwrite it, and backwards with the
 * same steps from the end.
 */
#if defined(CPROF_OWN_MEMCPY) && defined(__x86_64__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint32_t u32u __attribute__((may_alias, aligned(1)));
typedef uint64_t u64u __attribute__((may_alias, aligned(1)));
typedef char v16u __attribute__((vector_size(16), may_alias, aligned(1)));

/* From here on, rep movsb beats the loop. */
#define REP_MOVSB_MIN 512

/* GCC would turn the loop below back into a call of memcpy. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
void *
memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	v16u t0, t1;

	if (n <= 16) {
		if (n >= 8) {
			uint64_t a = *(const u64u *)s, b = *(const u64u *)(s + n - 8);

			*(u64u *)d = a;
			*(u64u *)(d + n - 8) = b;
		} else if (n >= 4) {
			uint32_t a = *(const u32u *)s, b = *(const u32u *)(s + n - 4);

			*(u32u *)d = a;
			*(u32u *)(d + n - 4) = b;
		} else if (n) {
			unsigned char a = s[0], b = s[n / 2], c = s[n - 1];

			d[0] = a;
			d[n / 2] = b;
			d[n - 1] = c;
		}
		return dst;
	}
	if (n <= 32) {
		v16u a = *(const v16u *)s, b = *(const v16u *)(s + n - 16);

		*(v16u *)d = a;
		*(v16u *)(d + n - 16) = b;
		return dst;
	}
	if (n >= REP_MOVSB_MIN) {
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		return dst;
	}
	t0 = *(const v16u *)(s + n - 32);
	t1 = *(const v16u *)(s + n - 16);
	/* Whole steps while more than 32 bytes are left, then the last 32 (loaded first). */
	for (; n > 32; n -= 32, d += 32, s += 32) {
		v16u a = *(const v16u *)s, b = *(const v16u *)(s + 16);

		*(v16u *)d = a;
		*(v16u *)(d + 16) = b;
	}
	*(v16u *)(d + n - 32) = t0;
	*(v16u *)(d + n - 16) = t1;
	return dst;
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
void *
memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	v16u h0, h1;

	/* The destination below the source, or no overlap: forwards is right. */
	if ((uintptr_t)d - (uintptr_t)s >= n || n <= 32)
		return memcpy(dst, src, n);
	/* The first 32 bytes last, loaded before any store could reach them. */
	h0 = *(const v16u *)s;
	h1 = *(const v16u *)(s + 16);
	for (; n > 32; n -= 32) {
		v16u a = *(const v16u *)(s + n - 32), b = *(const v16u *)(s + n - 16);

		*(v16u *)(d + n - 32) = a;
		*(v16u *)(d + n - 16) = b;
	}
	*(v16u *)d = h0;
	*(v16u *)(d + 16) = h1;
	return dst;
}
#endif
