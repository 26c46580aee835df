// SPDX-License-Identifier: MIT
/*
 * ksyms: fixture kallsyms text (aliases, markers, modules, hidden addresses,
 * garbage), the two passes (names read later, symbols gone or replaced in
 * between, names of BPF programs kept from the load), the chunked reader
 * (every chunk size gives the same table, lines longer than a chunk, a last
 * line without newline), and the real /proc/kallsyms when its addresses are
 * visible.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resolve/ksyms.h"
#include "test.h"

static void fixture_path(const char *name, char *path, size_t size)
{
	snprintf(path, size, "%s/kallsyms/%s", test_fixtures_dir(), name);
}

static struct ksyms *load_fixture(const char *name)
{
	struct ksyms *k = NULL;
	char path[512];

	fixture_path(name, path, sizeof(path));
	CHECK_INT(ksyms__load(path, &k), ==, 0);
	CHECK(k);
	return k;
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	CHECK(f);
	CHECK_INT(fseek(f, 0, SEEK_END), ==, 0);
	n = ftell(f);
	CHECK(n >= 0);
	rewind(f);
	buf = malloc(n + 1);
	CHECK(buf);
	CHECK_INT(fread(buf, 1, n, f), ==, n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The index of the symbol holding addr, which must have one. */
static uint32_t sym_at(struct ksyms *k, uint64_t addr)
{
	uint32_t idx = UINT32_MAX;

	CHECK_INT(ksyms__find(k, addr, &idx), ==, 0);
	return idx;
}

/* The same, asked for by the next name pass. */
static uint32_t want_at(struct ksyms *k, uint64_t addr)
{
	uint32_t idx = sym_at(k, addr);

	CHECK_INT(ksyms__want_name(k, idx), ==, 0);
	return idx;
}

/* The name of idx, which must be known. */
static const char *known_name(struct ksyms *k, uint32_t idx)
{
	const char *name = NULL;

	CHECK_INT(ksyms__name(k, idx, &name), ==, 0);
	return name;
}

/* The name of the symbol holding addr after a name pass of the table's own file; NULL if none. */
static const char *name_at(struct ksyms *k, uint64_t addr)
{
	const char *name = NULL;
	uint32_t idx;

	if (ksyms__find(k, addr, &idx))
		return NULL;
	CHECK_INT(ksyms__want_name(k, idx), ==, 0);
	CHECK_INT(ksyms__name_pass(k), ==, 0);
	CHECK_INT(ksyms__wanted(k), ==, 0);
	CHECK_INT(ksyms__name(k, idx, &name), ==, 0);
	return name;
}

static void check_name(struct ksyms *k, uint64_t addr, const char *want)
{
	const char *got = name_at(k, addr);

	if (!want) {
		if (got)
			test_fail(__FILE__, __LINE__, "0x%llx: want no symbol, got %s",
				  (unsigned long long)addr, got);
		return;
	}
	if (!got || strcmp(got, want))
		test_fail(__FILE__, __LINE__, "0x%llx: want %s, got %s", (unsigned long long)addr,
			  want, got ? got : "(none)");
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
	const char *name = NULL;
	uint32_t idx;

	/* Modules are known from the load; names of real modules only after a pass. */
	idx = sym_at(k, 0xffffffffc0200010);
	CHECK_STR(ksyms__module(k, idx), "mod_a");
	CHECK_U64(ksyms__addr(k, idx), ==, 0xffffffffc0200000);
	CHECK_INT(ksyms__name(k, idx, &name), ==, -EAGAIN);
	check_name(k, 0xffffffffc0200010, "mod_a_fn1");
	check_name(k, 0xffffffffc0200100, "mod_a_fn2");
	idx = sym_at(k, 0xffffffffc0200100);
	CHECK_STR(ksyms__module(k, idx), "mod_a");
	/* Module symbols extend at most 256 KiB, not all the way to the next module. */
	check_name(k, 0xffffffffc0200100 + 256 * 1024 - 1, "mod_a_fn2");
	check_name(k, 0xffffffffc0200100 + 256 * 1024, NULL);
	/* A BPF program may be unloaded before the name pass: its name is kept at once. */
	idx = sym_at(k, 0xffffffffc0300004);
	CHECK_STR(ksyms__module(k, idx), "bpf");
	CHECK_STR(known_name(k, idx), "bpf_prog_6deef7357e7b4530_sd_devices");
	check_name(k, 0xffffffffc0400000 + 256 * 1024 - 1, "mod_b_last");
	check_name(k, 0xffffffffc0400000 + 256 * 1024, NULL);
	check_name(k, UINT64_MAX, NULL);
	/* Kernel image symbols have no module. */
	idx = sym_at(k, 0xffffffff81000110);
	CHECK(ksyms__module(k, idx) == NULL);
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
	uint32_t idx;

	CHECK(ksyms__hidden(k));
	CHECK_INT(ksyms__count(k), ==, 0);
	CHECK_INT(ksyms__find(k, 0, &idx), ==, -ENOENT);
	CHECK_INT(ksyms__find(k, 0xffffffff81000000, &idx), ==, -ENOENT);
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
	uint32_t idx;

	CHECK_INT(ksyms__parse("", 0, &k), ==, 0);
	CHECK_INT(ksyms__count(k), ==, 0);
	CHECK(!ksyms__hidden(k));
	CHECK_INT(ksyms__find(k, 0x1000, &idx), ==, -ENOENT);
	ksyms__free(k);
	CHECK_INT(ksyms__parse(NULL, 0, &k), ==, 0);
	ksyms__free(k);
	CHECK_INT(ksyms__parse(NULL, 1, &k), ==, -EINVAL);
	CHECK_INT(ksyms__parse_for(text, sizeof(text) - 1, 0, NULL, 0, false, &k), ==, -EINVAL);
	ksyms__free(NULL);
	CHECK_INT(ksyms__find(NULL, 1, &idx), ==, -ENOENT);
	CHECK_INT(ksyms__count(NULL), ==, 0);
	CHECK_INT(ksyms__wanted(NULL), ==, 0);

	CHECK_INT(ksyms__parse(text, sizeof(text) - 1, &k), ==, 0);
	/* Parsed text has no file to read again: names come from text handed in. */
	idx = want_at(k, 0xffffffff81000000);
	CHECK_INT(ksyms__name_pass(k), ==, -EINVAL);
	CHECK_INT(ksyms__name_pass_text(k, text, sizeof(text) - 1, 7), ==, 0);
	CHECK_STR(known_name(k, idx), "a");
	/* "T\tb" is not the "type space name" layout. */
	idx = sym_at(k, 0xffffffff81000010);
	CHECK_U64(ksyms__addr(k, idx), ==, 0xffffffff81000000);
	idx = sym_at(k, 0xffffffff81000020);
	CHECK_STR(ksyms__module(k, idx), "m");
	CHECK_INT(ksyms__want_name(k, idx), ==, 0);
	/* A CRLF file (edited fixture) still yields clean names. */
	idx = want_at(k, 0xffffffff81000040);
	CHECK_INT(ksyms__wanted(k), ==, 2);
	CHECK_INT(ksyms__name_pass_text(k, text, sizeof(text) - 1, 1), ==, 0);
	CHECK_STR(known_name(k, idx), "d");
	idx = sym_at(k, 0xffffffff81000020);
	CHECK_STR(known_name(k, idx), "c");
	CHECK_INT(ksyms__want_name(k, UINT32_MAX), ==, -EINVAL);
	ksyms__free(k);
}

/* Every address of interest in basic.txt, and a few around them. */
static const uint64_t basic_probes[] = {
	0xffffffff80000000, 0xffffffff81000000, 0xffffffff810000ff, 0xffffffff81000100,
	0xffffffff81000110, 0xffffffff81000200, 0xffffffff81000300, 0xffffffff81000400,
	0xffffffff81000600, 0xffffffff81000fff, 0xffffffff81001000, 0xffffffff83000010,
	0xffffffff83000800, 0xffffffffc0200010, 0xffffffffc0200100, 0xffffffffc0300004,
	0xffffffffc0400000, 0xffffffffc0440000, UINT64_MAX,
};

#define NPROBES (sizeof(basic_probes) / sizeof(basic_probes[0]))

/* The symbol address and name of each probe (0 and "" where none). */
static void probe_all(struct ksyms *k, const char *text, size_t len, size_t chunk, uint64_t *addrs,
		      char (*names)[64])
{
	uint32_t idx[NPROBES];
	const char *name;
	size_t i;

	for (i = 0; i < NPROBES; i++) {
		addrs[i] = 0;
		names[i][0] = '\0';
		if (ksyms__find(k, basic_probes[i], &idx[i]))
			continue;
		addrs[i] = ksyms__addr(k, idx[i]);
		CHECK_INT(ksyms__want_name(k, idx[i]), ==, 0);
	}
	CHECK_INT(ksyms__name_pass_text(k, text, len, chunk), ==, 0);
	for (i = 0; i < NPROBES; i++) {
		if (!addrs[i])
			continue;
		CHECK_INT(ksyms__name(k, idx[i], &name), ==, 0);
		snprintf(names[i], sizeof(names[i]), "%s", name);
	}
}

TEST(ksyms_every_chunk_size_reads_the_same)
{
	uint64_t want_addrs[NPROBES], addrs[NPROBES];
	char want_names[NPROBES][64], names[NPROBES][64], path[512];
	struct ksyms *k = NULL;
	size_t len, chunk, i;
	char *text;

	fixture_path("basic.txt", path, sizeof(path));
	text = read_text(path, &len);
	CHECK_INT(ksyms__parse(text, len, &k), ==, 0);
	probe_all(k, text, len, KSYMS_CHUNK, want_addrs, want_names);
	CHECK_STR(want_names[1], "startup_64");
	CHECK_STR(want_names[7], "alias_four");
	ksyms__free(k);
	/* A chunk of 1 byte splits every line; others split lines at every place. */
	for (chunk = 1; chunk <= 80; chunk++) {
		CHECK_INT(ksyms__parse_for(text, len, chunk, NULL, 0, false, &k), ==, 0);
		CHECK_INT(ksyms__count(k), ==, 14);
		probe_all(k, text, len, 81 - chunk, addrs, names);
		for (i = 0; i < NPROBES; i++) {
			CHECK_U64(addrs[i], ==, want_addrs[i]);
			CHECK_STR(names[i], want_names[i]);
		}
		ksyms__free(k);
	}
	free(text);
}

/*
 * Naming at load gives the names a name pass would, with no pass at all,
 * also in a table of only the symbols of those addresses.
 */
TEST(ksyms_load_names_the_addresses_it_is_given)
{
	static const char aliases[] = "ffffffffc0000000 t mod_fn\t[m]\n"
				      "ffffffff81000000 t __local_long_name\n"
				      "ffffffff81000000 W weak\n"
				      "ffffffff81000000 T __global_b\n"
				      "ffffffff81000100 T next\n"
				      "ffffffff81000000 T __global_a\n"
				      "ffffffffc0000000 T mod_fn_global\t[m]\n";
	uint64_t want_addrs[NPROBES], addrs[NPROBES], given[2 * NPROBES];
	char want_names[NPROBES][64], names[NPROBES][64], path[512];
	struct ksyms *k = NULL;
	size_t len, chunk, i;
	uint64_t two[2] = {0xffffffffc0000001, 0xffffffff81000050};
	uint64_t do_one = 0xffffffff81000110;
	uint32_t idx;
	char *text;
	int only;

	fixture_path("basic.txt", path, sizeof(path));
	text = read_text(path, &len);
	CHECK_INT(ksyms__parse(text, len, &k), ==, 0);
	probe_all(k, text, len, KSYMS_CHUNK, want_addrs, want_names);
	ksyms__free(k);
	/* In any order, twice over. */
	for (i = 0; i < NPROBES; i++)
		given[i] = given[2 * NPROBES - 1 - i] = basic_probes[i];
	for (only = 0; only <= 1; only++) {
		for (chunk = 1; chunk <= 80; chunk += 3) {
			CHECK_INT(ksyms__parse_for(text, len, chunk, given, 2 * NPROBES, only, &k),
				  ==, 0);
			/* Only: the 14 but _sinittext, which holds no probe. */
			CHECK_INT(ksyms__count(k), ==, only ? 13 : 14);
			/* Every symbol asked for is named: the pass over nothing finds nothing
			 * gone. */
			probe_all(k, "", 0, 1, addrs, names);
			for (i = 0; i < NPROBES; i++) {
				CHECK_U64(addrs[i], ==, want_addrs[i]);
				CHECK_STR(names[i], want_names[i]);
			}
			ksyms__free(k);
		}
	}
	/* A table of one symbol: its own extent, and nothing anywhere else. */
	CHECK_INT(ksyms__parse_for(text, len, 64, &do_one, 1, true, &k), ==, 0);
	CHECK_INT(ksyms__count(k), ==, 1);
	CHECK_STR(known_name(k, sym_at(k, 0xffffffff810001ff)), "do_one");
	CHECK_INT(ksyms__find(k, 0xffffffff81000200, &idx), ==, -ENOENT);
	CHECK_INT(ksyms__find(k, 0xffffffff81000105, &idx), ==, -ENOENT);
	CHECK_INT(ksyms__find(k, 0xffffffff83000010, &idx), ==, -ENOENT);
	ksyms__free(k);
	free(text);

	/* Aliases scattered through the file, the preferred one last. */
	for (only = 0; only <= 1; only++) {
		CHECK_INT(ksyms__parse_for(aliases, sizeof(aliases) - 1, 5, two, 2, only, &k), ==,
			  0);
		CHECK_STR(known_name(k, sym_at(k, two[0])), "mod_fn_global");
		CHECK_STR(ksyms__module(k, sym_at(k, two[0])), "m");
		CHECK_STR(known_name(k, sym_at(k, two[1])), "__global_a");
		CHECK_INT(ksyms__wanted(k), ==, 0);
		ksyms__free(k);
	}
	CHECK_INT(ksyms__parse_for(aliases, 1, 5, NULL, 1, false, &k), ==, -EINVAL);
	/* Hidden addresses: nothing to name. */
	for (only = 0; only <= 1; only++) {
		CHECK_INT(ksyms__parse_for("0000000000000000 T a\n", 21, 4, two, 2, only, &k), ==,
			  0);
		CHECK(ksyms__hidden(k));
		CHECK_INT(ksyms__count(k), ==, 0);
		CHECK_INT(ksyms__find(k, 0, &idx), ==, -ENOENT);
		ksyms__free(k);
	}
}

TEST(ksyms_lines_longer_than_a_chunk)
{
	char text[4096], name[1500], *p = text;
	struct ksyms *k = NULL;
	uint32_t idx;
	size_t chunk;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	name[0] = 'L';
	p += sprintf(p, "ffffffff81000000 T before\n");
	p += sprintf(p, "ffffffff81000100 t %s\t[long_module_name_%s]\n", name, "abcdefghijklmnop");
	p += sprintf(p, "ffffffff81000200 T after\n");
	/* The last line ends without a newline, in the middle of the buffer. */
	p += sprintf(p, "ffffffff81000300 T %s", name);
	for (chunk = 1; chunk <= 4096; chunk *= 4) {
		CHECK_INT(ksyms__parse_for(text, p - text, chunk, NULL, 0, false, &k), ==, 0);
		CHECK_INT(ksyms__count(k), ==, 4);
		idx = sym_at(k, 0xffffffff81000150);
		CHECK_STR(ksyms__module(k, idx), "long_module_name_abcdefghijklmnop");
		CHECK_INT(ksyms__want_name(k, idx), ==, 0);
		idx = want_at(k, 0xffffffff81000310);
		CHECK_INT(ksyms__name_pass_text(k, text, p - text, chunk), ==, 0);
		CHECK_STR(known_name(k, idx), name);
		idx = sym_at(k, 0xffffffff81000150);
		CHECK_STR(known_name(k, idx), name);
		idx = sym_at(k, 0xffffffff81000210);
		CHECK_U64(ksyms__addr(k, idx), ==, 0xffffffff81000200);
		ksyms__free(k);
	}
}

TEST(ksyms_names_only_after_the_pass_and_kept)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 t local_alias\n"
				   "ffffffff81000100 T first\n"
				   "ffffffff81000200 T second\n"
				   "ffffffff81000300 T _etext\n";
	struct ksyms *k = NULL;
	const char *name = NULL;
	uint32_t a, b;

	CHECK_INT(ksyms__parse(text, sizeof(text) - 1, &k), ==, 0);
	CHECK_INT(ksyms__find(k, 0xffffffff81000105, &a), ==, 0);
	CHECK_INT(ksyms__find(k, 0xffffffff81000205, &b), ==, 0);
	CHECK_INT(ksyms__name(k, a, &name), ==, -EAGAIN);
	CHECK_INT(ksyms__want_name(k, a), ==, 0);
	CHECK_INT(ksyms__want_name(k, a), ==, 0);
	CHECK_INT(ksyms__wanted(k), ==, 1);
	/* The name pass reads only what it is given: the second symbol is not named. */
	CHECK_INT(ksyms__name_pass_text(k, text, sizeof(text) - 1, 16), ==, 0);
	CHECK_INT(ksyms__wanted(k), ==, 0);
	CHECK_INT(ksyms__name(k, a, &name), ==, 0);
	CHECK_STR(name, "first");
	CHECK_INT(ksyms__name(k, b, &name), ==, -EAGAIN);
	/* A known name is not asked for again, and a pass with nothing wanted reads nothing. */
	CHECK_INT(ksyms__want_name(k, a), ==, 0);
	CHECK_INT(ksyms__wanted(k), ==, 0);
	CHECK_INT(ksyms__name_pass_text(k, "", 0, 16), ==, 0);
	CHECK_INT(ksyms__name(k, a, &name), ==, 0);
	CHECK_STR(name, "first");
	ksyms__free(k);
}

TEST(ksyms_aliases_chosen_in_the_name_pass)
{
	/* The preferred alias comes last in the file, in the image and in a module. */
	static const char text[] = "ffffffff81000000 t __local_long_name\n"
				   "ffffffff81000000 t local\n"
				   "ffffffff81000000 W weak\n"
				   "ffffffff81000000 T __global_b\n"
				   "ffffffff81000000 T __global_a\n"
				   "ffffffff81000100 T next\n"
				   "ffffffff81000200 T _etext\n"
				   "ffffffffc0000000 t mod_fn\t[m]\n"
				   "ffffffffc0000000 T mod_fn_global\t[m]\n";
	struct ksyms *k = NULL;
	uint32_t image, mod;

	CHECK_INT(ksyms__parse(text, sizeof(text) - 1, &k), ==, 0);
	CHECK_INT(ksyms__count(k), ==, 3);
	image = want_at(k, 0xffffffff81000010);
	mod = want_at(k, 0xffffffffc0000010);
	CHECK_INT(ksyms__name_pass_text(k, text, sizeof(text) - 1, 10), ==, 0);
	CHECK_STR(known_name(k, mod), "mod_fn_global");
	/* Global, then two underscores each: equal length, strcmp decides. */
	CHECK_STR(known_name(k, image), "__global_a");
	ksyms__free(k);
}

TEST(ksyms_symbols_gone_before_the_name_pass)
{
	static const char before[] = "ffffffff81000000 T kept\n"
				     "ffffffff81000100 T _etext\n"
				     "ffffffffc0000000 t unloaded_fn\t[unloaded]\n"
				     "ffffffffc0001000 t replaced_fn\t[old_mod]\n"
				     "ffffffffc0002000 t alias_gone\t[mod]\n"
				     "ffffffffc0002000 t alias_stays_longer\t[mod]\n"
				     "ffffffffc0003000 t bpf_prog_1234_short\t[bpf]\n"
				     "ffffffffc0004000 t data_now\t[mod]\n";
	/* unloaded is gone, another module took old_mod's address, an alias left, BPF unloaded. */
	static const char after[] = "ffffffff81000000 T kept\n"
				    "ffffffff81000100 T _etext\n"
				    "ffffffffc0001000 t other_fn\t[new_mod]\n"
				    "ffffffffc0002000 t alias_stays_longer\t[mod]\n"
				    "ffffffffc0004000 d data_now\t[mod]\n";
	static const struct {
		uint64_t addr;
		int err;
		const char *name;
	} want[] = {
		{0xffffffff81000010, 0, "kept"},
		{0xffffffffc0000010, -ENOENT, NULL},
		{0xffffffffc0001010, -ENOENT, NULL},
		{0xffffffffc0002010, 0, "alias_stays_longer"},
		{0xffffffffc0003010, 0, "bpf_prog_1234_short"},
		{0xffffffffc0004010, -ENOENT, NULL},
	};
	struct ksyms *k = NULL;
	const char *name;
	uint32_t idx[6];
	size_t i;

	CHECK_INT(ksyms__parse(before, sizeof(before) - 1, &k), ==, 0);
	for (i = 0; i < 6; i++) {
		CHECK_INT(ksyms__find(k, want[i].addr, &idx[i]), ==, 0);
		CHECK_INT(ksyms__want_name(k, idx[i]), ==, 0);
	}
	/* The BPF program's name is known already, so it is not wanted. */
	CHECK_INT(ksyms__wanted(k), ==, 5);
	CHECK_INT(ksyms__name_pass_text(k, after, sizeof(after) - 1, 32), ==, 0);
	for (i = 0; i < 6; i++) {
		name = NULL;
		CHECK_INT(ksyms__name(k, idx[i], &name), ==, want[i].err);
		if (want[i].name)
			CHECK_STR(name, want[i].name);
	}
	/* Gone stays gone: not asked for again, also if the symbol came back. */
	CHECK_INT(ksyms__want_name(k, idx[1]), ==, 0);
	CHECK_INT(ksyms__wanted(k), ==, 0);
	ksyms__free(k);
}

TEST(ksyms_failed_name_pass_names_nothing)
{
	static const char text[] = "ffffffff81000000 T one\n"
				   "ffffffff81000100 T two\n"
				   "ffffffff81000200 T _etext\n";
	char path[512];
	struct ksyms *k = NULL;
	const char *name;
	uint32_t one, two;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms.%d", test_tmp_dir(), (int)getpid());
	f = fopen(path, "we");
	CHECK(f);
	CHECK_INT(fwrite(text, 1, sizeof(text) - 1, f), ==, sizeof(text) - 1);
	CHECK_INT(fclose(f), ==, 0);
	CHECK_INT(ksyms__load(path, &k), ==, 0);
	CHECK_INT(ksyms__find(k, 0xffffffff81000000, &one), ==, 0);
	CHECK_INT(ksyms__find(k, 0xffffffff81000100, &two), ==, 0);
	CHECK_INT(ksyms__want_name(k, one), ==, 0);
	CHECK_INT(ksyms__name_pass(k), ==, 0);
	CHECK_INT(unlink(path), ==, 0);
	/* The file is gone: the pass fails, names nothing, and the symbol stays wanted. */
	CHECK_INT(ksyms__want_name(k, two), ==, 0);
	CHECK_INT(ksyms__name_pass(k), ==, -ENOENT);
	CHECK_INT(ksyms__name(k, two, &name), ==, -EAGAIN);
	CHECK_INT(ksyms__wanted(k), ==, 1);
	CHECK_INT(ksyms__name(k, one, &name), ==, 0);
	CHECK_STR(name, "one");
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
	uint32_t idx[5], idx2;
	uint64_t addrs[5] = {0};
	struct timespec t0, t1, t2, t3;
	int only;
	struct ksyms *k = NULL;
	const char *name;
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
	CHECK_INT(ksyms__count(k), >, 1000);
	for (i = 0; i < 5; i++) {
		char type = 0;

		addrs[i] = text_addr_of("/proc/kallsyms", names[i], &type);
		if (!addrs[i] || (type != 'T' && type != 't')) {
			addrs[i] = 0;
			continue;
		}
		CHECK_INT(ksyms__find(k, addrs[i], &idx[i]), ==, 0);
		CHECK_U64(ksyms__addr(k, idx[i]), ==, addrs[i]);
		CHECK(ksyms__module(k, idx[i]) == NULL);
		CHECK_INT(ksyms__find(k, addrs[i] + 1, &idx2), ==, 0);
		CHECK_INT(idx2, ==, idx[i]);
		CHECK_INT(ksyms__want_name(k, idx[i]), ==, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	CHECK_INT(ksyms__name_pass(k), ==, 0);
	clock_gettime(CLOCK_MONOTONIC, &t3);
	fprintf(stderr, "ksyms: %zu text symbols loaded in %.1f ms, named in %.1f ms\n",
		ksyms__count(k), (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
		(t3.tv_sec - t2.tv_sec) * 1e3 + (t3.tv_nsec - t2.tv_nsec) / 1e6);
	for (i = 0; i < 5; i++) {
		if (!addrs[i])
			continue;
		CHECK_INT(ksyms__name(k, idx[i], &name), ==, 0);
		CHECK_STR(name, names[i]);
		checked++;
	}
	ksyms__free(k);
	/* The same names from the load itself, for a profile's addresses known by then. */
	for (only = 0; only <= 1; only++) {
		CHECK_INT(ksyms__load_for(NULL, addrs, 5, only, &k), ==, 0);
		for (i = 0; i < 5; i++) {
			if (!addrs[i])
				continue;
			idx[i] = sym_at(k, addrs[i]);
			CHECK_STR(known_name(k, idx[i]), names[i]);
		}
		CHECK_INT(ksyms__wanted(k), ==, 0);
		if (only)
			CHECK_INT(ksyms__count(k), <=, 5);
		ksyms__free(k);
	}
	k = NULL;
	if (!checked) {
		ksyms__free(k);
		SKIP("none of the well-known symbols is in this kernel's kallsyms");
	}
	ksyms__free(k);
}
