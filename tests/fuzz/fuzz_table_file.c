// SPDX-License-Identifier: MIT
/*
 * The table store's files (src/unwind/table_file.c) are read back from
 * disk: any bytes are refused or give a table whose every lookup names a
 * rule of the dictionary. The input is an image; its checksum is set to
 * match first (table_file__seal), as a file damaged with care would have
 * it, so that the fuzzer gets past it to the checks of the structure; the
 * file it names and the builder version are the ones it says
 * (table_file__describe). The seed (fixtures/corpus/table_file/) is a
 * small table's image.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/table_file.h"

static void check_table(const struct unwind_table *t, const struct unwind_rules *rules)
{
	uint64_t addr, end = t->base + ((uint64_t)t->npages << CPROF_UNWIND_PAGE_SHIFT);
	uint64_t step = ((uint64_t)t->npages << CPROF_UNWIND_PAGE_SHIFT) / 512 + 1;

	if (t->pages[t->npages] != t->nrows)
		abort();
	for (addr = t->base - 1; addr < end + 2; addr += step)
		if (unwind_table__lookup(t, addr) >= unwind_rules__count(rules))
			abort();
	if (unwind_table__lookup(t, UINT64_MAX) >= unwind_rules__count(rules))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char version[TABLE_FILE_VERSION_LEN];
	struct unwind_table_stats stats;
	struct unwind_rules *rules;
	struct table_file_id id;
	struct unwind_table *t;
	void *buf;

	if (table_file__describe(data, size, &id, version))
		return 0;
	buf = malloc(size);
	if (!buf || unwind_rules__new(&rules)) {
		free(buf);
		return 0;
	}
	memcpy(buf, data, size);
	table_file__seal(buf, size);
	if (!table_file__decode(buf, size, &id, version, rules, &t, &stats)) {
		check_table(t, rules);
		unwind_table__free(t);
	}
	unwind_rules__free(rules);
	free(buf);
	return 0;
}
