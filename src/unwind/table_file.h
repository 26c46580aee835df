/* SPDX-License-Identifier: MIT */
/*
 * An unwind table as a file of the table store (table_store.h): its page
 * index, its rows with rule numbers of the file's own, and those rules, so
 * that another run, whose rule dictionary numbers them otherwise, can take
 * it in; with the build statistics, and what it was built from (the file's
 * build ID and identity) and by (cprof's version). Outside input when read
 * back: every field is checked, and a file that fails a check is not used.
 */
#ifndef CPROF_TABLE_FILE_H
#define CPROF_TABLE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/elf_build_id.h"
#include "store/kept_image.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

#define TABLE_FILE_VERSION_LEN 64

/* What a table was built from: the very file (store/kept_image.h), and its build ID. */
struct table_file_id {
	uint8_t build_id[ELF_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct kept_source file;
};

/*
 * The file image of t, whose rule ids are rules' (malloc'ed into *out, len
 * bytes). version names the builder: a file written by another is not read.
 * 0 or -ENOMEM.
 */
int table_file__encode(const struct unwind_table *t, const struct unwind_rules *rules,
		       const struct unwind_table_stats *stats, const struct table_file_id *id,
		       const char *version, void **out, size_t *len);

/*
 * The table in the image buf (len bytes, 8-byte aligned, as malloc gives),
 * its rules added to rules and its rows renumbered to them: 0 and *out,
 * *stats; -EINVAL for an image that is not of id and version or fails a
 * check (nothing is added to rules then), -ENOSPC when rules is full,
 * -ENOMEM.
 */
int table_file__decode(const void *buf, size_t len, const struct table_file_id *id,
		       const char *version, struct unwind_rules *rules, struct unwind_table **out,
		       struct unwind_table_stats *stats);

/*
 * What an image says it is: the file it was built from and the builder's
 * version (NUL-terminated). -EINVAL if it is too short to say.
 */
int table_file__describe(const void *buf, size_t len, struct table_file_id *id,
			 char version[TABLE_FILE_VERSION_LEN]);

/* Sets an image's checksum to its content's: encode does; tests and the fuzzer after edits. */
void table_file__seal(void *buf, size_t len);

#endif
