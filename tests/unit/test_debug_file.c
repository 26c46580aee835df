// SPDX-License-Identifier: MIT
/*
 * debug_file__find on real debug files laid out the ways GDB looks for them
 * (build-ID tree, next to the file, .debug/, DEBUG_DIR/<dir>/), and on the
 * impostors it must refuse: a debug file whose CRC differs from the
 * debuglink's, one of another build at the build-ID path, and a FIFO.
 * Then the vDSO's, where distributions and `make vdso_install` put it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/load_budget.h"
#include "resolve/debug_file.h"
#include "resolve/elf_symtab.h"
#include "test.h"

/* A fresh directory under the test's scratch dir, made with its parents. */
static const char *scratch(const char *rel)
{
	static char path[8][1024];
	static int next;
	char *p = path[next++ % 8], cmd[2048];

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmp_dir(), rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	CHECK_INT(system(cmd), ==, 0);
	return p;
}

static void copy(const char *from, const char *dir, const char *name)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/%s'", from, dir, name);
	CHECK_INT(system(cmd), ==, 0);
}

static struct elf_symtab *open_elf(const char *dir, const char *name)
{
	struct elf_symtab *e = NULL;
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	return e;
}

/* Finds the debug file of DIR/bin; returns its path ("" if none) and checks it names hot_a. */
static const char *find(const char *debug_dir, const char *dir)
{
	static char found[1024];
	struct elf_symtab *e = open_elf(dir, "bin"), *dbg = NULL;
	struct debug_file_search ds = {.dir = debug_dir};
	char path[1024];
	int err;

	snprintf(path, sizeof(path), "%s/bin", dir);
	err = debug_file__find(&ds, 0, path, e, &dbg);
	found[0] = '\0';
	if (!err) {
		CHECK(dbg);
		CHECK(elf_symtab__has_symtab(dbg));
		CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, 0);
		snprintf(found, sizeof(found), "%s", elf_symtab__debug_path(e));
		CHECK(elf_symtab__symbol_count(e) > 5);
	} else {
		CHECK_INT(err, ==, -ENOENT);
		CHECK(dbg == NULL);
	}
	elf_symtab__free(e);
	return found;
}

static const char *join(const char *dir, const char *name)
{
	static char path[4][1024];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

TEST(debug_file_by_debuglink_next_to_the_file)
{
	const char *dir = scratch("same");

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	CHECK_STR(find(NULL, dir), "");
	copy(test_build_fixture("known_tree_stripped.debug"), dir, "known_tree_stripped.debug");
	CHECK_STR(find(NULL, dir), join(dir, "known_tree_stripped.debug"));
}

TEST(debug_file_by_debuglink_in_dot_debug)
{
	const char *dir = scratch("dotdebug"), *sub = scratch("dotdebug/.debug");

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	copy(test_build_fixture("known_tree_stripped.debug"), sub, "known_tree_stripped.debug");
	CHECK_STR(find("", dir), join(sub, "known_tree_stripped.debug"));
}

TEST(debug_file_by_debuglink_under_debug_dir)
{
	const char *dir = scratch("global/bin-dir"), *dd = scratch("global/debug");
	char mirror[2048];

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	/* DEBUG_DIR + the file's absolute directory. */
	snprintf(mirror, sizeof(mirror), "global/debug%s", dir);
	copy(test_build_fixture("known_tree_stripped.debug"), scratch(mirror),
	     "known_tree_stripped.debug");
	CHECK_STR(find(NULL, dir), "");
	CHECK_STR(find(dd, dir), join(scratch(mirror), "known_tree_stripped.debug"));
}

TEST(debug_file_by_build_id)
{
	const char *dir = scratch("bid/bin-dir"), *dd = scratch("bid/debug");
	struct elf_symtab *e;
	char sub[2048], rest[256];
	const char *id;

	copy(test_build_fixture("known_tree_buildid"), dir, "bin");
	e = open_elf(dir, "bin");
	id = elf_symtab__build_id(e);
	CHECK(id && strlen(id) == 40);
	CHECK(elf_symtab__debuglink(e, NULL) == NULL);
	snprintf(sub, sizeof(sub), "bid/debug/.build-id/%.2s", id);
	snprintf(rest, sizeof(rest), "%s.debug", id + 2);
	elf_symtab__free(e);
	CHECK_STR(find(dd, dir), "");
	copy(test_build_fixture("known_tree_stripped.debug"), scratch(sub), rest);
	CHECK_STR(find(dd, dir), join(scratch(sub), rest));
	/* Without a DEBUG_DIR there is no build-ID tree to look in. */
	CHECK_STR(find(NULL, dir), "");
}

/* Same name and same build ID, other bytes: the debuglink's CRC tells them apart. */
TEST(debug_file_crc_mismatch_refused)
{
	const char *dir = scratch("crc");
	char cmd[2048];

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	copy(test_build_fixture("known_tree_stripped.debug"), dir, "known_tree_stripped.debug");
	snprintf(cmd, sizeof(cmd), "printf x >> '%s/known_tree_stripped.debug'", dir);
	CHECK_INT(system(cmd), ==, 0);
	CHECK_STR(find(NULL, dir), "");
}

/* Another build's debug file at this build ID's path is refused for its build ID. */
TEST(debug_file_other_build_at_build_id_path_refused)
{
	const char *dir = scratch("wrongbid/bin-dir"), *dd = scratch("wrongbid/debug");
	struct elf_symtab *e;
	char sub[2048], rest[256], cmd[4096];

	copy(test_build_fixture("known_tree_buildid"), dir, "bin");
	e = open_elf(dir, "bin");
	snprintf(sub, sizeof(sub), "wrongbid/debug/.build-id/%.2s", elf_symtab__build_id(e));
	snprintf(rest, sizeof(rest), "%s.debug", elf_symtab__build_id(e) + 2);
	elf_symtab__free(e);
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s/%s'",
		 test_build_fixture("known_tree_nopie"), scratch(sub), rest);
	if (system("command -v objcopy >/dev/null 2>&1"))
		SKIP("objcopy not installed");
	CHECK_INT(system(cmd), ==, 0);
	CHECK_STR(find(dd, dir), "");
}

/* A FIFO where the debug file should be: refused at once, never waited on. */
TEST(debug_file_fifo_refused)
{
	const char *dir = scratch("fifo");

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	CHECK_INT(mkfifo(join(dir, "known_tree_stripped.debug"), 0600), ==, 0);
	CHECK_STR(find(NULL, dir), "");
}

/* Where .text of the ELF file at path starts, from readelf. */
static uint64_t text_start(const char *path)
{
	unsigned long long addr = 0;
	char cmd[2048];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) if ($i == \".text\") print "
		 "$(i + 2) }'",
		 path);
	p = popen(cmd, "r");
	CHECK(p);
	CHECK_INT(fscanf(p, "%llx", &addr), ==, 1);
	pclose(p);
	return addr;
}

/*
 * The vDSO's debug file for release (uname -r) under debug_dir: its path,
 * or "" when there is none. A debug file found must name want_addr.
 */
static const char *find_vdso(const char *debug_dir, const char *release, uint64_t want_addr)
{
	static char found[1024];
	struct elf_symtab *e = NULL, *dbg = NULL;
	size_t size;
	const void *image = test_vdso(&size);
	struct debug_file_search ds = {.dir = debug_dir};
	int err;

	CHECK_INT(elf_symtab__open_memory(image, size, "[vdso]", &e), ==, 0);
	err = debug_file__find_vdso(&ds, release, e, &dbg);
	found[0] = '\0';
	if (!err) {
		CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, 0);
		snprintf(found, sizeof(found), "%s", elf_symtab__debug_path(e));
		CHECK_STR(elf_symtab__lookup(e, want_addr, NULL), "cprof_test_vdso_local");
	} else {
		CHECK_INT(err, ==, -ENOENT);
		CHECK(dbg == NULL);
	}
	elf_symtab__free(e);
	return found;
}

/* Copies from to DIR/REL (making its directories) and returns that path. */
static const char *put_at(const char *from, const char *dir, const char *rel)
{
	static char to[2048];
	char cmd[3 * sizeof(to) + 64];

	snprintf(to, sizeof(to), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
	CHECK_INT(system(cmd), ==, 0);
	return to;
}

/*
 * The vDSO's debug file: our image with a local symbol added (objcopy keeps
 * the build ID), found at each place debug_file__find_vdso looks, under a
 * release name no host has, so that /lib/modules never answers.
 */
TEST(debug_file_of_the_vdso)
{
	const char *dd = scratch("vdso/debug"), *rel = "cprof-test-release", *at;
	char cmd[4096], dbg[1024], byid[256], mods[512];
	struct elf_symtab *e = NULL;
	const char *image_path;
	const void *image;
	uint64_t local;
	size_t size;

	image = test_vdso(&size);
	if (!image)
		SKIP("no vDSO on this system");
	if (system("command -v objcopy >/dev/null 2>&1"))
		SKIP("objcopy not installed");
	CHECK_INT(elf_symtab__open_memory(image, size, "[vdso]", &e), ==, 0);
	if (!elf_symtab__build_id(e))
		SKIP("this vDSO has no build ID");
	snprintf(byid, sizeof(byid), ".build-id/%.2s/%s.debug", elf_symtab__build_id(e),
		 elf_symtab__build_id(e) + 2);
	elf_symtab__free(e);
	/* One byte into .text: no function starts there, so only our symbol names it. */
	image_path = test_write_tmp("vdso.so", image, size);
	local = text_start(image_path) + 1;
	snprintf(dbg, sizeof(dbg), "%s/vdso.dbg", scratch("vdso"));
	snprintf(cmd, sizeof(cmd),
		 "objcopy --add-symbol cprof_test_vdso_local=.text:1,function,local '%s' '%s'",
		 image_path, dbg);
	CHECK_INT(system(cmd), ==, 0);

	CHECK_STR(find_vdso(dd, rel, local), "");
	at = put_at(dbg, dd, byid);
	CHECK_STR(find_vdso(dd, rel, local), at);
	/* Nowhere to look without a DEBUG_DIR. */
	CHECK_STR(find_vdso("", rel, local), "");
	CHECK_INT(unlink(at), ==, 0);
	/* Where `make vdso_install` puts it, under DEBUG_DIR/lib/modules/RELEASE. */
	snprintf(mods, sizeof(mods), "lib/modules/%s/vdso/%s", rel, byid);
	at = put_at(dbg, dd, mods);
	CHECK_STR(find_vdso(dd, rel, local), at);
	CHECK_STR(find_vdso(dd, "other-release", local), "");
	CHECK_STR(find_vdso(dd, "../../../..", local), "");
	CHECK_INT(unlink(at), ==, 0);
	snprintf(mods, sizeof(mods), "lib/modules/%s/vdso/vdso64.so", rel);
	at = put_at(dbg, dd, mods);
	CHECK_STR(find_vdso(dd, rel, local), at);
	CHECK_INT(unlink(at), ==, 0);
	snprintf(mods, sizeof(mods), "lib/modules/%s/vdso/vdso.so", rel);
	at = put_at(dbg, dd, mods);
	CHECK_STR(find_vdso(dd, rel, local), at);
	CHECK_INT(unlink(at), ==, 0);
	/* Another build's file there: its build ID differs. */
	snprintf(mods, sizeof(mods), "lib/modules/%s/vdso/vdso64.so", rel);
	put_at(test_build_fixture("known_tree_stripped.debug"), dd, mods);
	put_at(test_build_fixture("known_tree_stripped.debug"), dd, byid);
	CHECK_STR(find_vdso(dd, rel, local), "");
}

/*
 * A debuglink that names a file past the size cap is refused from its size,
 * unread; one under it whose CRC the budget's end cuts short is not taken.
 */
TEST(debug_file_size_cap_and_stop)
{
	const char *dir = scratch("huge");
	struct load_budget now = {.deadline_ns = 1};
	struct debug_file_search ds = {0};
	struct elf_symtab *e, *dbg = NULL;
	char path[1024];

	copy(test_build_fixture("known_tree_stripped"), dir, "bin");
	snprintf(path, sizeof(path), "%s/known_tree_stripped.debug", dir);
	CHECK_INT(close(open(path, O_WRONLY | O_CREAT, 0644)), ==, 0);
	CHECK_INT(truncate(path, 1ll << 40), ==, 0);
	e = open_elf(dir, "bin");
	snprintf(path, sizeof(path), "%s/bin", dir);
	CHECK_INT(debug_file__find(&ds, 0, path, e, &dbg), ==, -ENOENT);
	CHECK_U64(ds.refused[PROC_FILE_TOO_BIG], ==, 1);

	copy(test_build_fixture("known_tree_stripped.debug"), dir, "known_tree_stripped.debug");
	ds.budget = &now;
	CHECK_INT(debug_file__find(&ds, 0, path, e, &dbg), ==, -ENOENT);
	CHECK_U64(ds.crc_stopped, ==, 1);
	ds.budget = NULL;
	CHECK_INT(debug_file__find(&ds, 0, path, e, &dbg), ==, 0);
	elf_symtab__free(dbg);
	elf_symtab__free(e);
}
