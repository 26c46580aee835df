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
 * Each function's pcsp table (go_pclntab__pcsp) must give runs in order,
 * inside the function, within the byte budget; an ELF image's Go functions
 * also become an unwind table (src/unwind/go_pcsp.c through
 * unwind_table__build), whose every row is a rule of the dictionary.
 *
 * The input gets an exact-size copy, so that ASan catches a read past its
 * end. Seeds: fixtures/corpus/go_pclntab/ (each layout, small ELF images).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/go_pclntab.h"
#include "unwind/go_pcsp.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

/* What the runs of one function must be. */
struct runs {
	uint64_t start, end, at;
};

static int check_run(const struct go_pcsp_run *run, void *arg)
{
	struct runs *r = arg;

	if (run->begin < r->at || run->end <= run->begin || run->end > r->end)
		abort();
	r->at = run->end;
	return 0;
}

/* The table's bytes: at info.offset in an image, the whole input for a table alone. */
static void frames(const struct go_pclntab *t, const uint8_t *data, size_t size)
{
	struct go_pclntab_info info;
	uint64_t budget = 1 << 20, before;
	struct runs r;
	const char *name;
	size_t i;
	int err;

	go_pclntab__info(t, &info);
	if (info.offset > size || info.size > size - info.offset)
		abort();
	for (i = 0; i < go_pclntab__count(t); i++) {
		go_pclntab__func(t, i, &r.start, &r.end, &name);
		r.at = r.start;
		before = budget;
		err = go_pclntab__pcsp(t, data + info.offset, info.size, i, &budget, check_run, &r);
		if ((err && err != -EBADMSG && err != -EFBIG) || budget > before)
			abort();
		if (go_pclntab__flags(t, data + info.offset, info.size, i) & ~3u)
			abort();
		if (err == -EFBIG)
			break;
	}
}

/* The unwind table of an image's Go functions: built or refused, never a rule out of range. */
static void unwind_rows(const uint8_t *image, size_t size)
{
	struct unwind_sources src = {.arch = CFI_ARCH_X86_64};
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	struct unwind_table *ut;
	uint32_t i;

	if (go_pcsp__open(image, size, CFI_ARCH_X86_64, &src.go))
		return;
	if (!unwind_rules__new(&rules)) {
		if (!unwind_table__build(&src, rules, &ut, &st)) {
			for (i = 0; i < ut->nrows; i++)
				if ((ut->rows[i] >> CPROF_UNWIND_PAGE_SHIFT) >=
				    unwind_rules__count(rules))
					abort();
			unwind_table__free(ut);
		}
		unwind_rules__free(rules);
	}
	go_pcsp__free(src.go);
}

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
			frames(t, copy, size);
			go_pclntab__free(t);
			unwind_rows(copy, size);
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
		frames(t, copy, size - 8);
		go_pclntab__free(t);
	}
	free(copy);
	return 0;
}
