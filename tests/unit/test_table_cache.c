// SPDX-License-Identifier: MIT
/* One table per file identity, shared and counted; files without CFI remembered as such. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/load_budget.h"
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
