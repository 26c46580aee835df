// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>

#include "resolve/mapping_table.h"
#include "test.h"

static struct proc_map code(uint64_t start, uint64_t end, uint64_t offset, const char *path)
{
	return (struct proc_map){
		.start = start,
		.end = end,
		.offset = offset,
		.perms = PROC_MAP_READ | PROC_MAP_EXEC | PROC_MAP_PRIVATE,
		.kind = path ? PROC_MAP_FILE : PROC_MAP_ANON,
		.path = path,
	};
}

/* "start-end:offset:path" of every entry, joined by spaces. */
static const char *layout(struct mapping_table *t)
{
	static char buf[1024];
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < mapping_table__count(t); i++) {
		const struct proc_map *m = &mapping_table__get(t, i)->map;

		off += snprintf(buf + off, sizeof(buf) - off, "%s%llx-%llx:%llx:%s", i ? " " : "",
				(unsigned long long)m->start, (unsigned long long)m->end,
				(unsigned long long)m->offset, m->path ? m->path : "-");
	}
	return buf;
}

static struct mapping_table *table_of(void)
{
	struct mapping_table *t;
	struct proc_map a = code(0x1000, 0x3000, 0, "/a"), b = code(0x5000, 0x9000, 0x100, "/b");

	CHECK_INT(mapping_table__new(&t), ==, 0);
	CHECK(mapping_table__insert(t, &b));
	CHECK(mapping_table__insert(t, &a));
	return t;
}

TEST(mapping_table_sorted_and_found)
{
	struct mapping_table *t = table_of();

	CHECK_STR(layout(t), "1000-3000:0:/a 5000-9000:100:/b");
	CHECK(!mapping_table__find(t, 0xfff));
	CHECK_STR(mapping_table__find(t, 0x1000)->map.path, "/a");
	CHECK_STR(mapping_table__find(t, 0x2fff)->map.path, "/a");
	CHECK(!mapping_table__find(t, 0x3000));
	CHECK(!mapping_table__find(t, 0x4fff));
	CHECK_STR(mapping_table__find(t, 0x8fff)->map.path, "/b");
	CHECK(!mapping_table__find(t, 0x9000));
	mapping_table__free(t);
}

TEST(mapping_table_new_mapping_replaces_what_it_covers)
{
	struct mapping_table *t = table_of();
	struct proc_map c = code(0x0, 0x4000, 0x40, "/c");

	CHECK(mapping_table__insert(t, &c));
	CHECK_STR(layout(t), "0-4000:40:/c 5000-9000:100:/b");
	mapping_table__free(t);
}

TEST(mapping_table_partial_overlaps_cut_back)
{
	struct mapping_table *t = table_of();
	struct proc_map c = code(0x2000, 0x6000, 0, "/c");

	CHECK(mapping_table__insert(t, &c));
	/* The file offset of what is left of /b moves with its start. */
	CHECK_STR(layout(t), "1000-2000:0:/a 2000-6000:0:/c 6000-9000:1100:/b");
	mapping_table__free(t);
}

TEST(mapping_table_mapping_inside_another_splits_it)
{
	struct mapping_table *t = table_of();
	struct proc_map c = code(0x6000, 0x7000, 0, NULL);

	CHECK(mapping_table__insert(t, &c));
	CHECK_STR(layout(t), "1000-3000:0:/a 5000-6000:100:/b 6000-7000:0:- 7000-9000:2100:/b");
	/* The split halves own their paths: freeing the table frees each once (ASan). */
	mapping_table__free(t);
}

TEST(mapping_table_same_range_again_is_replaced)
{
	struct mapping_table *t = table_of();
	struct proc_map c = code(0x5000, 0x9000, 0x200, "/c");

	CHECK(mapping_table__insert(t, &c));
	CHECK_STR(layout(t), "1000-3000:0:/a 5000-9000:200:/c");
	mapping_table__free(t);
}

TEST(mapping_table_empty_range_refused)
{
	struct mapping_table *t = table_of();
	struct proc_map c = code(0x5000, 0x5000, 0, "/c");

	CHECK(!mapping_table__insert(t, &c));
	CHECK_STR(layout(t), "1000-3000:0:/a 5000-9000:100:/b");
	mapping_table__free(t);
}

TEST(mapping_table_clone_is_independent)
{
	struct mapping_table *t = table_of(), *c;
	struct proc_map d = code(0x1000, 0x9000, 0, "/d");

	mapping_table__get(t, 0)->module_id = 7;
	CHECK_INT(mapping_table__clone(t, &c), ==, 0);
	CHECK(mapping_table__insert(t, &d));
	CHECK_STR(layout(t), "1000-9000:0:/d");
	mapping_table__free(t);
	CHECK_STR(layout(c), "1000-3000:0:/a 5000-9000:100:/b");
	CHECK_INT(mapping_table__get(c, 0)->module_id, ==, 7);
	mapping_table__free(c);
}

TEST(mapping_table_random_inserts_match_a_page_map)
{
	/* Every page remembers the last mapping inserted over it: the table must agree. */
	enum { PAGES = 64, ROUNDS = 3000 };
	int owner[PAGES], first[ROUNDS];
	char names[ROUNDS][8];
	struct mapping_table *t;
	unsigned int seed = 7;
	int r, p;

	for (p = 0; p < PAGES; p++)
		owner[p] = -1;
	CHECK_INT(mapping_table__new(&t), ==, 0);
	for (r = 0; r < ROUNDS; r++) {
		int a = rand_r(&seed) % PAGES, len = 1 + rand_r(&seed) % 8;
		int b = a + len > PAGES ? PAGES : a + len;
		struct proc_map m = code(a * 0x1000ull, b * 0x1000ull, (uint64_t)r << 20, names[r]);

		snprintf(names[r], sizeof(names[r]), "%d", r);
		first[r] = a;
		CHECK(mapping_table__insert(t, &m));
		for (p = a; p < b; p++)
			owner[p] = r;
	}
	for (p = 0; p < PAGES; p++) {
		struct mapping *m = mapping_table__find(t, p * 0x1000ull + 0x800);

		if (owner[p] < 0) {
			CHECK(!m);
			continue;
		}
		CHECK(m);
		CHECK_INT(atoi(m->map.path), ==, owner[p]);
		/* Cut or split, a mapping keeps each page at its file offset. */
		CHECK_U64(m->map.offset + (p * 0x1000ull - m->map.start), ==,
			  ((uint64_t)owner[p] << 20) + (uint64_t)(p - first[owner[p]]) * 0x1000);
	}
	for (p = 1; p < (int)mapping_table__count(t); p++)
		CHECK(mapping_table__get(t, p - 1)->map.end <= mapping_table__get(t, p)->map.start);
	mapping_table__free(t);
}

TEST(mapping_table_shared_until_owned)
{
	struct mapping_table *t = table_of(), *child = mapping_table__share(t), *before = child;
	struct proc_map d = code(0x20000, 0x21000, 0, "/plugin");

	/* The parent owns a share too: it is copied as well when it maps more. */
	CHECK_INT(mapping_table__own(&child), ==, 0);
	CHECK(child != before);
	CHECK(mapping_table__insert(child, &d));
	CHECK_STR(layout(t), "1000-3000:0:/a 5000-9000:100:/b");
	CHECK_STR(layout(child), "1000-3000:0:/a 5000-9000:100:/b 20000-21000:0:/plugin");
	/* Alone now, the parent needs no copy. */
	before = t;
	CHECK_INT(mapping_table__own(&t), ==, 0);
	CHECK(t == before);
	mapping_table__free(child);
	mapping_table__free(t);
}
