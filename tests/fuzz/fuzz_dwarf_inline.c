// SPDX-License-Identifier: MIT
/*
 * .debug_info and .debug_abbrev come from the files of any user's
 * processes. An input is framed as: a byte of flags (bit 0: the sections
 * as compressed ones, an ELF64 compression header then zlib data, through
 * dwarf_ctx), a 4-byte length and that many bytes of .debug_info, a
 * 4-byte length and that many of .debug_abbrev, then the rest, which
 * serves as every other section (.debug_line, the string, address and
 * range sections), so that offsets into them land somewhere. The
 * addresses asked for are the rest's 8-byte words (sorted) and a few
 * fixed ones. Every answer is a chain of at most DWARF_MAX_INLINE_DEPTH
 * calls whose names end, and the pass ends: each DIE consumes a byte.
 *
 * Each part gets an exact-size copy, so that ASan catches a read past its
 * end. Seeds: fixtures/corpus/dwarf_inline/ (gcc's DWARF 4 and 5 of a
 * chain of three static inline functions, and a C++ template chain).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dwarf_inline.h"

#define MAX_ADDRS 64

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The addresses: fixed ones, then words of p, sorted. */
static size_t addresses(const uint8_t *p, size_t n, uint64_t *v)
{
	size_t k = 0, i;

	v[k++] = 0;
	v[k++] = 0x1000;
	v[k++] = 0x1008; /* in the seeds' functions */
	v[k++] = 0x1034;
	for (i = 0; i + 8 <= n && k < MAX_ADDRS; i += 8 * (1 + n / 4096))
		memcpy(&v[k++], p + i, 8);
	qsort(v, k, sizeof(*v), cmp_u64);
	return k;
}

/* The next part of the input: a 4-byte length and its bytes, copied; NULL at the end. */
static uint8_t *part(const uint8_t **p, size_t *left, size_t *size)
{
	uint32_t len = 0;
	uint8_t *copy;

	if (*left >= 4)
		memcpy(&len, *p, 4);
	if (*left < 4 || len > *left - 4)
		return NULL;
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, *p + 4, len);
	*p += 4 + len;
	*left -= 4 + len;
	*size = len;
	return copy;
}

static void check(const struct dwarf_inline_answer *out, size_t n)
{
	uint32_t j;
	size_t i;

	for (i = 0; i < n; i++) {
		if (out[i].n > DWARF_MAX_INLINE_DEPTH)
			abort();
		for (j = 0; j < out[i].n; j++)
			if ((out[i].frames[j].name &&
			     strlen(out[i].frames[j].name) > (64u << 20)) ||
			    (out[i].frames[j].call_file &&
			     strlen(out[i].frames[j].call_file) > (64u << 20)))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	struct dwarf_inline_answer out[MAX_ADDRS];
	struct dwarf_inline_counts counts = {0};
	const uint8_t *p = data + 1;
	struct dwarf_ctx *ctx = NULL;
	uint8_t *info, *abbrev = NULL, *rest = NULL;
	uint64_t addrs[MAX_ADDRS];
	size_t left = size ? size - 1 : 0, ninfo, nabbrev = 0, nrest, n;
	bool z;
	void *mem = NULL;
	int i;

	if (size < 1 || !(info = part(&p, &left, &ninfo)))
		return 0;
	z = data[0] & 1;
	abbrev = part(&p, &left, &nabbrev);
	rest = malloc(left ? left : 1);
	if (!abbrev || !rest)
		goto cleanup;
	memcpy(rest, p, left);
	nrest = left;
	n = addresses(rest, nrest, addrs);
	for (i = 0; i < DWARF_SECTIONS; i++)
		secs[i] = (struct dwarf_section_bytes){rest, nrest, z};
	secs[DWARF_INFO] = (struct dwarf_section_bytes){info, ninfo, z};
	secs[DWARF_ABBREV] = (struct dwarf_section_bytes){abbrev, nabbrev, z};
	if (z) {
		if (!dwarf_ctx__new(secs, true, &ctx) &&
		    !dwarf_ctx__inlines(ctx, addrs, n, out, &counts, NULL))
			check(out, n);
		dwarf_ctx__free(ctx);
	} else if (!dwarf_inline__lookup(secs, addrs, n, out, &mem, &counts, NULL)) {
		check(out, n);
	}
	free(mem);
cleanup:
	free(info);
	free(abbrev);
	free(rest);
	return 0;
}
