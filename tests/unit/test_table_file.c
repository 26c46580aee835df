// SPDX-License-Identifier: MIT
/*
 * Unwind tables as the table store keeps them (table_file.h): libc's table
 * read back into another run's rule dictionary gives the same rule at every
 * address; an image of another version, file or size, a truncated one and
 * one with any byte changed are refused; so are rows and rules that do not
 * hold together, even with a checksum that matches.
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwind/elf_cfi.h"
#include "unwind/table_file.h"

#define VERSION "test-builder"

struct built {
	struct unwind_rules *rules;
	struct unwind_table *t;
	struct unwind_table_stats stats;
	struct table_file_id id;
};

static void build_libc(struct built *b)
{
	struct unwind_sources src;
	struct elf_cfi cfi;
	int fd = open(test_system_libc(), O_RDONLY);
	Elf *elf;

	CHECK(fd >= 0);
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf);
	CHECK_INT(elf_cfi__read(elf, &cfi), ==, 0);
	elf_cfi__sources(&cfi, NULL, &src);
	CHECK_INT(unwind_rules__new(&b->rules), ==, 0);
	CHECK_INT(unwind_table__build(&src, b->rules, &b->t, &b->stats), ==, 0);
	memset(&b->id, 0, sizeof(b->id));
	b->id.build_id_len =
		(uint32_t)elf_build_id(elf, (uint64_t)lseek(fd, 0, SEEK_END), b->id.build_id);
	b->id.file.size = (uint64_t)lseek(fd, 0, SEEK_END);
	CHECK(b->id.build_id_len > 0);
	elf_end(elf);
	close(fd);
}

static void free_built(struct built *b)
{
	unwind_table__free(b->t);
	unwind_rules__free(b->rules);
}

/* Decodes a copy of img into a fresh dictionary. */
static int decode(const void *img, size_t len, const struct table_file_id *id,
		  struct unwind_table **t)
{
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	void *copy = malloc(len ? len : 1);
	int err;

	CHECK(copy);
	memcpy(copy, img, len);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	err = table_file__decode(copy, len, id, VERSION, rules, t, &st);
	if (!err)
		unwind_table__free(*t);
	*t = NULL;
	unwind_rules__free(rules);
	free(copy);
	return err;
}

TEST(table_file_round_trip_same_rules_everywhere)
{
	struct unwind_table_stats st;
	struct unwind_rules *other;
	struct unwind_table *back;
	struct built b;
	const struct cprof_unwind_rule *ra, *rb;
	uint64_t addr, end;
	size_t len;
	void *img;

	build_libc(&b);
	CHECK_INT(table_file__encode(b.t, b.rules, &b.stats, &b.id, VERSION, &img, &len), ==, 0);
	/* Another run's dictionary, which numbers rules otherwise. */
	CHECK_INT(unwind_rules__new(&other), ==, 0);
	{
		struct cprof_unwind_rule odd = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 4088};
		uint32_t id;

		CHECK_INT(unwind_rules__id(other, &odd, &id), ==, 0);
	}
	CHECK_INT(table_file__decode(img, len, &b.id, VERSION, other, &back, &st), ==, 0);
	CHECK(!memcmp(&st, &b.stats, sizeof(st)));
	CHECK_U64(back->base, ==, b.t->base);
	CHECK_INT(back->npages, ==, b.t->npages);
	CHECK_INT(back->nrows, ==, b.t->nrows);
	CHECK(!memcmp(back->pages, b.t->pages, (b.t->npages + 1) * sizeof(*back->pages)));
	ra = unwind_rules__all(b.rules);
	rb = unwind_rules__all(other);
	end = b.t->base + ((uint64_t)b.t->npages << CPROF_UNWIND_PAGE_SHIFT);
	for (addr = b.t->base; addr < end; addr += 7)
		CHECK(!memcmp(&ra[unwind_table__lookup(b.t, addr)],
			      &rb[unwind_table__lookup(back, addr)], sizeof(*ra)));
	unwind_table__free(back);
	unwind_rules__free(other);
	free(img);
	free_built(&b);
}

TEST(table_file_refuses_other_files_versions_and_damage)
{
	struct table_file_id other;
	struct unwind_table *t;
	char version[TABLE_FILE_VERSION_LEN];
	uint8_t *img;
	struct built b;
	size_t len, i;

	build_libc(&b);
	CHECK_INT(table_file__encode(b.t, b.rules, &b.stats, &b.id, VERSION, (void **)&img, &len),
		  ==, 0);
	CHECK_INT(decode(img, len, &b.id, &t), ==, 0);
	CHECK_INT(table_file__describe(img, len, &other, version), ==, 0);
	CHECK_STR(version, VERSION);
	CHECK(!memcmp(&other, &b.id, sizeof(other)));
	/* Another build ID, another size. */
	other.build_id[0] ^= 1;
	CHECK_INT(decode(img, len, &other, &t), ==, -EINVAL);
	other = b.id;
	other.file.size++;
	CHECK_INT(decode(img, len, &other, &t), ==, -EINVAL);
	/* The same build ID and size, but another file, or this one changed since. */
	other = b.id;
	other.file.ino++;
	CHECK_INT(decode(img, len, &other, &t), ==, -EINVAL);
	other = b.id;
	other.file.ctime_ns++;
	CHECK_INT(decode(img, len, &other, &t), ==, -EINVAL);
	/* Cut anywhere. */
	for (i = 0; i < len; i += 1 + i / 8)
		CHECK_INT(decode(img, i, &b.id, &t), ==, -EINVAL);
	/* Any byte changed: the header's checks or the checksum. */
	for (i = 0; i < len; i += 1 + i / 16) {
		img[i] ^= 0x40;
		CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
		img[i] ^= 0x40;
	}
	CHECK_INT(decode(img, len, &b.id, &t), ==, 0);
	free(img);
	free_built(&b);
}

/* Rules the image holds: the distinct ones its rows name, "no CFI" aside (as encode counts). */
static size_t rules_named(const struct unwind_table *t)
{
	static uint8_t seen[1u << 16];
	size_t i, n = 0;
	uint32_t id;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < t->nrows; i++) {
		id = t->rows[i] >> CPROF_UNWIND_PAGE_SHIFT;
		if (id != CPROF_RULE_NO_CFI && !seen[id]) {
			seen[id] = 1;
			n++;
		}
	}
	return n;
}

/* Damage made to hold a matching checksum: the structure's own checks refuse it. */
TEST(table_file_refuses_rows_and_rules_that_do_not_hold)
{
	struct cprof_unwind_rule *rules;
	uint32_t *pages, *rows, keep[2];
	struct unwind_table *t;
	struct built b;
	uint8_t *img;
	size_t len, p, i;

	build_libc(&b);
	CHECK_INT(table_file__encode(b.t, b.rules, &b.stats, &b.id, VERSION, (void **)&img, &len),
		  ==, 0);
	/* The image ends with the page index, the rows and the rules. */
	rules = (struct cprof_unwind_rule *)(img + len) - rules_named(b.t);
	rows = (uint32_t *)rules - b.t->nrows;
	pages = rows - (b.t->npages + 1);
	CHECK_U64(pages[b.t->npages], ==, b.t->nrows);
	CHECK(!memcmp(pages, b.t->pages, (b.t->npages + 1) * sizeof(*pages)));

	/* A page index going backwards. */
	pages[1] ^= 0x80000000u;
	table_file__seal(img, len);
	CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
	pages[1] ^= 0x80000000u;
	/* A row naming a rule the file does not have. */
	rows[3] |= 0xffffu << CPROF_UNWIND_PAGE_SHIFT;
	table_file__seal(img, len);
	CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
	rows[3] &= CPROF_UNWIND_PAGE_MASK; /* "no CFI": a rule every image has */
	/* Two rows of a page out of order. */
	for (p = 0; p < b.t->npages && pages[p + 1] - pages[p] < 2; p++)
		;
	CHECK(p < b.t->npages);
	i = pages[p];
	memcpy(keep, &rows[i], sizeof(keep));
	rows[i] |= CPROF_UNWIND_PAGE_MASK;
	rows[i + 1] &= ~(uint32_t)CPROF_UNWIND_PAGE_MASK;
	table_file__seal(img, len);
	CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
	memcpy(&rows[i], keep, sizeof(keep));
	/* A rule of a kind the unwinder does not know. */
	rules[0].cfa_kind = CPROF_CFA_REG_DEREF + 1;
	table_file__seal(img, len);
	CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
	/* A CFA in a register the walk does not keep. */
	rules[0].cfa_kind = CPROF_CFA_REG;
	rules[0].cfa_reg = CPROF_GREGS;
	table_file__seal(img, len);
	CHECK_INT(decode(img, len, &b.id, &t), ==, -EINVAL);
	free(img);
	free_built(&b);
}
