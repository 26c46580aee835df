// SPDX-License-Identifier: MIT
/*
 * Unwind tables in the table store; see kept_tables.h. A table is the file
 * <build ID in hex>-<hash of device and inode>.utab; the version table_file.h checks is the hash of
 * the builder's sources (table_builder.h, made by the Makefile), so a
 * cprof whose builder changed builds its tables afresh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LOG_MODULE "tables"
#include "lib/log.h"
#include "table_builder.h"
#include "unwind/kept_tables.h"

/* BUILDID-PLACE.utab: a copy of the file elsewhere has a table of its own. */
static void file_name(const struct table_file_id *id, char *buf, size_t size)
{
	size_t n = elf_build_id__hex(id->build_id, id->build_id_len, buf, size);

	snprintf(buf + n, size - n, "-%016llx" TABLE_STORE_SUFFIX,
		 (unsigned long long)kept_source__place(&id->file));
}

int table_store__load(struct table_store *s, const struct table_file_id *id,
		      struct unwind_rules *rules, struct unwind_table **out,
		      struct unwind_table_stats *stats)
{
	char name[2 * ELF_BUILD_ID_MAX + 18 + sizeof(TABLE_STORE_SUFFIX)];
	size_t len = 0;
	char *buf;
	int err;

	*out = NULL;
	if (!id->build_id_len || !table_store__trusts(s, &id->file))
		return -ENOENT;
	file_name(id, name, sizeof(name));
	if (table_store__read_file(s, name, &buf, &len))
		return -ENOENT;
	err = table_file__decode(buf, len, id, CPROF_TABLE_BUILDER, rules, out, stats);
	free(buf);
	if (err == -EINVAL) {
		table_store__count(s, TABLE_STORE_REFUSED);
		pr_debug("%s: not used: another version's, or corrupt", name);
		return -ENOENT;
	}
	if (err)
		return err;
	table_store__count(s, TABLE_STORE_LOADED);
	/* Its time of use, for the store's cap. */
	table_store__used(s, name);
	return 0;
}

void table_store__save(struct table_store *s, const struct table_file_id *id,
		       const struct unwind_table *t, const struct unwind_rules *rules,
		       const struct unwind_table_stats *stats)
{
	char name[2 * ELF_BUILD_ID_MAX + 18 + sizeof(TABLE_STORE_SUFFIX)];
	void *buf = NULL;
	size_t len;

	if (!id->build_id_len || !t || !kept_source__trusted(&id->file, (uint32_t)geteuid()))
		return;
	file_name(id, name, sizeof(name));
	if (!table_file__encode(t, rules, stats, id, CPROF_TABLE_BUILDER, &buf, &len) &&
	    !table_store__write_file(s, name, buf, len))
		table_store__count(s, TABLE_STORE_SAVED);
	free(buf);
}
