// SPDX-License-Identifier: MIT
/*
 * DWARF line tables come from the files of any user's processes. The
 * first byte of an input chooses how the rest is read: bit 0 set, as a
 * compressed section (an ELF64 compression header, then zlib data) through
 * dwarf_ctx, else as .debug_line itself; the same bytes serve as
 * .debug_line_str and .debug_str, so that string offsets land somewhere.
 * The addresses asked for are the input's own 8-byte words (sorted) and a
 * few fixed ones. Every answer is none, or a string that ends, and the
 * whole pass stays linear in the input: each opcode consumes a byte.
 *
 * The input gets an exact-size copy, so that ASan catches a read past its
 * end. Seeds: fixtures/corpus/dwarf_line/ (gcc's DWARF 4 and 5 tables, a
 * compressed one, the head of Debian's libc's).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dwarf_line.h"

#define MAX_ADDRS 64

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The addresses: fixed ones, then words of the input, sorted. */
static size_t addresses(const uint8_t *p, size_t n, uint64_t *v)
{
	size_t k = 0, i;

	v[k++] = 0;
	v[k++] = 0x1000;
	v[k++] = 0x401000;
	for (i = 0; i + 8 <= n && k < MAX_ADDRS; i += 8 * (1 + n / 4096))
		memcpy(&v[k++], p + i, 8);
	qsort(v, k, sizeof(*v), cmp_u64);
	return k;
}

static void check(const struct dwarf_line_answer *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (out[i].file && strlen(out[i].file) > (64u << 20))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	struct dwarf_line_answer out[MAX_ADDRS];
	struct dwarf_line_counts counts = {0};
	struct dwarf_ctx *ctx = NULL;
	uint64_t addrs[MAX_ADDRS];
	uint8_t *copy;
	char *names = NULL;
	size_t n;
	int i;

	if (size < 1)
		return 0;
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	n = addresses(copy, size - 1, addrs);
	for (i = 0; i < DWARF_SECTIONS; i++)
		secs[i] = (struct dwarf_section_bytes){copy, size - 1, data[0] & 1};
	if (data[0] & 1) {
		if (!dwarf_ctx__new(secs, true, &ctx) &&
		    !dwarf_ctx__lines(ctx, addrs, n, out, &counts, NULL))
			check(out, n);
		dwarf_ctx__free(ctx);
	} else if (!dwarf_line__lookup(secs, addrs, n, out, &names, &counts, NULL)) {
		check(out, n);
	}
	free(names);
	free(copy);
	return 0;
}
