// SPDX-License-Identifier: MIT
/*
 * /proc/kallsyms-format text through both passes: any bytes load or fail
 * cleanly, in any chunk size with the same table; lookups stay in bounds;
 * a name pass over the same text names every symbol asked for, a load that
 * names the symbols of given addresses names them the same, and a name pass
 * over other text (the input's second half) names or finds gone each one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/ksyms.h"

#define MAX_PROBES 8

/* Chunk sizes from the input's bytes, so the fuzzer explores where lines split. */
static size_t chunk_of(const uint8_t *data, size_t size, size_t salt)
{
	size_t h = size * 31 + salt;

	if (size)
		h += data[(size - 1) / (salt + 1)];
	return 1 + h % 97;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *name, *early, *mod;
	struct ksyms *k = NULL, *whole = NULL, *named = NULL, *only = NULL;
	uint64_t probes[MAX_PROBES + 2] = {0, UINT64_MAX};
	uint32_t idx[MAX_PROBES + 2], other;
	bool found[MAX_PROBES + 2];
	size_t i, n = 2;

	if (ksyms__parse_for(text, size, chunk_of(data, size, 0), NULL, 0, false, &k))
		return 0;
	/* Chunking must not change what is read. */
	if (ksyms__parse(text, size, &whole))
		abort();
	if (ksyms__count(k) != ksyms__count(whole) || ksyms__hidden(k) != ksyms__hidden(whole))
		abort();
	/* Probe addresses taken from the input itself, and the extremes. */
	for (i = 0; i + 8 <= size && n < MAX_PROBES + 2; i += 8)
		memcpy(&probes[n++], data + i, 8);
	for (i = 0; i < n; i++) {
		found[i] = ksyms__find(k, probes[i], &idx[i]) == 0;
		if (!found[i])
			continue;
		if (ksyms__addr(k, idx[i]) > probes[i] || ksyms__find(whole, probes[i], &other) ||
		    other != idx[i])
			abort();
		if (ksyms__want_name(k, idx[i]))
			abort();
	}
	if (ksyms__name_pass_text(k, text, size, chunk_of(data, size, 1)))
		abort();
	if (ksyms__parse_for(text, size, chunk_of(data, size, 3), probes, n, false, &named) ||
	    ksyms__parse_for(text, size, chunk_of(data, size, 4), probes, n, true, &only))
		abort();
	for (i = 0; i < n; i++) {
		if (!found[i])
			continue;
		if (ksyms__name(k, idx[i], &name) || !name[0])
			abort();
		/* Named in the load's own read, as the pass named it. */
		if (ksyms__find(named, probes[i], &other) || other != idx[i] ||
		    ksyms__name(named, other, &early) || strcmp(name, early))
			abort();
		/* A table of only these symbols finds the same symbol, as far, with that name. */
		if (ksyms__find(only, probes[i], &other) ||
		    ksyms__addr(only, other) != ksyms__addr(k, idx[i]) ||
		    ksyms__name(only, other, &early) || strcmp(name, early))
			abort();
		mod = ksyms__module(k, idx[i]);
		early = ksyms__module(only, other);
		if (!mod != !early || (mod && strcmp(mod, early)))
			abort();
	}
	/* And finds nothing where the whole table finds nothing. */
	for (i = 0; i < n; i++)
		if (!found[i] && !ksyms__find(only, probes[i], &other))
			abort();
	ksyms__free(k);
	ksyms__free(named);
	ksyms__free(only);

	/* The text changed between the passes. */
	if (ksyms__parse(text, size, &k))
		abort();
	for (i = 0; i < n; i++)
		if (found[i] && ksyms__want_name(k, idx[i]))
			abort();
	if (ksyms__name_pass_text(k, text + size / 2, size - size / 2, chunk_of(data, size, 2)))
		abort();
	for (i = 0; i < n; i++) {
		int err = found[i] ? ksyms__name(k, idx[i], &name) : 0;

		if (err && err != -ENOENT)
			abort();
	}
	ksyms__free(k);
	ksyms__free(whole);
	return 0;
}
