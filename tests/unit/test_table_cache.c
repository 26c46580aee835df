// SPDX-License-Identifier: MIT
/* One table per file identity, shared and counted; files without CFI remembered as such. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "test.h"
#include "unwind/table_cache.h"

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
