// SPDX-License-Identifier: MIT
/*
 * ksyms: fixture kallsyms text (aliases, markers, modules, hidden addresses,
 * garbage) and the real /proc/kallsyms when its addresses are visible.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ksyms.h"
#include "test.h"

static struct ksyms *load_fixture(const char *name)
{
	struct ksyms *k = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/kallsyms/%s", test_fixtures_dir(), name);
	CHECK_INT(ksyms__load(path, &k), ==, 0);
	CHECK(k);
	return k;
}

static void check_name(const struct ksyms *k, uint64_t addr, const char *want)
{
	const struct ksym *s = ksyms__lookup(k, addr);

	if (!want) {
		if (s)
			test_fail(__FILE__, __LINE__, "0x%llx: want no symbol, got %s",
				  (unsigned long long)addr, s->name);
		return;
	}
	if (!s || strcmp(s->name, want))
		test_fail(__FILE__, __LINE__, "0x%llx: want %s, got %s", (unsigned long long)addr,
			  want, s ? s->name : "(none)");
}

TEST(ksyms_fixture_aliases_and_extents)
{
	struct ksyms *k = load_fixture("basic.txt");

	CHECK(!ksyms__hidden(k));
	CHECK_INT(ksyms__count(k), ==, 14);
	check_name(k, 0xffffffff80000000, NULL);
	/* _stext/_text/startup_64: all global, fewest leading underscores wins. */
	check_name(k, 0xffffffff81000000, "startup_64");
	check_name(k, 0xffffffff810000ff, "startup_64");
	check_name(k, 0xffffffff81000100, "__pfx_do_one");
	check_name(k, 0xffffffff8100010f, "__pfx_do_one");
	check_name(k, 0xffffffff81000110, "do_one");
	/* Weak beats local. */
	check_name(k, 0xffffffff81000200, "weak_two");
	/* Same binding: fewer underscores, then shorter. */
	check_name(k, 0xffffffff81000300, "static_three");
	check_name(k, 0xffffffff81000400, "alias_four");
	/* Data symbols are not kept, so they do not cut a function short. */
	check_name(k, 0xffffffff81000600, "weak_five");
	/* The last image symbol ends at _etext, and _etext itself is not a symbol. */
	check_name(k, 0xffffffff81000fff, "last_text");
	check_name(k, 0xffffffff81001000, NULL);
	check_name(k, 0xffffffff82000100, NULL);
	check_name(k, 0xffffffff83000010, "init_fn");
	check_name(k, 0xffffffff830007ff, "init_fn");
	check_name(k, 0xffffffff83000800, NULL);
	check_name(k, 0xffffffff8f000000, NULL);
	ksyms__free(k);
}

TEST(ksyms_fixture_modules)
{
	struct ksyms *k = load_fixture("basic.txt");
	const struct ksym *s;

	s = ksyms__lookup(k, 0xffffffffc0200010);
	CHECK(s);
	CHECK_STR(s->name, "mod_a_fn1");
	CHECK_STR(s->module, "mod_a");
	CHECK_U64(s->addr, ==, 0xffffffffc0200000);
	s = ksyms__lookup(k, 0xffffffffc0200100);
	CHECK(s);
	CHECK_STR(s->name, "mod_a_fn2");
	CHECK_STR(s->module, "mod_a");
	/* Module symbols extend at most 256 KiB, not all the way to the next module. */
	check_name(k, 0xffffffffc0200100 + 256 * 1024 - 1, "mod_a_fn2");
	check_name(k, 0xffffffffc0200100 + 256 * 1024, NULL);
	s = ksyms__lookup(k, 0xffffffffc0300004);
	CHECK(s);
	CHECK_STR(s->name, "bpf_prog_6deef7357e7b4530_sd_devices");
	CHECK_STR(s->module, "bpf");
	check_name(k, 0xffffffffc0400000 + 256 * 1024 - 1, "mod_b_last");
	check_name(k, 0xffffffffc0400000 + 256 * 1024, NULL);
	check_name(k, UINT64_MAX, NULL);
	/* Kernel image symbols have no module. */
	s = ksyms__lookup(k, 0xffffffff81000110);
	CHECK(s);
	CHECK(s->module == NULL);
	ksyms__free(k);
}

TEST(ksyms_fixture_unsorted_and_garbage)
{
	struct ksyms *k = load_fixture("unsorted.txt");

	CHECK(!ksyms__hidden(k));
	/* one, two, three, mod_b_last; the rest is malformed or not text. */
	CHECK_INT(ksyms__count(k), ==, 4);
	check_name(k, 0xffffffff81000100, "one");
	check_name(k, 0xffffffff81000250, "two");
	/* Without an _etext marker the last image symbol is capped at 256 KiB. */
	check_name(k, 0xffffffff81000300 + 256 * 1024 - 1, "three");
	check_name(k, 0xffffffff81000300 + 256 * 1024, NULL);
	check_name(k, 0xffffffffc0400001, "mod_b_last");
	check_name(k, 0xffffffffc0300000, NULL);
	ksyms__free(k);
}

TEST(ksyms_fixture_hidden)
{
	struct ksyms *k = load_fixture("hidden.txt");

	CHECK(ksyms__hidden(k));
	CHECK(ksyms__lookup(k, 0) == NULL);
	CHECK(ksyms__lookup(k, 0xffffffff81000000) == NULL);
	ksyms__free(k);
}

TEST(ksyms_fixture_no_trailing_newline)
{
	struct ksyms *k = load_fixture("no_newline.txt");

	CHECK_INT(ksyms__count(k), ==, 2);
	check_name(k, 0xffffffff81000100, "no_newline_at_end");
	ksyms__free(k);
}

TEST(ksyms_parse_edge_cases)
{
	static const char text[] = "ffffffff81000000 T a\n\n\n"
				   "ffffffff81000010 T\tb\n"
				   "ffffffff81000020 t c   [m]\n"
				   "ffffffff81000030 T " /* no name */ "\n"
				   "ffffffff81000040 T d\r\n";
	struct ksyms *k = NULL;
	const struct ksym *s;

	CHECK_INT(ksyms__parse("", 0, &k), ==, 0);
	CHECK_INT(ksyms__count(k), ==, 0);
	CHECK(!ksyms__hidden(k));
	CHECK(ksyms__lookup(k, 0x1000) == NULL);
	ksyms__free(k);
	CHECK_INT(ksyms__parse(NULL, 0, &k), ==, 0);
	ksyms__free(k);
	ksyms__free(NULL);
	CHECK(ksyms__lookup(NULL, 1) == NULL);
	CHECK_INT(ksyms__count(NULL), ==, 0);

	CHECK_INT(ksyms__parse(text, sizeof(text) - 1, &k), ==, 0);
	check_name(k, 0xffffffff81000000, "a");
	/* "T\tb" is not the "type space name" layout. */
	check_name(k, 0xffffffff81000010, "a");
	s = ksyms__lookup(k, 0xffffffff81000020);
	CHECK(s);
	CHECK_STR(s->name, "c");
	CHECK_STR(s->module, "m");
	/* A CRLF file (edited fixture) still yields clean names. */
	check_name(k, 0xffffffff81000040, "d");
	ksyms__free(k);
}

/* Finds the address of an exact symbol name in kallsyms text, or 0. */
static uint64_t text_addr_of(const char *path, const char *want, char *type_out)
{
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f = fopen(path, "r");
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, want)) {
			found = addr;
			*type_out = type;
			break;
		}
	}
	fclose(f);
	return found;
}

TEST(ksyms_real_kallsyms_round_trip)
{
	static const char *const names[] = {"vfs_read", "schedule", "do_sys_openat2",
					    "__x64_sys_getpid", "kmem_cache_alloc"};
	struct timespec t0, t1;
	struct ksyms *k = NULL;
	const struct ksym *s;
	int err, checked = 0;
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = ksyms__load(NULL, &k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		SKIP("/proc/kallsyms unreadable: %s", strerror(-err));
	CHECK_INT(err, ==, 0);
	if (ksyms__hidden(k)) {
		ksyms__free(k);
		SKIP("kallsyms addresses hidden (kptr_restrict or not root)");
	}
	fprintf(stderr, "ksyms: %zu text symbols loaded in %.1f ms\n", ksyms__count(k),
		(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	CHECK_INT(ksyms__count(k), >, 1000);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char type = 0;
		uint64_t addr = text_addr_of("/proc/kallsyms", names[i], &type);

		if (!addr || (type != 'T' && type != 't'))
			continue;
		s = ksyms__lookup(k, addr);
		CHECK(s);
		CHECK_STR(s->name, names[i]);
		CHECK(s->module == NULL);
		CHECK_U64(s->addr, ==, addr);
		s = ksyms__lookup(k, addr + 1);
		CHECK(s);
		CHECK_STR(s->name, names[i]);
		checked++;
	}
	if (!checked) {
		ksyms__free(k);
		SKIP("none of the well-known symbols is in this kernel's kallsyms");
	}
	ksyms__free(k);
}
