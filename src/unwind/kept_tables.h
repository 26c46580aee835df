/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables kept in the table store (table_store.h) between runs, one
 * file per executable file, in the image of table_file.h: read back only
 * for the very file they were built from and by the same builder.
 */
#ifndef CPROF_KEPT_TABLES_H
#define CPROF_KEPT_TABLES_H

#include "unwind/table_file.h"
#include "store/table_store.h"

/*
 * The table of id, as table_file__decode gives it; -ENOENT when there is
 * none to use, or the file is not trusted (table_store__trusts).
 */
int table_store__load(struct table_store *s, const struct table_file_id *id,
		      struct unwind_rules *rules, struct unwind_table **out,
		      struct unwind_table_stats *stats);

/* Keeps t (its rule ids rules') for id, best effort, if the file is trusted. */
void table_store__save(struct table_store *s, const struct table_file_id *id,
		       const struct unwind_table *t, const struct unwind_rules *rules,
		       const struct unwind_table_stats *stats);

#endif
