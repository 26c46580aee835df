// SPDX-License-Identifier: MIT
/*
 * The table store (table_store.h) in a directory of the test's: a table
 * written is read back, a damaged file is refused and written over, a
 * directory others may write into is not used, and past its cap the files
 * used longest ago go first, also while writing; only the very file of a
 * trusted owner gets its table. Then table_cache with a store: the second
 * cache reads libc's table back instead of building it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "unwind/table_cache.h"
#include "unwind/kept_tables.h"

/* A small table with two rules, for a made-up file of build ID seed. */
static struct unwind_table *small_table(struct unwind_rules *rules, uint8_t seed,
					struct table_file_id *id)
{
	struct cprof_unwind_rule a = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 8, .ra_off = -8},
				 b = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 16, .ra_off = -8};
	struct unwind_table *t = calloc(1, sizeof(*t));
	uint32_t ia, ib;

	CHECK(t);
	CHECK_INT(unwind_rules__id(rules, &a, &ia), ==, 0);
	CHECK_INT(unwind_rules__id(rules, &b, &ib), ==, 0);
	t->base = 0x10000;
	t->npages = 1;
	t->nrows = 3;
	t->pages = malloc(2 * sizeof(*t->pages));
	t->rows = malloc(3 * sizeof(*t->rows));
	CHECK(t->pages && t->rows);
	t->pages[0] = 0;
	t->pages[1] = 3;
	t->rows[0] = cprof_unwind_row(0x100, ia);
	t->rows[1] = cprof_unwind_row(0x104, ib);
	t->rows[2] = cprof_unwind_row(0x140, CPROF_RULE_NO_CFI);
	memset(id, 0, sizeof(*id));
	memset(id->build_id, seed, 20);
	id->build_id_len = 20;
	/* A file of root's that only root may write: one the store keeps. */
	id->file = (struct kept_source){.dev = 8,
					.ino = 100 + seed,
					.size = 4096 + seed,
					.mtime_ns = 1,
					.ctime_ns = 2,
					.mode = S_IFREG | 0755};
	return t;
}

/* The store's file for id in dir. */
static const char *table_path(const char *dir, const struct table_file_id *id)
{
	static char path[PATH_MAX + 2 * ELF_BUILD_ID_MAX + 32];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s/", dir);

	for (uint32_t i = 0; i < id->build_id_len; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", id->build_id[i]);
	snprintf(path + n, sizeof(path) - n, "-%016llx.utab",
		 (unsigned long long)kept_source__place(&id->file));
	return path;
}

static char *store_dir(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", test_tmp_dir(), name);
	return path;
}

TEST(table_store_keeps_a_table_and_refuses_damage)
{
	struct unwind_table_stats st = {.fdes = 2}, back_st;
	struct unwind_rules *rules, *other;
	struct table_store_stats ss;
	struct table_file_id id;
	struct unwind_table *t, *back;
	struct table_store *s;
	const char *dir = store_dir("store1/deeper");
	int fd;

	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(unwind_rules__new(&other), ==, 0);
	t = small_table(rules, 7, &id);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	CHECK_INT(table_store__load(s, &id, other, &back, &back_st), ==, -ENOENT);
	table_store__save(s, &id, t, rules, &st);
	CHECK_INT(table_store__load(s, &id, other, &back, &back_st), ==, 0);
	CHECK_INT(back->nrows, ==, 3);
	CHECK_U64(back_st.fdes, ==, 2);
	CHECK_INT(unwind_table__lookup(back, 0x10102), !=, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(back, 0x10150), ==, CPROF_RULE_NO_CFI);
	unwind_table__free(back);
	/* The file's last byte changed: refused, then written over. */
	fd = open(table_path(dir, &id), O_RDWR);
	CHECK(fd >= 0);
	CHECK(lseek(fd, -1, SEEK_END) > 0);
	CHECK_INT(write(fd, "\xff", 1), ==, 1);
	close(fd);
	CHECK_INT(table_store__load(s, &id, other, &back, &back_st), ==, -ENOENT);
	table_store__save(s, &id, t, rules, &st);
	CHECK_INT(table_store__load(s, &id, other, &back, &back_st), ==, 0);
	unwind_table__free(back);
	table_store__stats(s, &ss);
	CHECK_U64(ss.loaded, ==, 2);
	CHECK_U64(ss.saved, ==, 2);
	CHECK_U64(ss.refused, ==, 1);
	/* A file of no build ID is neither kept nor looked for. */
	id.build_id_len = 0;
	CHECK_INT(table_store__load(s, &id, other, &back, &back_st), ==, -ENOENT);
	table_store__free(s);
	table_store__free(NULL);
	unwind_table__free(t);
	unwind_rules__free(rules);
	unwind_rules__free(other);
}

TEST(table_store_not_in_a_directory_others_may_write)
{
	const char *dir = store_dir("store2");
	struct table_store *s;

	CHECK_INT(mkdir(dir, 0700), ==, 0);
	CHECK_INT(chmod(dir, 0777), ==, 0);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, -EPERM);
	CHECK(s == NULL);
	CHECK_INT(chmod(dir, 0700), ==, 0);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	table_store__free(s);
}

TEST(table_store_prunes_the_least_recently_used)
{
	const char *dir = store_dir("store3");
	struct unwind_table_stats st = {0};
	struct table_store_stats ss;
	struct table_file_id ids[6];
	struct unwind_table *t[6], *back;
	struct unwind_rules *rules;
	struct table_store *s;
	struct timespec when[2] = {{0}, {0}};
	struct stat sb;
	int i, kept = 0;

	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	for (i = 0; i < 6; i++) {
		t[i] = small_table(rules, (uint8_t)(i + 1), &ids[i]);
		table_store__save(s, &ids[i], t[i], rules, &st);
		/* Used an hour apart, the first the longest ago. */
		when[0].tv_sec = when[1].tv_sec = 1700000000 + 3600 * i;
		CHECK_INT(utimensat(AT_FDCWD, table_path(dir, &ids[i]), when, 0), ==, 0);
	}
	CHECK_INT(stat(table_path(dir, &ids[5]), &sb), ==, 0);
	table_store__free(s);
	/* Room for a little over two files: down to three quarters of it, the newest kept. */
	CHECK_INT(table_store__open(dir, (uint64_t)sb.st_size * 5 / 2, &s), ==, 0);
	table_store__stats(s, &ss);
	CHECK_U64(ss.pruned, ==, 5);
	for (i = 0; i < 6; i++) {
		if (!table_store__load(s, &ids[i], rules, &back, &st)) {
			kept |= 1 << i;
			unwind_table__free(back);
		}
		unwind_table__free(t[i]);
	}
	CHECK_INT(kept, ==, 1 << 5);
	table_store__free(s);
	unwind_rules__free(rules);
}

/*
 * Only for files no one else could have written: a file of another user's,
 * or one group or others may write, is neither kept nor read back; another
 * file of the same build ID, or the same one changed, does not get its table.
 */
TEST(table_store_keeps_only_the_very_file_of_a_trusted_owner)
{
	const char *dir = store_dir("store5");
	struct unwind_table_stats st = {0};
	struct table_file_id id, other;
	struct table_store_stats ss;
	struct unwind_table *t, *back;
	struct unwind_rules *rules;
	struct table_store *s;
	struct stat sb;

	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	t = small_table(rules, 9, &id);
	other = id;
	other.file.uid = 12345;
	table_store__save(s, &other, t, rules, &st);
	CHECK_INT(stat(table_path(dir, &other), &sb), ==, -1);
	other = id;
	other.file.mode |= S_IWOTH;
	table_store__save(s, &other, t, rules, &st);
	CHECK_INT(stat(table_path(dir, &other), &sb), ==, -1);
	other.file.mode ^= S_IWOTH | S_IWGRP;
	table_store__save(s, &other, t, rules, &st);
	CHECK_INT(stat(table_path(dir, &other), &sb), ==, -1);
	/* Kept for the genuine file; a file of another user's with its identity is refused. */
	table_store__save(s, &id, t, rules, &st);
	other = id;
	other.file.uid = 12345;
	CHECK_INT(table_store__load(s, &other, rules, &back, &st), ==, -ENOENT);
	other = id;
	other.file.ctime_ns++;
	CHECK_INT(table_store__load(s, &other, rules, &back, &st), ==, -ENOENT);
	other = id;
	other.file.mtime_ns++;
	CHECK_INT(table_store__load(s, &other, rules, &back, &st), ==, -ENOENT);
	CHECK_INT(table_store__load(s, &id, rules, &back, &st), ==, 0);
	unwind_table__free(back);
	table_store__stats(s, &ss);
	CHECK_U64(ss.foreign, ==, 1);
	CHECK_U64(ss.saved, ==, 1);
	CHECK_U64(ss.loaded, ==, 1);
	table_store__free(s);
	unwind_table__free(t);
	unwind_rules__free(rules);
}

/* The bytes of the files in dir. */
static uint64_t dir_bytes(const char *dir)
{
	char path[PATH_MAX + 256];
	uint64_t n = 0;
	struct dirent *d;
	struct stat sb;
	DIR *D = opendir(dir);

	CHECK(D);
	while ((d = readdir(D))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!stat(path, &sb) && S_ISREG(sb.st_mode))
			n += (uint64_t)sb.st_size;
	}
	closedir(D);
	return n;
}

/*
 * The cap holds while writing: a file past an eighth of it is not written,
 * and to write another the files used longest ago go first.
 */
TEST(table_store_holds_its_cap_while_writing)
{
	const char *dir = store_dir("store6");
	struct unwind_table_stats st = {0};
	struct table_file_id ids[12];
	struct table_store_stats ss;
	struct unwind_table *t, *back;
	struct unwind_rules *rules;
	struct timespec when[2] = {{0}, {0}};
	struct table_store *s;
	struct stat sb;
	uint64_t cap;
	int i;

	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	t = small_table(rules, 1, &ids[0]);
	table_store__save(s, &ids[0], t, rules, &st);
	CHECK_INT(stat(table_path(dir, &ids[0]), &sb), ==, 0);
	unwind_table__free(t);
	table_store__free(s);
	/* Room for eight files and a half: an eighth of it is a little over one. */
	cap = (uint64_t)sb.st_size * 17 / 2;
	CHECK_INT(table_store__open(dir, cap, &s), ==, 0);
	for (i = 0; i < 12; i++) {
		t = small_table(rules, (uint8_t)(i + 1), &ids[i]);
		table_store__save(s, &ids[i], t, rules, &st);
		unwind_table__free(t);
		CHECK(dir_bytes(dir) <= cap);
		/* Used an hour apart, the first the longest ago. */
		when[0].tv_sec = when[1].tv_sec = 1700000000 + 3600 * i;
		utimensat(AT_FDCWD, table_path(dir, &ids[i]), when, 0);
	}
	table_store__stats(s, &ss);
	CHECK_U64(ss.saved, ==, 12);
	CHECK(ss.pruned > 0);
	CHECK_U64(ss.capped, ==, 0);
	/* The newest is there; the first went. */
	CHECK_INT(table_store__load(s, &ids[11], rules, &back, &st), ==, 0);
	unwind_table__free(back);
	CHECK_INT(table_store__load(s, &ids[0], rules, &back, &st), ==, -ENOENT);
	table_store__free(s);
	/* A cap under eight files: one file is past an eighth of it, and not written. */
	CHECK_INT(table_store__open(dir, (uint64_t)sb.st_size * 7, &s), ==, 0);
	t = small_table(rules, 50, &ids[0]);
	table_store__save(s, &ids[0], t, rules, &st);
	unwind_table__free(t);
	CHECK_INT(stat(table_path(dir, &ids[0]), &sb), ==, -1);
	table_store__stats(s, &ss);
	CHECK_U64(ss.capped, ==, 1);
	CHECK_U64(ss.saved, ==, 0);
	table_store__free(s);
	unwind_rules__free(rules);
}

/* A second cache on the same store reads libc's table back: the same rows. */
TEST(table_cache_reads_back_from_the_store)
{
	const struct file_id libc = {8, 1, 4321, 0};
	struct table_cache *a, *b;
	struct cached_table *ta, *tb;
	struct table_cache_stats st;
	struct table_store *s;
	int fd = open(test_system_libc(), O_RDONLY);

	CHECK(fd >= 0);
	CHECK_INT(table_store__open(store_dir("store4"), 64 << 20, &s), ==, 0);
	CHECK_INT(table_cache__new(s, &a), ==, 0);
	CHECK_INT(table_cache__get(a, &libc, fd, &ta), ==, 0);
	CHECK_INT(table_cache__new(s, &b), ==, 0);
	CHECK_INT(table_cache__get(b, &libc, fd, &tb), ==, 0);
	table_cache__stats(b, &st);
	CHECK_U64(st.loaded, ==, 1);
	CHECK(ta->table && tb->table);
	CHECK_INT(ta->table->nrows, ==, tb->table->nrows);
	CHECK(!memcmp(ta->table->pages, tb->table->pages,
		      (ta->table->npages + 1) * sizeof(*ta->table->pages)));
	CHECK(!memcmp(&ta->stats, &tb->stats, sizeof(ta->stats)));
	table_cache__put(a, ta);
	table_cache__put(b, tb);
	table_cache__free(a);
	table_cache__free(b);
	table_store__free(s);
	close(fd);
}
