/* SPDX-License-Identifier: MIT */
/*
 * A file's function symbols, as elf_symtab.c turns them into address
 * ranges, as a file of the store kept between runs (store/table_store.h):
 * loading libc's from its debug file costs 1-2 ms a run, each file's again
 * in every run, where reading them back costs a tenth of that. The image
 * says what it was made from (the file's build ID and identity, and the
 * identity of the debug file its symbols came from: store/kept_image.h) and by (the
 * loader's version): a later run takes it only for the same. Outside input
 * when read back: every field is checked, and an image that fails a check
 * is not used.
 */
#ifndef CPROF_SYMBOL_FILE_H
#define CPROF_SYMBOL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/elf_build_id.h"
#include "store/kept_image.h"

#define SYMBOL_FILE_VERSION_LEN 64

/* [start, end) belongs to the symbol that starts at sym_start, named name. */
struct symbol_range {
	uint64_t start; /* start and end first: range_find */
	uint64_t end;
	uint64_t sym_start;
	const char *name;
};

/* What the symbols were loaded from. */
struct symbol_file_id {
	uint8_t build_id[ELF_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct kept_source file;
	struct kept_source debug; /* the separate debug file they came from; all 0: none */
};

/* What an image holds: the ranges, sorted and apart, their names in one arena. */
struct symbol_set {
	struct symbol_range *ranges;
	size_t nranges;
	size_t nsyms; /* symbols the ranges came from */
	char *names;
	size_t names_len;
};

/*
 * The image of nranges ranges (sorted by start, none overlapping, as
 * elf_symtab.c makes them) of nsyms symbols, for id, by version (malloc'ed
 * into *out, len bytes). Only the names the ranges use are kept. 0, or
 * -ENOMEM, or -EINVAL for ranges that are not sorted and apart.
 */
int symbol_file__encode(const struct symbol_range *ranges, size_t nranges, size_t nsyms,
			const struct symbol_file_id *id, const char *version, void **out,
			size_t *len);

/*
 * The symbols of the image buf (len bytes, 8-byte aligned, as malloc gives)
 * into *set (free with symbol_set__clear): 0; -EINVAL for an image that is
 * not of id and version or fails a check; -ENOMEM.
 */
int symbol_file__decode(const void *buf, size_t len, const struct symbol_file_id *id,
			const char *version, struct symbol_set *set);

/* What an image says it is. -EINVAL if it is too short to say. */
int symbol_file__describe(const void *buf, size_t len, struct symbol_file_id *id,
			  char version[SYMBOL_FILE_VERSION_LEN]);

/* Sets an image's checksum to its content's: encode does; tests and the fuzzer after edits. */
void symbol_file__seal(void *buf, size_t len);

/* Frees what decode gave; NULL-safe, and the set is then empty. */
void symbol_set__clear(struct symbol_set *set);

#endif
