// SPDX-License-Identifier: MIT
/*
 * elf_symtab against binutils as the oracle: every function symbol nm reports
 * in the fixture programs (fixtures/src/symbols.c, PIE and non-PIE), in a
 * stripped and a debug-only copy, and in the system libc (.dynsym only) must
 * resolve to its name or an alias at the same address; PT_LOAD segments and
 * the build ID must match readelf. Then corrupt files: each must fail to open
 * cleanly or give empty lookups, never crash (the ASan build checks that).
 * Last, the sources beyond a file's own tables: a separate debug file (and
 * the .gnu_debuglink that names it) and an ELF image in memory (the vDSO).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/load_budget.h"
#include "resolve/elf_symtab.h"
#include "test.h"

struct nm_sym {
	uint64_t addr;
	uint64_t size; /* 0 when nm printed none */
	char type;
	char name[256];
};

struct nm_list {
	struct nm_sym *v;
	size_t n;
};

struct load_seg {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;
};

struct seg_list {
	struct load_seg v[32];
	size_t n;
};

static void need_tool(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd) != 0)
		SKIP("%s not installed", tool);
}

static const char *tmp_path(const char *name)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmp_dir(), name);
	return p;
}

static void run(const char *cmd)
{
	if (system(cmd) != 0)
		test_fail(__FILE__, __LINE__, "command failed: %s", cmd);
}

static bool is_func_letter(char t)
{
	return t == 'T' || t == 't' || t == 'W' || t == 'w' || t == 'i';
}

/* `nm -S --defined-only [-D]`; versions ("@@GLIBC_2.2.5") are stripped from names. */
static void nm_read(const char *path, bool dynamic, struct nm_list *out)
{
	char cmd[1024], line[1024];
	size_t cap = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "",
		 path);
	f = popen(cmd, "r");
	CHECK(f);
	out->v = NULL;
	out->n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, s;
		char t, name[256], *at;
		struct nm_sym *sym;

		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &t, name) == 4) {
		} else if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3) {
			s = 0;
		} else {
			continue;
		}
		at = strchr(name, '@');
		if (at)
			*at = '\0';
		if (out->n == cap) {
			cap = cap ? cap * 2 : 256;
			out->v = realloc(out->v, cap * sizeof(*out->v));
			CHECK(out->v);
		}
		sym = &out->v[out->n++];
		sym->addr = a;
		sym->size = s;
		sym->type = t;
		snprintf(sym->name, sizeof(sym->name), "%s", name);
	}
	CHECK_INT(pclose(f), ==, 0);
}

/* PT_LOAD rows of `readelf -lW`: LOAD offset vaddr paddr filesz memsz flags align. */
static void readelf_segments(const char *path, struct seg_list *out)
{
	char cmd[1024], line[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	out->n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, va, pa, fs, ms;
		int pos = 0;

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx%n", &off, &va, &pa, &fs, &ms,
			   &pos) != 5 ||
		    out->n == sizeof(out->v) / sizeof(out->v[0]))
			continue;
		out->v[out->n++] = (struct load_seg){
			.offset = off,
			.vaddr = va,
			.filesz = fs,
			.memsz = ms,
			/* The flags column reads like "R E" or "RWE" before the alignment. */
			.exec = strchr(line + pos, 'E') != NULL,
		};
	}
	pclose(f);
	CHECK_INT(out->n, >, 0);
}

static bool in_exec_segment(const struct seg_list *segs, uint64_t addr)
{
	size_t i;

	for (i = 0; i < segs->n; i++)
		if (segs->v[i].exec && addr >= segs->v[i].vaddr &&
		    addr < segs->v[i].vaddr + segs->v[i].memsz)
			return true;
	return false;
}

/* nm letters cannot tell a function from a weak data label: keep text-segment ones. */
static bool is_func(const struct nm_sym *s, const struct seg_list *segs)
{
	return is_func_letter(s->type) && in_exec_segment(segs, s->addr);
}

static bool alias_of(const struct nm_list *l, const struct seg_list *segs, uint64_t addr,
		     const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].addr == addr && is_func(&l->v[i], segs) && !strcmp(l->v[i].name, name))
			return true;
	return false;
}

static void expect_alias(struct elf_symtab *e, const struct nm_list *l, const struct seg_list *segs,
			 const struct nm_sym *s, uint64_t addr)
{
	uint64_t off = UINT64_MAX;
	const char *got = elf_symtab__lookup(e, addr, &off);

	if (!got || !alias_of(l, segs, s->addr, got))
		test_fail(__FILE__, __LINE__, "0x%llx (%s+0x%llx): got %s",
			  (unsigned long long)addr, s->name, (unsigned long long)(addr - s->addr),
			  got ? got : "(none)");
	if (off != addr - s->addr)
		test_fail(__FILE__, __LINE__, "0x%llx (%s): offset 0x%llx, want 0x%llx",
			  (unsigned long long)addr, s->name, (unsigned long long)off,
			  (unsigned long long)(addr - s->addr));
}

static bool covered_by_sized(const struct nm_list *l, const struct seg_list *segs, uint64_t addr)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (is_func(&l->v[i], segs) &&
		    (l->v[i].addr == addr ||
		     (l->v[i].size && addr > l->v[i].addr && addr < l->v[i].addr + l->v[i].size)))
			return true;
	return false;
}

static size_t distinct_func_addrs(const struct nm_list *l, const struct seg_list *segs)
{
	size_t i, j, n = 0;

	for (i = 0; i < l->n; i++) {
		if (!is_func(&l->v[i], segs))
			continue;
		for (j = 0; j < i; j++)
			if (is_func(&l->v[j], segs) && l->v[j].addr == l->v[i].addr)
				break;
		n += j == i;
	}
	return n;
}

static uint64_t nm_addr(const struct nm_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].addr;
	test_fail(__FILE__, __LINE__, "nm has no %s", name);
}

/*
 * Every function symbol: start, middle and last byte resolve to it (or an
 * alias); the first byte after a sized symbol that no other symbol covers
 * resolves to nothing. Returns the number of such gaps checked.
 */
static size_t check_against_nm(struct elf_symtab *e, const struct nm_list *l,
			       const struct seg_list *segs)
{
	size_t i, funcs = 0, gaps = 0;

	for (i = 0; i < l->n; i++) {
		const struct nm_sym *s = &l->v[i];
		uint64_t end;

		if (!is_func(s, segs))
			continue;
		funcs++;
		expect_alias(e, l, segs, s, s->addr);
		if (!s->size)
			continue;
		expect_alias(e, l, segs, s, s->addr + s->size / 2);
		expect_alias(e, l, segs, s, s->addr + s->size - 1);
		end = s->addr + s->size;
		if (!covered_by_sized(l, segs, end)) {
			const char *got = elf_symtab__lookup(e, end, NULL);

			if (got)
				test_fail(__FILE__, __LINE__, "gap 0x%llx after %s: got %s",
					  (unsigned long long)end, s->name, got);
			gaps++;
		}
	}
	CHECK_INT(funcs, >, 0);
	return gaps;
}

/* Whether addr is in the file's .plt.got section. */
static bool in_plt_got(const char *path, unsigned long long addr)
{
	char cmd[1024], line[1024];
	bool in = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, off, size;
		char name[64], type[64];
		const char *p = strchr(line, ']');

		if (p &&
		    sscanf(p + 1, "%63s %63s %llx %llx %llx", name, type, &start, &off, &size) ==
			    5 &&
		    !strcmp(name, ".plt.got") && addr >= start && addr < start + size)
			in = true;
	}
	pclose(f);
	return in;
}

/*
 * The PLT's stubs are named as objdump names them (NAME@plt), and no other
 * symbol claims the PLT (crt's size-0 _init sits right before it). Returns
 * the number of named stubs.
 */
static size_t check_plt_stubs(struct elf_symtab *e, const char *path)
{
	char cmd[1024], line[1024], name[512];
	unsigned long long addr;
	const char *got;
	size_t stubs = 0;
	FILE *f;

	need_tool("objdump");
	snprintf(cmd, sizeof(cmd), "objdump -d '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		size_t len;

		if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2)
			continue;
		len = strlen(name);
		/* An IFUNC's stub (IRELATIVE, no symbol: "*ABS*+0xADDR@plt") stays unnamed, */
		if (len < 5 || strcmp(name + len - 4, "@plt") || !strncmp(name, "*ABS*", 5))
			continue;
		/* and so do .plt.got's (see elf_plt.h). */
		if (in_plt_got(path, addr))
			continue;
		got = elf_symtab__lookup(e, addr, NULL);
		if (!got || strcmp(got, name))
			test_fail(__FILE__, __LINE__, "PLT stub at 0x%llx: %s, objdump says %s",
				  addr, got ? got : "(none)", name);
		stubs++;
	}
	pclose(f);
	return stubs;
}

static void check_plt_unclaimed(struct elf_symtab *e, const char *path)
{
	char cmd[1024], line[1024];
	const char *got;
	int checked = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr, off, size;
		char name[64], type[64];
		const char *p = strchr(line, ']');

		if (!p ||
		    sscanf(p + 1, "%63s %63s %llx %llx %llx", name, type, &addr, &off, &size) != 5)
			continue;
		if (strncmp(name, ".plt", 4) || !size)
			continue;
		got = elf_symtab__lookup(e, addr + size - 1, NULL);
		if (got && (strlen(got) < 5 || strcmp(got + strlen(got) - 4, "@plt")))
			test_fail(__FILE__, __LINE__, "%s at 0x%llx is given a symbol: %s", name,
				  addr, got);
		checked++;
	}
	pclose(f);
	CHECK_INT(checked, >, 0);
}

/* The ELF type in the file's header. */
static int elf_type(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = fopen(path, "rb");

	CHECK(f);
	CHECK_U64(fread(&eh, sizeof(eh), 1, f), ==, 1);
	fclose(f);
	return eh.e_type;
}

static void check_fixture(const char *name, int want_type)
{
	const char *path = test_build_fixture(name);
	struct elf_symtab *e = NULL;
	struct seg_list segs;
	struct nm_list l;
	uint64_t off;
	size_t gaps;

	need_tool("nm");
	need_tool("readelf");
	nm_read(path, false, &l);
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	CHECK_INT(elf_type(path), ==, want_type);
	CHECK_INT(elf_symtab__symbol_count(e), ==,
		  distinct_func_addrs(&l, &segs) + check_plt_stubs(e, path));
	gaps = check_against_nm(e, &l, &segs);
	/* The 64-byte aligned functions leave at least 15 gaps. */
	CHECK_INT(gaps, >=, 15);
	check_plt_unclaimed(e, path);

	/* Deterministic alias choice: global over weak, global ifunc over its local resolver. */
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "weak_alias_fn"), NULL), "global_fn_00");
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "resolve_ifunc_fn"), NULL), "ifunc_fn");
	/* The size-0 asm function covers its own instructions. */
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "asm_nosize_fn") + 2, &off), "asm_nosize_fn");
	CHECK_U64(off, ==, 2);
	/* So does a label without a type (STT_NOTYPE), as perf names it. */
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "asm_label_fn") + 2, &off), "asm_label_fn");
	CHECK_U64(off, ==, 2);
	CHECK(elf_symtab__lookup(e, 0, NULL) == NULL);
	CHECK(elf_symtab__lookup(e, UINT64_MAX, NULL) == NULL);
	elf_symtab__free(e);
	free(l.v);
}

TEST(elf_symtab_pie_matches_nm)
{
	check_fixture("symbols", ET_DYN);
}

TEST(elf_symtab_nopie_matches_nm)
{
	check_fixture("symbols_nopie", ET_EXEC);
}

static void check_segments(const char *name)
{
	const char *path = test_build_fixture(name);
	struct elf_symtab *e = NULL;
	struct seg_list segs;
	uint64_t va, max_end = 0;
	size_t i;

	need_tool("readelf");
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	for (i = 0; i < segs.n; i++) {
		const struct load_seg *s = &segs.v[i];

		if (!s->filesz)
			continue;
		CHECK_INT(elf_symtab__offset_to_vaddr(e, s->offset, &va), ==, 0);
		CHECK_U64(va, ==, s->vaddr);
		CHECK_INT(elf_symtab__offset_to_vaddr(e, s->offset + s->filesz / 2, &va), ==, 0);
		CHECK_U64(va, ==, s->vaddr + s->filesz / 2);
		CHECK_INT(elf_symtab__offset_to_vaddr(e, s->offset + s->filesz - 1, &va), ==, 0);
		CHECK_U64(va, ==, s->vaddr + s->filesz - 1);
		if (s->offset + s->filesz > max_end)
			max_end = s->offset + s->filesz;
	}
	CHECK_INT(elf_symtab__offset_to_vaddr(e, max_end, &va), ==, -ENOENT);
	CHECK_INT(elf_symtab__offset_to_vaddr(e, UINT64_MAX, &va), ==, -ENOENT);
	elf_symtab__free(e);
}

TEST(elf_symtab_pie_offset_to_vaddr)
{
	check_segments("symbols");
}

TEST(elf_symtab_nopie_offset_to_vaddr)
{
	check_segments("symbols_nopie");
}

/* "Build ID: <hex>" as printed by readelf -n (or eu-readelf -n). */
static bool tool_build_id(const char *path, char *out, size_t size)
{
	static const char *const tools[] = {"readelf", "eu-readelf"};
	char cmd[1024], line[1024];
	bool found = false;
	size_t i;

	for (i = 0; i < 2 && !found; i++) {
		FILE *f;

		snprintf(cmd, sizeof(cmd), "%s -n '%s' 2>/dev/null", tools[i], path);
		f = popen(cmd, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *p = strstr(line, "Build ID: ");

			if (p && !found) {
				p += strlen("Build ID: ");
				p[strcspn(p, " \r\n")] = '\0';
				snprintf(out, size, "%s", p);
				found = true;
			}
		}
		pclose(f);
	}
	return found;
}

TEST(elf_symtab_build_id)
{
	static const char *const names[] = {"symbols", "symbols_nopie"};
	char want[256];
	size_t i;

	for (i = 0; i < 2; i++) {
		const char *path = test_build_fixture(names[i]);
		struct elf_symtab *e = NULL;

		if (!tool_build_id(path, want, sizeof(want)))
			SKIP("neither readelf nor eu-readelf shows a build ID for %s", path);
		CHECK_INT(elf_symtab__open(path, &e), ==, 0);
		CHECK_STR(elf_symtab__build_id(e), want);
		CHECK_INT(strlen(want), ==, 40);
		elf_symtab__free(e);
	}
}

TEST(elf_symtab_stripped_copy)
{
	const char *path = test_build_fixture("symbols");
	const char *stripped = tmp_path("symbols.stripped");
	struct elf_symtab *e = NULL, *orig = NULL;
	struct nm_list full, dyn;
	struct seg_list segs;
	char cmd[2048];

	need_tool("objcopy");
	need_tool("nm");
	need_tool("readelf");
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s'", path, stripped);
	run(cmd);
	nm_read(path, false, &full);
	nm_read(stripped, true, &dyn);
	readelf_segments(stripped, &segs);
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK_INT(elf_symtab__open(path, &orig), ==, 0);
	/* An executable exports no functions: only what .dynsym defines, and the PLT, may be found.
	 */
	CHECK_INT(elf_symtab__symbol_count(e), ==,
		  distinct_func_addrs(&dyn, &segs) + check_plt_stubs(e, stripped));
	if (distinct_func_addrs(&dyn, &segs))
		check_against_nm(e, &dyn, &segs);
	CHECK(elf_symtab__lookup(e, nm_addr(&full, "static_fn_00"), NULL) == NULL);
	CHECK(elf_symtab__lookup(e, nm_addr(&full, "main"), NULL) == NULL);
	CHECK_STR(elf_symtab__build_id(e), elf_symtab__build_id(orig));
	elf_symtab__free(e);
	elf_symtab__free(orig);
	free(full.v);
	free(dyn.v);
}

/* A separate debug file: code sections are SHT_NOBITS but .symtab is all there. */
TEST(elf_symtab_debug_only_copy)
{
	const char *path = test_build_fixture("symbols");
	const char *debug = tmp_path("symbols.debug");
	struct elf_symtab *e = NULL;
	struct seg_list segs;
	struct nm_list l;
	char cmd[2048];

	need_tool("objcopy");
	need_tool("nm");
	need_tool("readelf");
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s'", path, debug);
	run(cmd);
	nm_read(path, false, &l);
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(debug, &e), ==, 0);
	CHECK_INT(elf_symtab__symbol_count(e), ==, distinct_func_addrs(&l, &segs));
	check_against_nm(e, &l, &segs);
	elf_symtab__free(e);
	free(l.v);
}

/* A large library built with -fcf-protection (.plt.sec): every stub objdump names. */
TEST(elf_symtab_plt_stubs_of_libstdcxx)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	struct elf_symtab *e = NULL;

	if (access(path, R_OK))
		SKIP("no %s", path);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	CHECK_INT(check_plt_stubs(e, path), >, 500);
	elf_symtab__free(e);
}

TEST(elf_symtab_system_libc_dynsym)
{
	const char *path = test_system_libc();
	struct elf_symtab *e = NULL;
	struct seg_list segs;
	struct nm_list l;
	size_t i, checked = 0;
	int malloc_seen = 0, memcpy_seen = 0;

	need_tool("nm");
	need_tool("readelf");
	nm_read(path, true, &l);
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	CHECK_INT(elf_type(path), ==, ET_DYN);
	CHECK_INT(elf_symtab__symbol_count(e), >, 1000);
	/*
	 * Start addresses only: glibc's assembly nests entry points inside larger
	 * functions, where the middle of the outer one rightly resolves to the inner.
	 */
	for (i = 0; i < l.n; i++) {
		const struct nm_sym *s = &l.v[i];

		if (!is_func(s, &segs))
			continue;
		expect_alias(e, &l, &segs, s, s->addr);
		malloc_seen += !strcmp(s->name, "malloc");
		memcpy_seen += !strcmp(s->name, "memcpy");
		checked++;
	}
	CHECK_INT(checked, >, 1000);
	CHECK_INT(malloc_seen, >=, 1);
	CHECK_INT(memcpy_seen, >=, 1);
	elf_symtab__free(e);
	free(l.v);
}

/* Opens a damaged file: a clean error, or an object whose every answer is sane. */
static int poke(const char *path, const struct nm_list *l)
{
	struct elf_symtab *e = NULL;
	const char *bid;
	uint64_t va;
	size_t i;
	int err;

	err = elf_symtab__open(path, &e);
	if (err) {
		CHECK(e == NULL);
		CHECK_INT(err, <, 0);
		CHECK_INT(err, >, -4096);
		return err;
	}
	bid = elf_symtab__build_id(e);
	if (bid)
		CHECK_INT(strlen(bid), <=, 128);
	for (i = 0; i < 64; i++)
		elf_symtab__offset_to_vaddr(e, i * 4096, &va);
	elf_symtab__symbol_count(e);
	for (i = 0; l && i < l->n; i++) {
		const char *name = elf_symtab__lookup(e, l->v[i].addr, NULL);

		if (name)
			CHECK_INT(strlen(name), <, 1 << 20);
	}
	elf_symtab__free(e);
	return 0;
}

static Elf64_Shdr *find_section(uint8_t *img, uint32_t type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	int i;

	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	test_fail(__FILE__, __LINE__, "fixture has no section of type %u", type);
}

static Elf64_Phdr *find_segment(uint8_t *img, uint32_t type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	test_fail(__FILE__, __LINE__, "fixture has no segment of type %u", type);
}

enum damage {
	DMG_SHNUM_PAST_END,
	DMG_SHOFF_PAST_END,
	DMG_PHNUM_HUGE,
	DMG_PHOFF_PAST_END,
	DMG_SYMTAB_SIZE_HUGE,
	DMG_SYMTAB_OFFSET_PAST_END,
	DMG_SYMTAB_LINK_BOGUS,
	DMG_STRTAB_SIZE_HUGE,
	DMG_STRTAB_UNTERMINATED,
	DMG_NOTE_SIZE_HUGE,
	DMG_NOTE_NAMESZ_HUGE,
	DMG_SHSTRNDX_BOGUS,
	DMG_COUNT,
};

static void damage(uint8_t *img, size_t len, enum damage d)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;
	Elf64_Phdr *ph;

	switch (d) {
	case DMG_SHNUM_PAST_END:
		eh->e_shnum = 0xfff0;
		break;
	case DMG_SHOFF_PAST_END:
		eh->e_shoff = len - 16;
		break;
	case DMG_PHNUM_HUGE:
		eh->e_phnum = 0xfffe;
		break;
	case DMG_PHOFF_PAST_END:
		eh->e_phoff = (uint64_t)len * 1000;
		break;
	case DMG_SYMTAB_SIZE_HUGE:
		find_section(img, SHT_SYMTAB)->sh_size = 1ULL << 40;
		break;
	case DMG_SYMTAB_OFFSET_PAST_END:
		find_section(img, SHT_SYMTAB)->sh_offset = UINT64_MAX - 8;
		break;
	case DMG_SYMTAB_LINK_BOGUS:
		find_section(img, SHT_SYMTAB)->sh_link = 0xfff0;
		break;
	case DMG_STRTAB_SIZE_HUGE:
		sh = find_section(img, SHT_SYMTAB);
		((Elf64_Shdr *)(img + eh->e_shoff))[sh->sh_link].sh_size = 1ULL << 40;
		break;
	case DMG_STRTAB_UNTERMINATED:
		sh = find_section(img, SHT_SYMTAB);
		sh = &((Elf64_Shdr *)(img + eh->e_shoff))[sh->sh_link];
		memset(img + sh->sh_offset, 'A', sh->sh_size);
		break;
	case DMG_NOTE_SIZE_HUGE:
		ph = find_segment(img, PT_NOTE);
		ph->p_filesz = 1ULL << 40;
		find_section(img, SHT_NOTE)->sh_size = 1ULL << 40;
		break;
	case DMG_NOTE_NAMESZ_HUGE: {
		/* The first note's n_namesz, in the segment and the section alike. */
		Elf64_Nhdr *nh;

		ph = find_segment(img, PT_NOTE);
		nh = (Elf64_Nhdr *)(img + ph->p_offset);
		nh->n_namesz = 0xfffffff0;
		nh->n_descsz = 0xfffffff0;
		break;
	}
	case DMG_SHSTRNDX_BOGUS:
		eh->e_shstrndx = 0xfff0;
		break;
	case DMG_COUNT:
		break;
	}
}

TEST(elf_symtab_corrupt_headers)
{
	const char *path = test_build_fixture("symbols");
	struct seg_list segs;
	struct nm_list l;
	uint8_t *orig, *img;
	size_t len;
	int d, err;

	need_tool("nm");
	need_tool("readelf");
	nm_read(path, false, &l);
	readelf_segments(path, &segs);
	orig = test_read_file(path, &len);
	CHECK(!memcmp(orig, ELFMAG, SELFMAG) && orig[EI_CLASS] == ELFCLASS64);
	img = malloc(len);
	CHECK(img);
	for (d = 0; d < DMG_COUNT; d++) {
		char name[64];

		memcpy(img, orig, len);
		damage(img, len, d);
		snprintf(name, sizeof(name), "damaged-%d", d);
		err = poke(test_write_tmp(name, img, len), &l);
		/* Section headers out of the file make the whole file unreadable. */
		if (d == DMG_SHNUM_PAST_END || d == DMG_SHOFF_PAST_END || d == DMG_PHNUM_HUGE ||
		    d == DMG_PHOFF_PAST_END)
			CHECK_INT(err, ==, -ENOEXEC);
	}
	/* A broken .symtab costs its symbols, not the file: static functions are gone. */
	memcpy(img, orig, len);
	damage(img, len, DMG_SYMTAB_SIZE_HUGE);
	{
		struct elf_symtab *e = NULL;

		CHECK_INT(elf_symtab__open(test_write_tmp("symtab-huge", img, len), &e), ==, 0);
		CHECK(elf_symtab__lookup(e, nm_addr(&l, "static_fn_00"), NULL) == NULL);
		CHECK(elf_symtab__build_id(e) != NULL);
		elf_symtab__free(e);
	}
	free(img);
	free(orig);
	free(l.v);
}

TEST(elf_symtab_corrupt_files)
{
	const char *path = test_build_fixture("symbols");
	struct elf_symtab *e = NULL;
	uint8_t *orig, *rnd;
	uint32_t x = 12345;
	size_t len, i;
	int err;

	orig = test_read_file(path, &len);
	CHECK(len > 8192);
	CHECK_INT(poke(test_write_tmp("empty", "", 0), NULL), ==, -ENOEXEC);
	CHECK_INT(poke(test_write_tmp("trunc-100", orig, 100), NULL), ==, -ENOEXEC);
	/* Headers intact, sections cut off: refused, or opened with nothing to find. */
	poke(test_write_tmp("trunc-4k", orig, 4096), NULL);
	poke(test_write_tmp("trunc-half", orig, len / 2), NULL);
	poke(test_write_tmp("trunc-last", orig, len - 1), NULL);

	rnd = malloc(65536);
	CHECK(rnd);
	for (i = 0; i < 65536; i++) {
		x = x * 1103515245 + 12345;
		rnd[i] = x >> 16;
	}
	CHECK_INT(poke(test_write_tmp("random", rnd, 65536), NULL), ==, -ENOEXEC);
	/* Random bytes behind a valid ELF identification. */
	memcpy(rnd, orig, EI_NIDENT);
	poke(test_write_tmp("random-elf", rnd, 65536), NULL);
	/* The original's header over random contents. */
	memcpy(rnd, orig, sizeof(Elf64_Ehdr));
	poke(test_write_tmp("random-body", rnd, 65536), NULL);
	free(rnd);

	/* Not regular files, or no file at all. */
	CHECK_INT(elf_symtab__open(test_tmp_dir(), &e), ==, -EINVAL);
	CHECK(e == NULL);
	CHECK_INT(elf_symtab__open("/dev/null", &e), ==, -EINVAL);
	CHECK_INT(elf_symtab__open(tmp_path("does-not-exist"), &e), ==, -ENOENT);
	/* open_fd owns the descriptor; the display path is only for messages. */
	err = elf_symtab__open_fd(open(path, O_RDONLY), "fd-copy", &e);
	CHECK_INT(err, ==, 0);
	CHECK(elf_symtab__symbol_count(e) > 0);
	elf_symtab__free(e);
	CHECK_INT(elf_symtab__open_fd(-1, NULL, &e), ==, -EBADF);
	elf_symtab__free(NULL);
	CHECK(elf_symtab__lookup(NULL, 1, NULL) == NULL);
	CHECK(elf_symtab__build_id(NULL) == NULL);
	free(orig);
}

/* The CRC32 of .gnu_debuglink is zlib's (IEEE 802.3), over the whole debug file. */
TEST(elf_symtab_debuglink_crc)
{
	const char *stripped = test_build_fixture("known_tree_stripped");
	const char *debug = test_build_fixture("known_tree_stripped.debug");
	struct elf_symtab *e = NULL;
	uint32_t link_crc = 0;
	uint8_t *data;
	size_t len;

	/* What objcopy --add-gnu-debuglink recorded. */
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK(!elf_symtab__has_symtab(e));
	CHECK_STR(elf_symtab__debuglink(e, &link_crc), "known_tree_stripped.debug");
	data = test_read_file(debug, &len);
	CHECK_U64(crc32(0L, data, (uInt)len), ==, link_crc);
	free(data);
	elf_symtab__free(e);
}

/* A stripped file named through its debug file resolves exactly like the original. */
TEST(elf_symtab_symbols_from_debug_file)
{
	const char *path = test_build_fixture("known_tree");
	const char *stripped = test_build_fixture("known_tree_stripped");
	const char *debug = test_build_fixture("known_tree_stripped.debug");
	struct elf_symtab *e = NULL, *dbg = NULL;
	struct seg_list segs;
	struct nm_list l;

	need_tool("nm");
	need_tool("readelf");
	nm_read(path, false, &l);
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK(elf_symtab__lookup(e, nm_addr(&l, "hot_a"), NULL) == NULL);
	elf_symtab__free(e);

	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK_INT(elf_symtab__open(debug, &dbg), ==, 0);
	CHECK(elf_symtab__has_symtab(dbg));
	CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, 0);
	CHECK_STR(elf_symtab__debug_path(e), debug);
	CHECK_INT(elf_symtab__symbol_count(e), ==,
		  distinct_func_addrs(&l, &segs) + check_plt_stubs(e, stripped));
	check_against_nm(e, &l, &segs);
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "hot_a"), NULL), "hot_a");
	elf_symtab__free(e);
	free(l.v);
}

/*
 * A debug file that comes after the symbols were loaded (from debuginfod,
 * while sampling went on): the names come from it from then on, all of
 * them but the PLT stubs, as the stripped file is closed by then.
 */
TEST(elf_symtab_debug_file_after_load)
{
	const char *path = test_build_fixture("known_tree");
	const char *stripped = test_build_fixture("known_tree_buildid");
	const char *debug = test_build_fixture("known_tree_stripped.debug");
	const char *other = test_build_fixture("known_tree_nopie");
	struct elf_symtab *e = NULL, *dbg = NULL;
	struct seg_list segs;
	struct nm_list l;

	need_tool("nm");
	need_tool("readelf");
	nm_read(path, false, &l);
	readelf_segments(path, &segs);
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK(elf_symtab__lookup(e, nm_addr(&l, "hot_a"), NULL) == NULL);
	/* Another build's file is refused, and the table stays as it was. */
	CHECK_INT(elf_symtab__open(other, &dbg), ==, 0);
	CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, -ESTALE);
	CHECK(elf_symtab__lookup(e, nm_addr(&l, "hot_b"), NULL) == NULL);
	CHECK_INT(elf_symtab__open(debug, &dbg), ==, 0);
	CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, 0);
	CHECK_STR(elf_symtab__debug_path(e), debug);
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "hot_a"), NULL), "hot_a");
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "hot_b"), NULL), "hot_b");
	CHECK_INT(elf_symtab__symbol_count(e), ==, distinct_func_addrs(&l, &segs));
	check_against_nm(e, &l, &segs);
	elf_symtab__free(e);
	free(l.v);
}

/* Stripped: hot_a has no name, but .eh_frame_hdr knows where its function starts. */
TEST(elf_symtab_function_start_without_symbols)
{
	const char *path = test_build_fixture("known_tree");
	const char *stripped = test_build_fixture("known_tree_stripped");
	const char *debug = test_build_fixture("known_tree_stripped.debug");
	struct elf_symtab *e = NULL, *dbg = NULL;
	uint64_t hot_a, start = 0;
	struct nm_list l;

	uint8_t *image;
	size_t size;

	need_tool("nm");
	nm_read(path, false, &l);
	hot_a = nm_addr(&l, "hot_a");
	/* From a file: read at the first address no symbol names, not at load. */
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK(elf_symtab__lookup(e, hot_a + 4, NULL) == NULL);
	CHECK(elf_symtab__function_start(e, hot_a + 4, &start));
	CHECK_U64(start, ==, hot_a);
	elf_symtab__free(e);
	/* An image in memory, as the vDSO is read. */
	image = test_read_file(stripped, &size);
	CHECK_INT(elf_symtab__open_memory(image, size, "stripped", &e), ==, 0);
	free(image);
	CHECK(elf_symtab__lookup(e, hot_a + 4, NULL) == NULL);
	CHECK(elf_symtab__function_start(e, hot_a, &start));
	CHECK_U64(start, ==, hot_a);
	CHECK(elf_symtab__function_start(e, hot_a + 4, &start));
	CHECK_U64(start, ==, hot_a);
	CHECK(!elf_symtab__function_start(e, 0, &start));
	elf_symtab__free(e);

	/* With symbols (here from the debug file), names do the job: no extents kept. */
	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK_INT(elf_symtab__open(debug, &dbg), ==, 0);
	CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, 0);
	CHECK(!elf_symtab__function_start(e, hot_a + 4, &start));
	elf_symtab__free(e);
	free(l.v);
}

TEST(elf_symtab_debug_file_of_another_build_refused)
{
	const char *stripped = test_build_fixture("known_tree_stripped");
	const char *other = test_build_fixture("symbols");
	struct elf_symtab *e = NULL, *dbg = NULL;

	CHECK_INT(elf_symtab__open(stripped, &e), ==, 0);
	CHECK_INT(elf_symtab__open(other, &dbg), ==, 0);
	CHECK_INT(elf_symtab__set_debug_file(e, dbg), ==, -ESTALE);
	CHECK(elf_symtab__debug_path(e) == NULL);
	CHECK_INT(elf_symtab__set_debug_file(e, NULL), ==, -EINVAL);
	elf_symtab__free(e);
}

/* Crafted .gnu_debuglink sections: only a plain file name followed by its CRC counts. */
TEST(elf_symtab_crafted_debuglink)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *want; /* NULL: refused */
		uint32_t crc;
	} cases[] = {
		{"x.debug\0\x78\x56\x34\x12", 12, "x.debug", 0x12345678},
		{"ab\0\0\x01\x02\x03\x04", 8, "ab", 0x04030201},
		{"../../etc/passwd\0\0\0\0\x01\x02\x03\x04", 21, NULL, 0},
		{"no-terminator-at-all", 20, NULL, 0},
		{"short\0\0\0\x01\x02", 10, NULL, 0}, /* CRC cut off */
		{"..\0\0\x01\x02\x03\x04", 8, NULL, 0},
		{"\0\0\0\0\x01\x02\x03\x04", 8, NULL, 0},
	};
	const char *base = test_build_fixture("known_tree_buildid");
	char cmd[4096], name[64];
	size_t i;

	need_tool("objcopy");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct elf_symtab *e = NULL;
		const char *sec, *out;
		uint32_t crc = 0;

		snprintf(name, sizeof(name), "link-%zu.bin", i);
		sec = test_write_tmp(name, cases[i].bytes, cases[i].len);
		snprintf(name, sizeof(name), "linked-%zu", i);
		out = tmp_path(name);
		snprintf(cmd, sizeof(cmd), "objcopy --add-section .gnu_debuglink='%s' '%s' '%s'",
			 sec, base, out);
		run(cmd);
		CHECK_INT(elf_symtab__open(out, &e), ==, 0);
		if (cases[i].want) {
			CHECK_STR(elf_symtab__debuglink(e, &crc), cases[i].want);
			CHECK_U64(crc, ==, cases[i].crc);
		} else {
			CHECK(elf_symtab__debuglink(e, &crc) == NULL);
		}
		elf_symtab__free(e);
	}
}

/* Our own vDSO, parsed from memory, against nm on a copy of the image. */
TEST(elf_symtab_vdso_from_memory)
{
	struct elf_symtab *e = NULL;
	struct seg_list segs;
	struct nm_list l;
	const char *copy;
	size_t size, i, named = 0;
	const void *base = test_vdso(&size);

	if (!base)
		SKIP("no vDSO on this system");
	need_tool("nm");
	need_tool("readelf");
	copy = test_write_tmp("vdso.so", base, size);
	nm_read(copy, true, &l);
	readelf_segments(copy, &segs);
	CHECK_INT(elf_symtab__open_memory(base, size, "[vdso]", &e), ==, 0);
	CHECK(elf_symtab__build_id(e) != NULL);
	CHECK_INT(elf_symtab__symbol_count(e), ==, distinct_func_addrs(&l, &segs));
	check_against_nm(e, &l, &segs);
	for (i = 0; i < l.n; i++) {
		const char *got = elf_symtab__lookup(e, l.v[i].addr, NULL);

		/* The clock_gettime entry point of x86_64 and of arm64. */
		named += got && !strcmp(l.v[i].name, got) &&
			 (!strcmp(got, "__vdso_clock_gettime") ||
			  !strcmp(got, "__kernel_clock_gettime"));
	}
	CHECK_INT(named, ==, 1);
	elf_symtab__free(e);
	free(l.v);

	/* Bad images fail cleanly. */
	CHECK_INT(elf_symtab__open_memory(NULL, 10, NULL, &e), ==, -EINVAL);
	CHECK_INT(elf_symtab__open_memory("x", 0, NULL, &e), ==, -EINVAL);
	CHECK_INT(elf_symtab__open_memory("\x7f"
					  "ELF",
					  4, NULL, &e),
		  ==, -ENOEXEC);
	CHECK_INT(elf_symtab__open_memory((const void *)base, 64, "[vdso] head", &e), ==, -ENOEXEC);
	CHECK(e == NULL);
}

/* 200,000 one-instruction functions: each sampled one is found exactly, not a neighbour. */
TEST(elf_symtab_big_table)
{
	const char *path = test_build_fixture("big_symtab");
	struct elf_symtab *e = NULL;
	struct nm_list l;
	size_t i, big = 0, checked = 0;

	need_tool("nm");
	nm_read(path, false, &l);
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	CHECK_INT(elf_symtab__symbol_count(e), >=, 200000);
	for (i = 0; i < l.n; i++) {
		const struct nm_sym *s = &l.v[i];
		uint64_t off = 1;

		if (strncmp(s->name, "big_fn_", 7))
			continue;
		big++;
		if (big % 97)
			continue;
		CHECK(s->size > 0);
		CHECK_STR(elf_symtab__lookup(e, s->addr, &off), s->name);
		CHECK_U64(off, ==, 0);
		CHECK_STR(elf_symtab__lookup(e, s->addr + s->size - 1, NULL), s->name);
		checked++;
	}
	CHECK_INT(big, ==, 200000);
	CHECK_INT(checked, >, 2000);
	CHECK_STR(elf_symtab__lookup(e, nm_addr(&l, "big_symtab_spin"), NULL), "big_symtab_spin");
	elf_symtab__free(e);
	free(l.v);
}

/*
 * A file written by hostile_elf with n symbols, its .symtab then claiming
 * entries (n real ones, zeros after them, in a sparse file).
 */
static const char *claimed_symtab(const char *name, size_t n, uint64_t entries)
{
	const char *path = tmp_path(name);
	char cmd[1024];
	Elf64_Shdr *sh;
	struct stat st;
	uint8_t *img;
	int fd;

	snprintf(cmd, sizeof(cmd), "%s symtab %zu %s", test_build_fixture("hostile_elf"), n, path);
	run(cmd);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_INT(fstat(fd, &st), ==, 0);
	img = malloc(st.st_size);
	CHECK(img && pread(fd, img, st.st_size, 0) == st.st_size);
	sh = find_section(img, SHT_SYMTAB);
	/* The table moves to the end, where the file grows to hold it. */
	CHECK_INT(pwrite(fd, img + sh->sh_offset, sh->sh_size, st.st_size), ==,
		  (ssize_t)sh->sh_size);
	sh->sh_offset = st.st_size;
	sh->sh_size = entries * sizeof(Elf64_Sym);
	CHECK_INT(ftruncate(fd, st.st_size + sh->sh_size), ==, 0);
	CHECK_INT(pwrite(fd, img + ((Elf64_Ehdr *)img)->e_shoff, 6 * sizeof(Elf64_Shdr),
			 ((Elf64_Ehdr *)img)->e_shoff),
		  ==, 6 * (ssize_t)sizeof(Elf64_Shdr));
	close(fd);
	free(img);
	return path;
}

/* Symbols of count entries claimed, loaded under budget b: how many. */
static size_t count_with_budget(const char *path, struct load_budget *b)
{
	struct elf_symtab *e = NULL;
	size_t n;

	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	elf_symtab__set_budget(e, b);
	n = elf_symtab__symbol_count(e);
	/* Remembered: asked again, the file is not read again, nor counted twice. */
	CHECK_INT(elf_symtab__symbol_count(e), ==, n);
	elf_symtab__free(e);
	return n;
}

TEST(elf_symtab_over_the_cap_refused_whole)
{
	struct load_budget b = {0};
	const char *under = claimed_symtab("under.so", 1000, LOAD_MAX_SYMBOLS);
	const char *over = claimed_symtab("over.so", 1000, LOAD_MAX_SYMBOLS + 1);

	CHECK_INT(count_with_budget(under, &b), ==, 1000);
	CHECK_U64(b.symtabs_refused, ==, 0);
	CHECK_INT(count_with_budget(over, &b), ==, 0);
	CHECK_U64(b.symtabs_refused, ==, 1);
	CHECK_U64(b.symtabs_abandoned, ==, 0);
}

/* All files' symbols together are held to LOAD_MAX_HELD_SYMBOLS, given back when a file goes. */
TEST(elf_symtab_symbols_held_by_all_files_capped)
{
	struct load_budget b = {.symbols_held = LOAD_MAX_HELD_SYMBOLS - 500};
	const char *path = claimed_symtab("held.so", 1000, 1001);
	struct elf_symtab *e = NULL;

	CHECK_INT(count_with_budget(path, &b), ==, 0);
	CHECK_U64(b.symtabs_over_held, ==, 1);
	CHECK_U64(b.symtabs_refused, ==, 0);
	b.symbols_held = 0;
	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	elf_symtab__set_budget(e, &b);
	CHECK_INT(elf_symtab__symbol_count(e), ==, 1000);
	CHECK_U64(b.symbols_held, ==, 1000);
	elf_symtab__free(e);
	CHECK_U64(b.symbols_held, ==, 0);
	CHECK_U64(b.symtabs_over_held, ==, 1);
}

TEST(elf_symtab_past_the_deadline_not_loaded)
{
	struct load_budget b = {.deadline_ns = 1};
	const char *path = claimed_symtab("late.so", 1000, 1001);

	CHECK_INT(count_with_budget(path, &b), ==, 0);
	CHECK_U64(b.symtabs_abandoned, ==, 1);
	CHECK_U64(b.symtabs_refused, ==, 0);
	b.deadline_ns = 0;
	CHECK_INT(count_with_budget(path, &b), ==, 1000);
}
