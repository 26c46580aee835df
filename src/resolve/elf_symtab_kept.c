// SPDX-License-Identifier: MIT
/*
 * A file's symbol ranges kept in the table store between runs (symbol_file.h),
 * under the file's identity and the loader's version (CPROF_SYMBOL_LOADER),
 * and recalled instead of loaded when they are there.
 */
#include <errno.h>
#include <stdatomic.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "elf"
#include "lib/elf_build_id.h"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "lib/range.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbol_file.h"
#include "symbol_loader.h"
#include "store/table_store.h"
#include "resolve/symbol_rank.h"
#include "resolve/elf_symtab_internal.h"

/* What is kept of the file is of this very file, and of the debug file debug (NULL: none). */
void kept_file_id(const struct elf_symtab *e, struct symbol_file_id *id,
		  const struct elf_symtab *debug)
{
	memset(id, 0, sizeof(*id));
	memcpy(id->build_id, e->build_id_bytes, e->build_id_len);
	id->build_id_len = (uint32_t)e->build_id_len;
	id->file = e->source;
	if (debug)
		id->debug = debug->source;
}

/* The name kept under: prefix, the build ID, and where the files are (table_store.h). */
bool kept_key(const struct elf_symtab *e, const struct symbol_file_id *id, const char *prefix,
	      char *key, size_t size)
{
	uint64_t place = kept_source__place(&id->file) ^ kept_source__place(&id->debug);

	return (size_t)snprintf(key, size, "%s-%s-%016llx", prefix, e->build_id,
				(unsigned long long)place) < size;
}

/*
 * What the symbols are loaded from and the name they are kept under: false
 * if they are not kept (no store, no build ID, an in-memory image, or a
 * debug file that came after the file was closed, whose symbols lack the
 * file's own).
 */
static bool kept_id(const struct elf_symtab *e, struct symbol_file_id *id, char *key, size_t size)
{
	if (!e->store || !e->elf || e->image || !e->build_id_len ||
	    !table_store__trusts(e->store, &e->source) ||
	    (e->debug && !table_store__trusts(e->store, &e->debug->source)))
		return false;
	kept_file_id(e, id, e->debug);
	return kept_key(e, id, "sym", key, size);
}

/* What an earlier run kept under key for this file, into *set: 0, or -errno. */
int read_kept(struct elf_symtab *e, const struct symbol_file_id *id, const char *key,
	      struct symbol_set *set)
{
	size_t len;
	char *buf;
	int err;

	memset(set, 0, sizeof(*set));
	err = table_store__read_kept_all(e->store, key, &buf, &len);
	if (err)
		return err;
	err = symbol_file__decode(buf, len, id, CPROF_SYMBOL_LOADER, set);
	free(buf);
	if (err == -EINVAL)
		pr_debug("%s: %s not used: another version's, or corrupt", e->path, key);
	return err;
}

/* The symbols kept by an earlier run, if any are there for this file: 0, or -errno. */
static int load_kept(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_set set;
	int err = read_kept(e, id, key, &set);

	if (err)
		return err;
	e->ranges = set.ranges;
	e->nranges = set.nranges;
	e->nsyms = set.nsyms;
	e->names = set.names;
	e->from_store = true;
	return 0;
}

/* Keeps n ranges of nsyms symbols of this file under key, best effort. */
void keep_ranges(struct elf_symtab *e, const struct symbol_range *r, size_t n, size_t nsyms,
		 const struct symbol_file_id *id, const char *key)
{
	void *buf;
	size_t len;

	if (symbol_file__encode(r, n, nsyms, id, CPROF_SYMBOL_LOADER, &buf, &len))
		return;
	table_store__write_kept(e->store, key, buf, len);
	free(buf);
}

/* The symbols, kept by an earlier run or loaded now (and then kept). */
/* Whether loading e would hold more than the run's LOAD_MAX_HELD_SYMBOLS. */
static bool over_held(const struct elf_symtab *e)
{
	uint64_t count, bytes;

	if (!e->budget)
		return false;
	claimed_symbols(e, &count, &bytes);
	return atomic_load(&e->budget->symbols_held) + count > LOAD_MAX_HELD_SYMBOLS;
}

int load_or_recall(struct elf_symtab *e)
{
	struct symbol_file_id id;
	char key[2 * ELF_BUILD_ID_MAX + 32];
	bool kept = kept_id(e, &id, key, sizeof(key));
	int err;

	/* Stopped: not even what is kept is read, the run is over. */
	if (e->stop && atomic_load(e->stop))
		return -ETIME;
	if (over_held(e))
		return -ENOSPC;
	if (kept && !load_kept(e, &id, key))
		return 0;
	if (over_time(e))
		return -ETIME;
	err = load_symbols(e);
	/* Stopped, the run is over: the store may be gone by now (symtab_loader__stop). */
	if (!err && kept && !(e->stop && atomic_load(e->stop)))
		keep_ranges(e, e->ranges, e->nranges, e->nsyms, &id, key);
	return err;
}
