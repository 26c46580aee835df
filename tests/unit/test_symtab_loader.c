// SPDX-License-Identifier: MIT
/*
 * The symbol loader (resolve/symtab_loader.h): files posted are loaded on
 * its threads and handed back; a small file is not held up behind a large
 * one; a wait ends at its deadline; stopping ends the loads under way and
 * those not begun, counted as abandoned; freeing with loads pending hands
 * the files back unloaded. The files are hostile_elf's, of n real symbols.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "resolve/elf_symtab.h"
#include "resolve/symtab_loader.h"
#include "test.h"

/* Large enough to load for a good part of a second, even unsanitized on a fast machine. */
#define LARGE_SYMBOLS 1000000

/* A file of n function symbols, written once per test process under name. */
static const char *symbols_file(const char *name, size_t n)
{
	static char paths[4][512];
	static int next;
	char *path = paths[next++ % 4], cmd[1024];

	snprintf(path, sizeof(paths[0]), "%s/%s", test_tmp_dir(), name);
	snprintf(cmd, sizeof(cmd), "%s symtab %zu %s", test_build_fixture("hostile_elf"), n, path);
	if (system(cmd) != 0)
		test_fail(__FILE__, __LINE__, "command failed: %s", cmd);
	return path;
}

static struct elf_symtab *open_file(const char *path, struct load_budget *b)
{
	struct elf_symtab *e = NULL;

	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	elf_symtab__set_budget(e, b);
	return e;
}

static uint64_t ms_from_now(uint64_t ms)
{
	return clock__mono_ns() + ms * 1000000ull;
}

TEST(symtab_loader_loads_and_hands_back)
{
	struct load_budget b = {0};
	struct elf_symtab *e = open_file(symbols_file("small.so", 1000), &b);
	struct symtab_loader *l;
	int owner;

	CHECK_INT(symtab_loader__new(&l), ==, 0);
	CHECK(!symtab_loader__take(l));
	CHECK_INT(symtab_loader__post(l, e, &owner), ==, 0);
	CHECK_INT(symtab_loader__pending(l), ==, 1);
	CHECK(symtab_loader__wait(l, UINT64_MAX));
	CHECK(symtab_loader__take(l) == &owner);
	CHECK(!symtab_loader__take(l));
	CHECK_INT(symtab_loader__pending(l), ==, 0);
	/* Back with us, loaded: a lookup reads no file. */
	CHECK(elf_symtab__loaded(e));
	CHECK(!elf_symtab__holds_file(e));
	CHECK_INT(elf_symtab__symbol_count(e), ==, 1000);
	CHECK_U64(b.symtabs_abandoned, ==, 0);
	symtab_loader__free(l);
	elf_symtab__free(e);
}

/* A file of many symbols loads on a thread of its own: a small one posted after it is not behind
 * it. */
TEST(symtab_loader_small_files_pass_large_ones)
{
	struct load_budget b = {0};
	struct elf_symtab *large = open_file(symbols_file("large.so", LARGE_SYMBOLS), &b);
	struct elf_symtab *small = open_file(symbols_file("small.so", 1000), &b);
	struct symtab_loader *l;
	int large_owner, small_owner;
	void *first;

	CHECK_U64(elf_symtab__symbols_claimed(large), >, SYMTAB_LOADER_LARGE);
	CHECK_U64(elf_symtab__symbols_claimed(small), <=, SYMTAB_LOADER_LARGE);
	CHECK_INT(symtab_loader__new(&l), ==, 0);
	CHECK_INT(symtab_loader__post(l, large, &large_owner), ==, 0);
	CHECK_INT(symtab_loader__post(l, small, &small_owner), ==, 0);
	/* The first handed back is the small one (no time assumed: a busy machine is slow). */
	while (!(first = symtab_loader__take(l)))
		usleep(1000);
	CHECK(first == &small_owner);
	CHECK_INT(elf_symtab__symbol_count(small), ==, 1000);
	CHECK(symtab_loader__wait(l, UINT64_MAX));
	CHECK(symtab_loader__take(l) == &large_owner);
	CHECK_INT(elf_symtab__symbol_count(large), ==, LARGE_SYMBOLS);
	symtab_loader__free(l);
	elf_symtab__free(large);
	elf_symtab__free(small);
}

/*
 * Past a wait's deadline the load goes on; stopped, it ends at its next
 * look at the clock, as do those not begun: each counted as abandoned,
 * its table empty, its file closed.
 */
TEST(symtab_loader_stop_abandons_what_is_left)
{
	struct load_budget b = {0};
	const char *path = symbols_file("large.so", LARGE_SYMBOLS);
	struct elf_symtab *e[3] = {open_file(path, &b), open_file(path, &b), open_file(path, &b)};
	struct symtab_loader *l;
	uint64_t t0;
	size_t i;

	CHECK_INT(symtab_loader__new(&l), ==, 0);
	for (i = 0; i < 3; i++)
		CHECK_INT(symtab_loader__post(l, e[i], e[i]), ==, 0);
	t0 = clock__mono_ns();
	CHECK(!symtab_loader__wait(l, ms_from_now(50)));
	CHECK_U64(clock__mono_ns() - t0, >=, 50000000ull);
	CHECK_INT(symtab_loader__stop(l, UINT64_MAX), ==, 0);
	CHECK(symtab_loader__wait(l, 0));
	for (i = 0; i < 3; i++) {
		void *owner = symtab_loader__take(l);

		CHECK(owner);
		CHECK(elf_symtab__loaded(owner));
		CHECK(!elf_symtab__holds_file(owner));
		CHECK_INT(elf_symtab__symbol_count(owner), ==, 0);
	}
	CHECK(!symtab_loader__take(l));
	CHECK_U64(b.symtabs_abandoned, ==, 3);
	/* Stopped for good: a later post ends at once, unloaded. */
	{
		struct elf_symtab *late = open_file(path, &b);

		CHECK_INT(symtab_loader__post(l, late, late), ==, 0);
		CHECK(symtab_loader__wait(l, UINT64_MAX));
		CHECK(symtab_loader__take(l) == late);
		CHECK_INT(elf_symtab__symbol_count(late), ==, 0);
		CHECK_U64(b.symtabs_abandoned, ==, 4);
		elf_symtab__free(late);
	}
	symtab_loader__free(l);
	for (i = 0; i < 3; i++)
		elf_symtab__free(e[i]);
}

/* The budget's deadline ends a load on the loader's thread as on the caller's. */
TEST(symtab_loader_budget_deadline_ends_loads)
{
	struct load_budget b = {0};
	struct elf_symtab *e = open_file(symbols_file("large.so", LARGE_SYMBOLS), &b);
	struct symtab_loader *l;
	uint64_t t0;

	CHECK_INT(symtab_loader__new(&l), ==, 0);
	CHECK_INT(symtab_loader__post(l, e, e), ==, 0);
	t0 = clock__mono_ns();
	load_budget__end_by(&b, t0 + 20000000ull);
	CHECK(symtab_loader__wait(l, UINT64_MAX));
	CHECK(symtab_loader__take(l) == e);
	CHECK_INT(elf_symtab__symbol_count(e), ==, 0);
	CHECK_U64(b.symtabs_abandoned, ==, 1);
	symtab_loader__free(l);
	elf_symtab__free(e);
}

/* Freed with loads queued and under way: they end, and the files are the caller's to free. */
TEST(symtab_loader_free_with_loads_pending)
{
	struct load_budget b = {0};
	const char *large = symbols_file("large.so", LARGE_SYMBOLS);
	const char *small = symbols_file("small.so", 1000);
	struct elf_symtab *e[4] = {open_file(large, &b), open_file(large, &b), open_file(small, &b),
				   open_file(small, &b)};
	struct symtab_loader *l;
	size_t i;

	CHECK_INT(symtab_loader__new(&l), ==, 0);
	for (i = 0; i < 4; i++)
		CHECK_INT(symtab_loader__post(l, e[i], e[i]), ==, 0);
	symtab_loader__free(l);
	/* The large ones had no time: abandoned. */
	CHECK_U64(b.symtabs_abandoned, >=, 2);
	CHECK_INT(elf_symtab__symbol_count(e[0]), ==, 0);
	CHECK_INT(elf_symtab__symbol_count(e[1]), ==, 0);
	for (i = 0; i < 4; i++) {
		CHECK(elf_symtab__loaded(e[i]));
		elf_symtab__free(e[i]);
	}
	symtab_loader__free(NULL);
}

/*
 * A load that does not end by stop's deadline (a read that blocks) is left
 * behind: never handed back, counted by the caller and not by the loader,
 * and its file freed by the loader.
 */
TEST(symtab_loader_leaves_behind_what_does_not_end_in_time)
{
	struct load_budget b = {0};
	struct elf_symtab *e = open_file(symbols_file("large.so", LARGE_SYMBOLS), &b);
	struct symtab_loader *l;

	CHECK_INT(symtab_loader__new(&l), ==, 0);
	CHECK_INT(symtab_loader__post(l, e, e), ==, 0);
	CHECK_INT(symtab_loader__stop(l, 0), ==, 1);
	CHECK_INT(symtab_loader__pending(l), ==, 0);
	CHECK(symtab_loader__wait(l, 0));
	CHECK(!symtab_loader__take(l));
	/* Not twice: already given up on. */
	CHECK_INT(symtab_loader__stop(l, 0), ==, 0);
	symtab_loader__free(l);
	CHECK_U64(b.symtabs_abandoned, ==, 0);
}
