/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables by file: each executable file's table is built once, the
 * first time a process maps it, and shared by every process that maps it
 * (libc's serves them all) until the last one lets it go. The cache owns
 * the rule dictionary the tables refer to.
 *
 * A file is known by the identity the kernel's mmap records give
 * (device, inode and inode generation), so a file replaced at the same
 * path is another file.
 */
#ifndef CPROF_TABLE_CACHE_H
#define CPROF_TABLE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

struct table_cache;
struct table_store;
struct load_budget;

struct file_id {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	uint64_t generation;
};

/* Where a file's code is: an executable PT_LOAD's file range and its addresses. */
#define TABLE_EXEC_SEGS 4 /* the first ones kept */

struct exec_seg {
	uint64_t off, end; /* file offsets [off, end) */
	uint64_t delta;	   /* their addresses are offset + delta (p_vaddr - p_offset) */
};

struct cached_table {
	/* NULL: the file has no usable CFI (err says why), or its table is pending */
	const struct unwind_table *table;
	/*
	 * Being built off the loop (table_cache__load_off_loop): table, err,
	 * exec and stats are not known yet, until table_cache__take hands it
	 * back (a build left behind at the end of the run never is).
	 */
	bool pending;
	struct file_id id;
	/* For lookups by file offset (the BPF walk by file): the first executable segments. */
	struct exec_seg exec[TABLE_EXEC_SEGS];
	uint32_t nexec;
	int err;
	struct unwind_table_stats stats;
	uint64_t build_ns;
	void *user; /* for the caller: where it put the table (the BPF maps) */
};

struct table_cache_stats {
	uint64_t tables;      /* held now */
	uint64_t bytes;	      /* of the tables held now */
	uint64_t peak_bytes;  /* the most held at once */
	uint64_t built;	      /* tables built since the start (or loaded) */
	uint64_t loaded;      /* ... of them read back from the table store */
	uint64_t build_ns;    /* time spent building them */
	uint64_t no_cfi;      /* files without usable CFI */
	uint64_t pending;     /* builds posted off the loop, not taken back (nor left behind) */
	uint64_t left_behind; /* builds given up at the end of the run, still reading */
};

/* store: where tables are kept between runs (borrowed), or NULL. */
int table_cache__new(struct table_store *store, struct table_cache **out);
void table_cache__free(struct table_cache *c);
struct unwind_rules *table_cache__rules(struct table_cache *c);
/* The run's caps and deadline for CFI (lib/load_budget.h), borrowed; NULL: none. */
void table_cache__set_budget(struct table_cache *c, struct load_budget *budget);

/*
 * With the loader (table_cache__load_off_loop), a file of at most this
 * much CFI by default (its section headers' claim) is still built on the caller's
 * thread, up to TABLE_CACHE_SLICE_NS of every TABLE_CACHE_SLICE_EVERY_NS:
 * libc's 0.3 MB take 10-25 ms, and a process begun then finds its tables
 * with its first samples. The rest, and all past the slice, go to the
 * loader: a user's files cost the loop a tenth of its time at most.
 */
#define TABLE_CACHE_SYNC_CFI_BYTES (1ull << 20)
#define TABLE_CACHE_SLICE_NS	   (100 * 1000000ull)
#define TABLE_CACHE_SLICE_EVERY_NS (1000 * 1000000ull)

/*
 * Tables are built from now on by threads of their own (table_loader.h)
 * but for files of at most sync_bytes of CFI within the slice above
 * (TABLE_CACHE_SYNC_CFI_BYTES; 0: none), and table_cache__get hands out
 * pending tables. 0, or a negative errno.
 */
int table_cache__load_off_loop(struct table_cache *c, uint64_t sync_bytes);
/* Readable when a build has ended (for the loop's poll); -1 without the threads. */
int table_cache__fd(const struct table_cache *c);
/*
 * A table whose build ended (built, refused or failed: no longer pending),
 * its rule ids the cache's dictionary's; NULL when there is none left. Call
 * until NULL when table_cache__fd is readable.
 */
struct cached_table *table_cache__take(struct table_cache *c);
/*
 * Waits up to max_ns for a build to end, within a slice of the loop's time
 * of its own (TABLE_CACHE_SLICE_NS of every TABLE_CACHE_SLICE_EVERY_NS):
 * for a stack copy that found a table pending. True when one has
 * (table_cache__take).
 */
bool table_cache__wait(struct table_cache *c, uint64_t max_ns);
/*
 * The run is over: builds end (table_loader__stop), none begins, until
 * deadline_ns; those that end are still taken. Those left behind, still
 * reading, are counted as abandoned in the budget and in left_behind, and
 * their tables stay pending. Returns how many.
 */
size_t table_cache__stop(struct table_cache *c, uint64_t deadline_ns);

/*
 * The table of the file open at fd (read only when the cache has none for
 * id), with one more reference. 0 and *out, even for a file without CFI
 * (its cached_table says so, and is not read again) or one pending;
 * -ENOMEM.
 */
int table_cache__get(struct table_cache *c, const struct file_id *id, int fd,
		     struct cached_table **out);
/* Drops a reference; the last one frees the table: returns true then (the caller's user data is
 * freed by the caller first). */
bool table_cache__put(struct table_cache *c, struct cached_table *t);
void table_cache__stats(const struct table_cache *c, struct table_cache_stats *out);

#endif
