// SPDX-License-Identifier: MIT
/* One table per file identity, shared and counted; files without CFI remembered as such. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "test.h"
#include "unwind/table_cache.h"
#include "unwind/table_loader.h"

TEST(table_cache_builds_once_per_file)
{
	const struct file_id libc = {8, 1, 1234, 0}, other = {8, 1, 1234, 1};
	struct cached_table *a, *b, *c2;
	struct table_cache_stats st;
	struct table_cache *c;
	int fd = open(test_system_libc(), O_RDONLY);

	CHECK(fd >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	CHECK_INT(table_cache__get(c, &libc, fd, &a), ==, 0);
	CHECK(a->table != NULL && a->err == 0 && a->table->nrows > 1000);
	/* The same file again: the same table, not read. */
	CHECK_INT(table_cache__get(c, &libc, -1, &b), ==, 0);
	CHECK(a == b);
	/* Another inode generation is another file. */
	CHECK_INT(table_cache__get(c, &other, fd, &c2), ==, 0);
	CHECK(c2 != a && c2->table != NULL);
	table_cache__stats(c, &st);
	CHECK_U64(st.tables, ==, 2);
	CHECK_U64(st.built, ==, 2);
	CHECK_U64(st.bytes, ==, 2 * unwind_table__bytes(a->table));
	CHECK(unwind_rules__count(table_cache__rules(c)) > 10);

	CHECK(!table_cache__put(c, a));
	CHECK(table_cache__put(c, b));
	CHECK(table_cache__put(c, c2));
	table_cache__stats(c, &st);
	CHECK_U64(st.tables, ==, 0);
	CHECK_U64(st.bytes, ==, 0);
	table_cache__free(c);
	close(fd);
}

TEST(table_cache_remembers_files_without_cfi)
{
	const struct file_id id = {8, 1, 99, 0};
	const char *path = test_write_tmp("not_elf", "hello\n", 6);
	struct cached_table *t, *again;
	struct table_cache_stats st;
	struct table_cache *c;
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	CHECK_INT(table_cache__get(c, &id, fd, &t), ==, 0);
	CHECK(t->table == NULL);
	CHECK(t->err < 0);
	CHECK_INT(table_cache__get(c, &id, -1, &again), ==, 0);
	CHECK(again == t);
	table_cache__stats(c, &st);
	CHECK_U64(st.no_cfi, ==, 1);
	CHECK_U64(st.built, ==, 1);
	/* Freed with the cache, references or not. */
	table_cache__free(c);
	close(fd);
}

/* hostile_elf's file with a small .debug_frame, the section then claiming size bytes (0: not). */
static const char *claimed_frame(const char *name, uint64_t size)
{
	static char path[512];
	char cmd[1024];
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	int fd, i;

	snprintf(path, sizeof(path), "%s/%s", test_tmp_dir(), name);
	snprintf(cmd, sizeof(cmd), "%s cfi 4096 %s", test_build_fixture("hostile_elf"), path);
	CHECK_INT(system(cmd), ==, 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_INT(pread(fd, &eh, sizeof(eh), 0), ==, (ssize_t)sizeof(eh));
	for (i = 0; i < eh.e_shnum; i++) {
		off_t at = (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh));

		CHECK_INT(pread(fd, &sh, sizeof(sh), at), ==, (ssize_t)sizeof(sh));
		if (!size || sh.sh_type != SHT_PROGBITS || sh.sh_flags)
			continue;
		/* The section moves past the end, the file sparse up to it. */
		sh.sh_offset = (eh.e_shoff + eh.e_shnum * sizeof(sh) + 4095) & ~4095ull;
		sh.sh_size = size;
		CHECK_INT(ftruncate(fd, (off_t)(sh.sh_offset + size)), ==, 0);
		CHECK_INT(pwrite(fd, &sh, sizeof(sh), at), ==, (ssize_t)sizeof(sh));
	}
	close(fd);
	return path;
}

/* The table of the file at path, under budget b: whether it has one. */
static bool table_with_budget(const char *path, struct load_budget *b)
{
	const struct file_id id = {8, 1, 4242, 0};
	struct cached_table *t;
	struct table_cache *c;
	int fd = open(path, O_RDONLY);
	bool has;

	CHECK(fd >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	table_cache__set_budget(c, b);
	CHECK_INT(table_cache__get(c, &id, fd, &t), ==, 0);
	has = t->table != NULL;
	table_cache__put(c, t);
	table_cache__free(c);
	close(fd);
	return has;
}

TEST(table_cache_refuses_cfi_over_the_cap)
{
	struct load_budget b = {0};

	CHECK(table_with_budget(claimed_frame("under.so", 0), &b));
	CHECK_U64(b.cfi_refused, ==, 0);
	/* Refused from its header: the 64 MiB of zeros are never read. */
	CHECK(!table_with_budget(claimed_frame("over.so", LOAD_MAX_CFI_BYTES + 1), &b));
	CHECK_U64(b.cfi_refused, ==, 1);
	CHECK_U64(b.cfi_abandoned, ==, 0);
}

TEST(table_cache_builds_nothing_past_the_deadline)
{
	struct load_budget b = {.deadline_ns = 1};

	CHECK(!table_with_budget(test_system_libc(), &b));
	CHECK_U64(b.cfi_abandoned, ==, 1);
	CHECK_U64(b.cfi_refused, ==, 0);
}

/*
 * Off the loop (table_cache__load_off_loop): tables come back pending,
 * built on the loader's thread into a dictionary of their own and remapped
 * into the cache's when taken.
 */

/* Waits for the cache's fd (up to 20 s), then takes one table. */
static struct cached_table *take_one(struct table_cache *c)
{
	struct pollfd pfd = {.fd = table_cache__fd(c), .events = POLLIN};
	uint64_t until = clock__mono_ns() + 20000000000ull;
	struct cached_table *t;

	while (!(t = table_cache__take(c)) && clock__mono_ns() < until)
		poll(&pfd, 1, 100);
	return t;
}

/* Every address of t's rows has the same rule in both tables, by value. */
static void check_same_rules(const struct unwind_table *a, const struct unwind_rules *ra,
			     const struct unwind_table *b, const struct unwind_rules *rb)
{
	uint64_t addr;
	uint32_t i, ia, ib;

	CHECK_U64(a->nrows, ==, b->nrows);
	for (i = 0; i < a->npages; i++) {
		addr = a->base + ((uint64_t)i << CPROF_UNWIND_PAGE_SHIFT) + 0x123;
		ia = unwind_table__lookup(a, addr);
		ib = unwind_table__lookup(b, addr);
		CHECK(ia < unwind_rules__count(ra) && ib < unwind_rules__count(rb));
		CHECK(!memcmp(&unwind_rules__all(ra)[ia], &unwind_rules__all(rb)[ib],
			      sizeof(struct cprof_unwind_rule)));
	}
	for (i = 0; i < a->nrows; i++)
		CHECK(!memcmp(&unwind_rules__all(ra)[a->rows[i] >> CPROF_UNWIND_PAGE_SHIFT],
			      &unwind_rules__all(rb)[b->rows[i] >> CPROF_UNWIND_PAGE_SHIFT],
			      sizeof(struct cprof_unwind_rule)));
}

TEST(table_cache_builds_off_the_loop)
{
	const struct file_id a = {8, 1, 1, 0}, b = {8, 1, 2, 0};
	const char *other = test_build_fixture("nofp_gcc");
	struct cached_table *ta, *tb, *sa, *sb, *again;
	struct table_cache *c, *sync;
	struct table_cache_stats st;
	int fa = open(test_system_libc(), O_RDONLY), fb = open(other, O_RDONLY);

	CHECK(fa >= 0 && fb >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	CHECK_INT(table_cache__load_off_loop(c, 0), ==, 0);
	CHECK(table_cache__fd(c) >= 0);
	CHECK(!table_cache__take(c));
	/* The other file first: libc's rules are remapped into a dictionary that has some. */
	CHECK_INT(table_cache__get(c, &b, fb, &tb), ==, 0);
	CHECK(tb->pending && !tb->table);
	CHECK(take_one(c) == tb);
	CHECK(!tb->pending && tb->table);
	CHECK_INT(table_cache__get(c, &a, fa, &ta), ==, 0);
	/* Pending: the same entry to a second get, not another build. */
	CHECK_INT(table_cache__get(c, &a, -1, &again), ==, 0);
	CHECK(again == ta);
	table_cache__put(c, again);
	CHECK(take_one(c) == ta);
	CHECK(!ta->pending && ta->table && ta->table->nrows > 1000 && ta->nexec > 0);
	CHECK(!table_cache__take(c));
	table_cache__stats(c, &st);
	CHECK_U64(st.built, ==, 2);
	CHECK_U64(st.pending, ==, 0);
	CHECK_U64(st.bytes, ==, unwind_table__bytes(ta->table) + unwind_table__bytes(tb->table));

	/* The same tables built on this thread, in the other order: the same rules. */
	CHECK_INT(table_cache__new(NULL, &sync), ==, 0);
	CHECK_INT(table_cache__get(sync, &a, fa, &sa), ==, 0);
	CHECK_INT(table_cache__get(sync, &b, fb, &sb), ==, 0);
	check_same_rules(ta->table, table_cache__rules(c), sa->table, table_cache__rules(sync));
	check_same_rules(tb->table, table_cache__rules(c), sb->table, table_cache__rules(sync));
	CHECK_U64(unwind_rules__count(table_cache__rules(c)), ==,
		  unwind_rules__count(table_cache__rules(sync)));
	table_cache__free(sync);
	table_cache__free(c);
	close(fa);
	close(fb);
}

/* hostile_elf's file of 20 MB of CFI (4.8 million rows: seconds to build), made once. */
static const char *rows_file(void)
{
	static char path[512];
	char cmd[1024];

	if (path[0])
		return path;
	snprintf(path, sizeof(path), "%s/rows.so", test_tmp_dir());
	snprintf(cmd, sizeof(cmd), "%s cfi 20000000 %s", test_build_fixture("hostile_elf"), path);
	if (system(cmd) != 0)
		test_fail(__FILE__, __LINE__, "command failed: %s", cmd);
	return path;
}

TEST(table_cache_stop_ends_the_builds)
{
	const struct file_id big = {8, 1, 7, 0}, libc = {8, 1, 8, 0}, late = {8, 1, 9, 0};
	struct cached_table *tb, *tl, *tlate, *t;
	struct load_budget b = {0};
	struct table_cache_stats st;
	struct table_cache *c;
	int fb = open(rows_file(), O_RDONLY), fl = open(test_system_libc(), O_RDONLY);
	uint64_t t0;
	size_t left;

	CHECK(fb >= 0 && fl >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	table_cache__set_budget(c, &b);
	CHECK_INT(table_cache__load_off_loop(c, 0), ==, 0);
	CHECK_INT(table_cache__get(c, &big, fb, &tb), ==, 0);
	/* A small file is not held up behind the large one (another thread). */
	CHECK_INT(table_cache__get(c, &libc, fl, &tl), ==, 0);
	CHECK(take_one(c) == tl && tl->table);
	CHECK(tb->pending);
	/* The large one ends at its next look at the clock, well within the wait. */
	t0 = clock__mono_ns();
	left = table_cache__stop(c, t0 + TABLE_LOADER_STOP_NS * 10);
	CHECK_U64(left, ==, 0);
	CHECK(clock__mono_ns() - t0 < TABLE_LOADER_STOP_NS * 10);
	CHECK(take_one(c) == tb);
	CHECK(!tb->pending && !tb->table && tb->err == -ETIME);
	CHECK_U64(b.cfi_abandoned, ==, 1);
	/* After the end, nothing is built: the file is as one abandoned. */
	CHECK_INT(table_cache__get(c, &late, fl, &tlate), ==, 0);
	CHECK(tlate->pending);
	t = take_one(c);
	CHECK(t == tlate && !tlate->table && tlate->err == -ETIME);
	CHECK_U64(b.cfi_abandoned, ==, 2);
	table_cache__stats(c, &st);
	CHECK_U64(st.pending, ==, 0);
	CHECK_U64(st.left_behind, ==, 0);
	table_cache__free(c);
	close(fb);
	close(fl);
}

TEST(table_cache_lets_go_of_pending_tables)
{
	const struct file_id a = {8, 1, 11, 0}, big = {8, 1, 12, 0};
	struct cached_table *ta, *tb;
	struct table_cache_stats st;
	struct table_cache *c;
	struct pollfd pfd;
	int fa = open(test_system_libc(), O_RDONLY), fb = open(rows_file(), O_RDONLY);
	uint64_t t0;

	CHECK(fa >= 0 && fb >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	CHECK_INT(table_cache__load_off_loop(c, 0), ==, 0);
	pfd = (struct pollfd){.fd = table_cache__fd(c), .events = POLLIN};
	/* Let go while pending: its build ends unseen (no entry handed back). */
	CHECK_INT(table_cache__get(c, &a, fa, &ta), ==, 0);
	CHECK(table_cache__put(c, ta));
	CHECK_INT(table_cache__get(c, &big, fb, &tb), ==, 0);
	/* libc's build ends first (another thread): taken, it frees the entry and hands none. */
	for (t0 = clock__mono_ns(); clock__mono_ns() - t0 < 20000000000ull;) {
		CHECK(!table_cache__take(c));
		table_cache__stats(c, &st);
		if (st.pending == 1)
			break;
		poll(&pfd, 1, 100);
	}
	CHECK_U64(st.pending, ==, 1);
	CHECK_U64(st.tables, ==, 1);
	CHECK(tb->pending);
	/* Freed with a build under way: it is stopped, and nothing leaks. */
	table_cache__free(c);
	close(fa);
	close(fb);
}

TEST(table_cache_builds_cheap_files_on_the_caller_thread)
{
	const struct file_id libc = {8, 1, 21, 0}, big = {8, 1, 22, 0};
	struct cached_table *tl, *tb;
	struct table_cache *c;
	int fl = open(test_system_libc(), O_RDONLY), fb = open(rows_file(), O_RDONLY);

	CHECK(fl >= 0 && fb >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	CHECK_INT(table_cache__load_off_loop(c, TABLE_CACHE_SYNC_CFI_BYTES), ==, 0);
	/* libc's 0.3 MB: built at once, as without the loader. */
	CHECK_INT(table_cache__get(c, &libc, fl, &tl), ==, 0);
	CHECK(!tl->pending && tl->table);
	/* 20 MB: to the loader. */
	CHECK_INT(table_cache__get(c, &big, fb, &tb), ==, 0);
	CHECK(tb->pending);
	table_cache__free(c);
	close(fl);
	close(fb);
}
