// SPDX-License-Identifier: MIT
/*
 * The file image of a file's symbol ranges; see symbol_file.h. A header,
 * the ranges (each with its name's offset in the names), then the names,
 * NUL-terminated, all in the host's byte order: a store is one host's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "store/kept_image.h"
#include "resolve/symbol_file.h"

#define MAGIC "cprofsy\n"
/* Past these no file's symbols go: the image would be larger than any file. */
#define MAX_RANGES (1ull << 28)
#define MAX_NAMES  (1ull << 32)

_Static_assert(SYMBOL_FILE_VERSION_LEN == KEPT_IMAGE_VERSION_LEN, "describe copies it whole");

struct header {
	struct kept_head head;
	uint32_t pad;
	struct kept_source file;
	struct kept_source debug;
	uint64_t nranges;
	uint64_t nsyms;
	uint64_t names_len;
	uint64_t checksum; /* of the whole image, with this field 0 */
};

struct disk_range {
	uint64_t start;
	uint64_t end;
	uint64_t sym_start;
	uint64_t name; /* offset in the names */
};

_Static_assert(offsetof(struct header, checksum) % 8 == 0,
	       "image_checksum() skips it word by word");
_Static_assert(sizeof(struct header) % 8 == 0, "the ranges are read in place");

static uint64_t checksum(const void *buf, size_t n)
{
	return image_checksum(buf, n, offsetof(struct header, checksum));
}

void symbol_file__seal(void *buf, size_t len)
{
	image_seal(buf, len, sizeof(struct header), offsetof(struct header, checksum));
}

int symbol_file__describe(const void *buf, size_t len, struct symbol_file_id *id,
			  char version[SYMBOL_FILE_VERSION_LEN])
{
	struct header h;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	memset(id, 0, sizeof(*id));
	if (kept_head__describe(&h.head, id->build_id, &id->build_id_len, version))
		return -EINVAL;
	id->file = h.file;
	id->debug = h.debug;
	return 0;
}

/* Sorted and apart, each after its symbol's start, each named: what lookups rely on. */
static bool ranges_ok(const struct symbol_range *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].start >= r[i].end || r[i].sym_start > r[i].start || !r[i].name ||
		    (i && r[i].start < r[i - 1].end))
			return false;
	return true;
}

/* The bytes of the names the ranges use; a name shared by neighbours is kept once. */
static size_t names_size(const struct symbol_range *r, size_t n)
{
	size_t i, size = 0;

	for (i = 0; i < n; i++)
		if (!i || r[i].name != r[i - 1].name)
			size += strlen(r[i].name) + 1;
	return size;
}

static void fill_header(struct header *h, const struct symbol_file_id *id, const char *version,
			size_t nranges, size_t nsyms, size_t names_len)
{
	memset(h, 0, sizeof(*h));
	kept_head__fill(&h->head, MAGIC, sizeof(*h), version, id->build_id, id->build_id_len);
	h->file = id->file;
	h->debug = id->debug;
	h->nranges = nranges;
	h->nsyms = nsyms;
	h->names_len = names_len;
}

int symbol_file__encode(const struct symbol_range *ranges, size_t nranges, size_t nsyms,
			const struct symbol_file_id *id, const char *version, void **out,
			size_t *len)
{
	struct disk_range *d;
	size_t names_len, size, i, at = 0, n;
	struct header *h;
	char *names;

	*out = NULL;
	*len = 0;
	if (!ranges_ok(ranges, nranges) || nranges > MAX_RANGES ||
	    id->build_id_len > ELF_BUILD_ID_MAX)
		return -EINVAL;
	names_len = names_size(ranges, nranges);
	if (names_len > MAX_NAMES)
		return -EINVAL;
	size = sizeof(*h) + nranges * sizeof(*d) + names_len;
	h = malloc(size);
	if (!h)
		return -ENOMEM;
	fill_header(h, id, version, nranges, nsyms, names_len);
	d = (struct disk_range *)(h + 1);
	names = (char *)(d + nranges);
	for (i = 0; i < nranges; i++) {
		if (i && ranges[i].name == ranges[i - 1].name) {
			d[i].name = d[i - 1].name;
		} else {
			n = strlen(ranges[i].name) + 1;
			memcpy(names + at, ranges[i].name, n);
			d[i].name = at;
			at += n;
		}
		d[i].start = ranges[i].start;
		d[i].end = ranges[i].end;
		d[i].sym_start = ranges[i].sym_start;
	}
	symbol_file__seal(h, size);
	*out = h;
	*len = size;
	return 0;
}

/* The header is this build's, of the file id names, and its sizes add up to len. */
static bool header_ok(const struct header *h, size_t len, const struct symbol_file_id *id,
		      const char *version)
{
	if (!kept_head__is(&h->head, MAGIC, sizeof(*h), version, id->build_id, id->build_id_len) ||
	    !kept_source__same(&h->file, &id->file) || !kept_source__same(&h->debug, &id->debug))
		return false;
	if (h->nranges > MAX_RANGES || h->names_len > MAX_NAMES || h->nsyms > MAX_RANGES)
		return false;
	return len - sizeof(*h) == h->nranges * sizeof(struct disk_range) + h->names_len;
}

/* The ranges, their names pointing into set->names; false if one fails a check. */
static bool copy_ranges(const struct disk_range *d, size_t n, uint64_t names_len,
			struct symbol_set *set)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (d[i].name >= names_len)
			return false;
		set->ranges[i] = (struct symbol_range){d[i].start, d[i].end, d[i].sym_start,
						       set->names + d[i].name};
	}
	return ranges_ok(set->ranges, n);
}

int symbol_file__decode(const void *buf, size_t len, const struct symbol_file_id *id,
			const char *version, struct symbol_set *set)
{
	const struct disk_range *d;
	struct header h;

	memset(set, 0, sizeof(*set));
	if (len < sizeof(h))
		return -EINVAL;
	/* Copied out: buf need not be aligned for it. The ranges are read in place once checked. */
	memcpy(&h, buf, sizeof(h));
	if (!header_ok(&h, len, id, version) || ((uintptr_t)buf & 7) ||
	    h.checksum != checksum(buf, len))
		return -EINVAL;
	/* Names end with a NUL: each one read from its offset stops inside them. */
	if (h.nranges && (!h.names_len || ((const char *)buf)[len - 1]))
		return -EINVAL;
	d = (const struct disk_range *)((const struct header *)buf + 1);
	set->ranges = malloc((h.nranges ? h.nranges : 1) * sizeof(*set->ranges));
	set->names = malloc(h.names_len ? h.names_len : 1);
	if (!set->ranges || !set->names) {
		symbol_set__clear(set);
		return -ENOMEM;
	}
	memcpy(set->names, d + h.nranges, h.names_len);
	if (!copy_ranges(d, h.nranges, h.names_len, set)) {
		symbol_set__clear(set);
		return -EINVAL;
	}
	set->nranges = h.nranges;
	set->nsyms = h.nsyms;
	set->names_len = h.names_len;
	return 0;
}

void symbol_set__clear(struct symbol_set *set)
{
	if (!set)
		return;
	free(set->ranges);
	free(set->names);
	memset(set, 0, sizeof(*set));
}
