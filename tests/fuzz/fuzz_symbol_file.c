// SPDX-License-Identifier: MIT
/*
 * The symbols kept between runs (src/resolve/symbol_file.c) are read back
 * from disk: any bytes are refused or give ranges sorted and apart, each
 * named by a string that ends inside the names. The input is an image; its
 * checksum is set to match first (symbol_file__seal), as a file damaged
 * with care would have it, so that the fuzzer gets past it to the checks
 * of the structure; the file it names and the loader version are the ones
 * it says (symbol_file__describe). The seed (fixtures/corpus/symbol_file/)
 * is a small image.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/range.h"
#include "resolve/symbol_file.h"

static void check_set(const struct symbol_set *set)
{
	const char *end = set->names + set->names_len;
	size_t i;

	for (i = 0; i < set->nranges; i++) {
		const struct symbol_range *r = &set->ranges[i];

		if (r->start >= r->end || r->sym_start > r->start || (i && r->start < r[-1].end))
			abort();
		if (r->name < set->names || r->name >= end ||
		    !memchr(r->name, 0, (size_t)(end - r->name)))
			abort();
		if (range_find(set->ranges, set->nranges, sizeof(*r), r->start) != (ptrdiff_t)i)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char version[SYMBOL_FILE_VERSION_LEN];
	struct symbol_file_id id;
	struct symbol_set set;
	void *buf;

	if (symbol_file__describe(data, size, &id, version))
		return 0;
	buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	symbol_file__seal(buf, size);
	if (!symbol_file__decode(buf, size, &id, version, &set)) {
		check_set(&set);
		symbol_set__clear(&set);
	}
	free(buf);
	return 0;
}
