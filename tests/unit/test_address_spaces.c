// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "resolve/address_spaces.h"
#include "test.h"

static int freed;

static void free_priv(void *priv)
{
	freed += priv != NULL;
	free(priv);
}

static struct address_spaces *spaces(void)
{
	struct address_spaces *as;

	freed = 0;
	CHECK_INT(address_spaces__new(free_priv, &as), ==, 0);
	return as;
}

static void add_code(struct space *sp, uint64_t start, const char *path)
{
	struct proc_map m = {
		.start = start,
		.end = start + 0x1000,
		.perms = PROC_MAP_READ | PROC_MAP_EXEC,
		.kind = PROC_MAP_FILE,
		.path = path,
	};

	CHECK_INT(mapping_table__own(&sp->maps), ==, 0);
	CHECK(mapping_table__insert(sp->maps, &m));
}

TEST(address_spaces_exec_begins_an_empty_space)
{
	struct address_spaces *as = spaces();
	struct space *sh, *prog;

	sh = address_spaces__begin(as, 10, 0, "sh", NULL);
	add_code(sh, 0x1000, "/bin/sh");
	prog = address_spaces__begin(as, 10, 500, "prog", NULL);
	CHECK(prog && prog != sh);
	CHECK_INT(mapping_table__count(prog->maps), ==, 0);
	CHECK_U64(sh->end, ==, 500);
	CHECK_U64(prog->end, ==, UINT64_MAX);
	/* A sample stamped with the exec's time (a little after the record's) is the new program's.
	 */
	CHECK(address_spaces__at(as, 10, 0) == sh);
	CHECK(address_spaces__at(as, 10, 499) == sh);
	CHECK(address_spaces__at(as, 10, 510) == prog);
	CHECK_STR(address_spaces__at(as, 10, 510)->comm, "prog");
	CHECK(address_spaces__latest(as, 10) == prog);
	CHECK(!address_spaces__at(as, 11, 510));
	address_spaces__free(as);
}

TEST(address_spaces_fork_copies_the_parent)
{
	struct address_spaces *as = spaces();
	struct space *parent, *child;

	parent = address_spaces__begin(as, 1, 0, "make", NULL);
	add_code(parent, 0x1000, "/usr/bin/make");
	child = address_spaces__begin(as, 2, 100, parent->comm, parent);
	CHECK_STR(child->comm, "make");
	CHECK_INT(mapping_table__count(child->maps), ==, 1);
	/* Later mappings of either are their own. */
	add_code(parent, 0x5000, "/lib/plugin.so");
	CHECK(!mapping_table__find(child->maps, 0x5000));
	CHECK(mapping_table__find(parent->maps, 0x5000));
	address_spaces__free(as);
}

TEST(address_spaces_late_record_lands_in_time_order)
{
	struct address_spaces *as = spaces();
	struct space *a, *b, *c;

	a = address_spaces__begin(as, 5, 100, "a", NULL);
	c = address_spaces__begin(as, 5, 300, "c", NULL);
	b = address_spaces__begin(as, 5, 200, "b", NULL);
	CHECK_U64(a->end, ==, 200);
	CHECK_U64(b->end, ==, 300);
	CHECK_U64(c->end, ==, UINT64_MAX);
	CHECK(address_spaces__at(as, 5, 250) == b);
	CHECK(address_spaces__latest(as, 5) == c);
	address_spaces__free(as);
}

TEST(address_spaces_reused_pid_keeps_both)
{
	struct address_spaces *as = spaces();
	struct space *old, *reused;

	old = address_spaces__begin(as, 7, 100, "old", NULL);
	address_spaces__exit(as, 7, 150);
	reused = address_spaces__begin(as, 7, 400, "new", NULL);
	CHECK_U64(old->end, ==, 150);
	CHECK(address_spaces__at(as, 7, 120) == old);
	CHECK(address_spaces__at(as, 7, 410) == reused);
	address_spaces__free(as);
}

TEST(address_spaces_forget_frees_only_what_ended_before)
{
	struct address_spaces *as = spaces();
	struct space *sp;
	size_t pos = 0, idx = 0, n = 0;

	sp = address_spaces__begin(as, 1, 0, "sh", NULL);
	sp->priv = malloc(1);
	sp = address_spaces__begin(as, 1, 100, "prog", NULL);
	sp->priv = malloc(1);
	sp = address_spaces__begin(as, 2, 50, "short", NULL);
	sp->priv = malloc(1);
	address_spaces__exit(as, 2, 80);
	address_spaces__begin(as, 3, 60, "long", NULL);
	CHECK_INT(address_spaces__count(as), ==, 4);
	CHECK_INT(address_spaces__forget(as, 90), ==, 1);
	CHECK_INT(freed, ==, 1);
	CHECK(!address_spaces__latest(as, 2));
	CHECK_INT(address_spaces__forget(as, 1000), ==, 1);
	CHECK_INT(freed, ==, 2);
	CHECK_STR(address_spaces__latest(as, 1)->comm, "prog");
	CHECK(!address_spaces__at(as, 1, 0));
	while (address_spaces__next(as, &pos, &idx))
		n++;
	CHECK_INT(n, ==, 2);
	CHECK_INT(address_spaces__count(as), ==, 2);
	address_spaces__free(as);
	CHECK_INT(freed, ==, 3);
}

TEST(address_spaces_iteration_visits_each_once)
{
	struct address_spaces *as = spaces();
	struct space *sp;
	size_t pos = 0, idx = 0, n = 0;
	uint64_t sum = 0;
	uint32_t pid;

	for (pid = 1; pid <= 300; pid++) {
		address_spaces__begin(as, pid, 0, "a", NULL);
		if (pid % 3 == 0)
			address_spaces__begin(as, pid, 10, "b", NULL);
	}
	while ((sp = address_spaces__next(as, &pos, &idx))) {
		n++;
		sum += sp->pid * 1000 + sp->start;
	}
	CHECK_INT(n, ==, 400);
	CHECK_U64(sum, ==, 1000ull * (300 * 301 / 2 + 3 * (100 * 101 / 2)) + 100 * 10);
	address_spaces__free(as);
}
