/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables kept on disk between runs, one file per executable file,
 * named by its GNU build ID: building a table from a file's CFI costs
 * 5-30 ms a run for the programs of a profile (python3 maps some 50 files),
 * reading one back well under a millisecond. A table depends on the file's
 * content and on the builder alone, so a file is used only for the very
 * file it was built from (device, inode, size, modification and change
 * times: store/kept_image.h), of the same build ID and cprof version, and
 * only after every check of table_file.h; anything else is built again,
 * and written over. Only files of root's or this user's that no one else
 * may write are kept (table_store__trusts): what anyone else can write
 * never steers a later run.
 *
 * The store is a directory of this user's that no one else may write
 * (created 0700); files are written whole under a temporary name and
 * renamed, within the size cap: the files least recently used go first,
 * and a file too large for it (past an eighth) is not written. Every
 * failure only costs the build: the store logs it with -v and goes on.
 * Safe to use from several threads at once (the unwinder's and the symbol
 * loader's).
 */
#ifndef CPROF_TABLE_STORE_H
#define CPROF_TABLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/kept_image.h"

struct table_store;

/* The suffix of a table's file (unwind/kept_tables.c names them). */
#define TABLE_STORE_SUFFIX ".utab"

/* What the store counts for its callers, in struct table_store_stats. */
enum table_store_event {
	TABLE_STORE_LOADED,
	TABLE_STORE_SAVED,
	TABLE_STORE_REFUSED,
};

struct table_store_stats {
	uint64_t loaded;  /* tables read back */
	uint64_t saved;	  /* tables written */
	uint64_t refused; /* files found but not used: another version, or a failed check */
	uint64_t pruned;  /* files removed for the size cap */
	uint64_t capped;  /* files not written: past the size cap */
	uint64_t foreign; /* files not kept: someone else could write them */
};

/*
 * The store in dir, created if missing; max_bytes caps its files. -errno
 * (logged with -v) when it cannot be used: the caller goes without.
 */
int table_store__open(const char *dir, uint64_t max_bytes, struct table_store **out);
void table_store__free(struct table_store *s);

/*
 * Whether what is made from file may be kept and read back (counted in
 * foreign when not): a regular file of root's or this user's that neither
 * group nor others may write (kept_source__trusted).
 */
bool table_store__trusts(struct table_store *s, const struct kept_source *file);

/*
 * Other small facts kept here, a file each, named by key (letters, digits,
 * '-' and '_'; kernel_facts.h keeps the running kernel's): up to size
 * bytes of it into buf, its length, or -errno (-ENOENT: none). The same
 * checks and the same size cap as for the tables.
 */
int table_store__read_kept(struct table_store *s, const char *key, void *buf, size_t size);
/* The whole of what is kept under key, of any size: 0 and *buf (malloc'ed), or -errno. */
int table_store__read_kept_all(struct table_store *s, const char *key, char **buf, size_t *len);
/* Keeps len bytes under key, best effort. */
void table_store__write_kept(struct table_store *s, const char *key, const void *buf, size_t len);

/*
 * The bytes of the store's file name (malloc'ed into *buf) if it is a
 * regular file of ours: 0, -ENOENT or -errno.
 */
int table_store__read_file(struct table_store *s, const char *name, char **buf, size_t *len);
/* Writes the file name whole, under a temporary name then renamed, within the cap: 0 or -errno. */
int table_store__write_file(struct table_store *s, const char *name, const void *buf, size_t len);
/* Marks name as used now: the cap removes the files used longest ago first. */
void table_store__used(struct table_store *s, const char *name);
/* Counts e in the store's stats. */
void table_store__count(struct table_store *s, enum table_store_event e);

void table_store__stats(struct table_store *s, struct table_store_stats *out);

/*
 * Where the store goes by default: $XDG_CACHE_HOME/cprof, else
 * $HOME/.cache/cprof, else /var/cache/cprof; into buf (size bytes).
 */
const char *table_store__default_dir(char *buf, size_t size);

#endif
