// SPDX-License-Identifier: MIT
/*
 * Go's function table (.gopclntab) comes from the programs being profiled.
 * An input that starts like an ELF file is an image for
 * go_pclntab__from_elf (the table by its section, or by a search of the
 * segments); any other is 8 bytes of text start (little-endian) and the
 * table itself for go_pclntab__parse. Every answer must be consistent:
 * functions sorted, each name inside the names block, and a lookup inside
 * a function gives that function.
 *
 * The input gets an exact-size copy, so that ASan catches a read past its
 * end. Seeds: fixtures/corpus/go_pclntab/ (each layout, small ELF images).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/go_pclntab.h"

static void probe(const struct go_pclntab *t, const uint8_t *data, size_t size)
{
	size_t i, n = go_pclntab__count(t), names_size;
	const char *names = go_pclntab__names(t, &names_size), *name, *got;
	uint64_t start, end, prev = 0, at, a;

	for (i = 0; i < n; i++) {
		if (go_pclntab__func(t, i, &start, &end, &name))
			abort();
		if (start < prev || end < start || name < names || name >= names + names_size ||
		    !memchr(name, 0, names + names_size - name) || !name[0])
			abort();
		prev = start;
		if (end == start)
			continue;
		/* The next function starts at end or later: its last byte is its. */
		got = go_pclntab__lookup(t, end - 1, &at);
		if (got != name || at != start)
			abort();
	}
	/* Addresses from the tail of the input. */
	for (i = 0; i < 8 && 8 * (i + 1) <= size; i++) {
		memcpy(&a, data + size - 8 * (i + 1), 8);
		if (go_pclntab__lookup(t, a, &at) && at > a)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_pclntab *t = NULL;
	uint64_t text = 0;
	uint8_t *copy;

	if (size >= 4 && !memcmp(data,
				 "\x7f"
				 "ELF",
				 4)) {
		copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		if (go_pclntab__from_elf(copy, size, &t) == 0) {
			probe(t, copy, size);
			go_pclntab__free(t);
		}
		free(copy);
		return 0;
	}
	if (size < 8)
		return 0;
	memcpy(&text, data, 8);
	copy = malloc(size - 8 ? size - 8 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 8, size - 8);
	if (go_pclntab__parse(copy, size - 8, text, &t) == 0) {
		probe(t, copy, size - 8);
		go_pclntab__free(t);
	}
	free(copy);
	return 0;
}
