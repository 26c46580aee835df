// SPDX-License-Identifier: MIT
/*
 * go_pclntab against Go's own tools as the oracle, then crafted and corrupt
 * tables.
 *
 * Real tables: a Go program (go_prog below: methods, a closure, a generic
 * function) is built by the test with Debian's Go, stripped (-ldflags='-s
 * -w') and not. Every function `go tool nm` lists in the unstripped build
 * must be in our table of the stripped one, at the same address, under the
 * same name, and nothing else may be there. Deliberate differences, all
 * Go's own (the table holds the names Go's tracebacks print, the symbol
 * table the linker's):
 *  - runtime.text and runtime.etext are markers of the text's bounds (size
 *    0), not functions: not in the table;
 *  - assembly functions (ABI0) are "runtime.goexit.abi0" in the symbol
 *    table and "runtime.goexit" in Go's table;
 *  - an instantiated generic function is "main.Map[go.shape.int_0]" in the
 *    symbol table and "main.Map[...]" in Go's table (the linker writes what
 *    lies between the first '[' and the last ']' as "...").
 * Then debug/gosym, Go's reader of the same table, as a small program the
 * test builds (gosym_dump below): every function, start, end and name, of
 * that program (also built position-independent, where the table is
 * .data.rel.ro.gopclntab), of Debian's own stripped `go` command, and of the
 * program cross-built for mips (32-bit big-endian, 4-byte instructions) and
 * s390x (64-bit big-endian, 2-byte instructions), whose tables are parsed
 * from their bytes. For Debian's `go`, `go tool addr2line` also names
 * runtime.main and main.main at the starts we give them, and something
 * else one byte before. Without go the tests skip, saying so.
 *
 * Crafted tables: one per layout (1.2, 1.16, 1.18 big-endian with 4-byte
 * pointers, 1.20), written byte by byte below, each with its expected
 * functions; then cut at every length, every byte changed, and the
 * specific lies a table can tell (offsets and counts past its end, names
 * without an end, unsorted entries, records that disagree with the
 * function table): each gives an error or a bounded result, never a read
 * outside the buffer (the ASan build copies each input to a buffer of its
 * exact size).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/load_budget.h"
#include "resolve/elf_symtab.h"
#include "lib/go_pclntab.h"
#include "test.h"

/* --- real programs ------------------------------------------------------------------------ */

static const char go_prog[] =
	"package main\n"
	"\n"
	"import \"os\"\n"
	"\n"
	"type T struct{ n int }\n"
	"\n"
	"//go:noinline\n"
	"func (t *T) m(x int) int { return t.n*x + 1 }\n"
	"\n"
	"//go:noinline\n"
	"func (t T) v(x int) int { return t.n + x }\n"
	"\n"
	"//go:noinline\n"
	"func Map[E any](s []E, f func(E) E) []E {\n"
	"\tfor i := range s {\n"
	"\t\ts[i] = f(s[i])\n"
	"\t}\n"
	"\treturn s\n"
	"}\n"
	"\n"
	"//go:noinline\n"
	"func hot(x uint64) uint64 {\n"
	"\tfor i := 0; i < 1000; i++ {\n"
	"\t\tx = x*6364136223846793005 + 1\n"
	"\t}\n"
	"\treturn x\n"
	"}\n"
	"\n"
	"func main() {\n"
	"\tt := &T{n: len(os.Args)}\n"
	"\ts := Map([]int{1, 2, 3}, func(x int) int { return t.m(x) + t.v(x) })\n"
	"\tf := Map([]float64{1.5}, func(x float64) float64 { return x * 2 })\n"
	"\tif s[0]+int(f[0]) == 42 || hot(uint64(s[1])) == 7 {\n"
	"\t\tos.Exit(3)\n"
	"\t}\n"
	"}\n";

/*
 * Go's reader of the table: prints "text ADDR" (the .text section's
 * address, the text start it is given), then "START END NAME" for every
 * function of debug/gosym; with a second argument, also writes the
 * table's bytes there.
 */
static const char gosym_dump[] =
	"package main\n"
	"\n"
	"import (\n"
	"\t\"debug/elf\"\n"
	"\t\"debug/gosym\"\n"
	"\t\"fmt\"\n"
	"\t\"os\"\n"
	")\n"
	"\n"
	"func main() {\n"
	"\tf, err := elf.Open(os.Args[1])\n"
	"\tif err != nil {\n"
	"\t\tpanic(err)\n"
	"\t}\n"
	"\tsec := f.Section(\".gopclntab\")\n"
	"\tif sec == nil {\n"
	"\t\tsec = f.Section(\".data.rel.ro.gopclntab\")\n"
	"\t}\n"
	"\tdata, err := sec.Data()\n"
	"\tif err != nil {\n"
	"\t\tpanic(err)\n"
	"\t}\n"
	"\ttext := f.Section(\".text\").Addr\n"
	"\tif len(os.Args) > 2 {\n"
	"\t\tif err := os.WriteFile(os.Args[2], data, 0o644); err != nil {\n"
	"\t\t\tpanic(err)\n"
	"\t\t}\n"
	"\t}\n"
	"\tt, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))\n"
	"\tif err != nil {\n"
	"\t\tpanic(err)\n"
	"\t}\n"
	"\tfmt.Printf(\"text %x\\n\", text)\n"
	"\tfor _, fn := range t.Funcs {\n"
	"\t\tfmt.Printf(\"%x %x %s\\n\", fn.Entry, fn.End, fn.Name)\n"
	"\t}\n"
	"}\n";

struct fn {
	uint64_t start, end;
	char *name;
};

struct fn_list {
	struct fn *v;
	size_t n;
	uint64_t text;
};

static const char *go_dir(void)
{
	static char dir[256];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/go", test_tmp_dir());
		mkdir(dir, 0700);
	}
	return dir;
}

/* The environment of every go command: nothing from the user's, no cgo (internal linking). */
static const char *go_env(void)
{
	static char env[2048];

	snprintf(env, sizeof(env),
		 "GOFLAGS= GO111MODULE= GOENV=off CGO_ENABLED=0 HOME='%s' GOCACHE='%s/cache' "
		 "GOPATH='%s/path'",
		 go_dir(), go_dir(), go_dir());
	return env;
}

static void need_go(void)
{
	if (system("command -v go >/dev/null 2>&1") != 0)
		SKIP("go is not installed (Debian: golang-go, which ./build.sh test installs)");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK_INT(fputs(text, f), >=, 0);
	CHECK_INT(fclose(f), ==, 0);
}

/*
 * Builds SOURCE (go_prog or gosym_dump) as NAME in go_dir(), once per run
 * of the tests (they share the scratch directory), with EXTRA before
 * `go build` (GOARCH=...) and FLAGS after it. Returns its path.
 */
static const char *go_build(const char *name, const char *source, const char *extra,
			    const char *flags)
{
	static char path[8][512];
	static int next;
	char *out = path[next++ % 8], src[600], cmd[4096];

	snprintf(out, sizeof(path[0]), "%s/%s", go_dir(), name);
	if (!access(out, X_OK))
		return out;
	snprintf(src, sizeof(src), "%s/%s.go", go_dir(), source == go_prog ? "prog" : "gosym_dump");
	write_file(src, source);
	snprintf(cmd, sizeof(cmd), "cd '%s' && env %s %s go build %s -o '%s' '%s' >'%s.log' 2>&1",
		 go_dir(), go_env(), extra, flags, out, src, out);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s.log' >&2", out);
		if (system(cmd) != 0)
			fprintf(stderr, "no log of the build\n");
		test_fail(__FILE__, __LINE__, "go build of %s failed (log above)", name);
	}
	return out;
}

static const char *stripped_prog(void)
{
	return go_build("prog_stripped", go_prog, "", "-ldflags='-s -w'");
}

/* Lines of a command's output, each without its newline, into a callback. */
static void each_line(const char *cmd, void (*fn)(char *line, void *arg), void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f = popen(cmd, "r");

	CHECK(f);
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		fn(line, arg);
	}
	free(line);
	if (pclose(f) != 0)
		test_fail(__FILE__, __LINE__, "failed: %s", cmd);
}

static void add_fn(struct fn_list *l, uint64_t start, uint64_t end, const char *name)
{
	if (!(l->n & (l->n + 1))) {
		l->v = realloc(l->v, (2 * l->n + 1) * sizeof(*l->v));
		CHECK(l->v);
	}
	l->v[l->n++] = (struct fn){start, end, strdup(name)};
	CHECK(l->v[l->n - 1].name);
}

static void free_fns(struct fn_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void gosym_line(char *line, void *arg)
{
	struct fn_list *l = arg;
	unsigned long long s, e;
	int at = 0;

	if (sscanf(line, "text %llx", &s) == 1) {
		l->text = s;
		return;
	}
	CHECK_INT(sscanf(line, "%llx %llx %n", &s, &e, &at), ==, 2);
	CHECK(at > 0);
	add_fn(l, s, e, line + at);
}

/* debug/gosym's functions of binary; with raw, the table's bytes are written there. */
static void gosym_read(const char *binary, const char *raw, struct fn_list *out)
{
	const char *tool = go_build("gosym_dump", gosym_dump, "", "");
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s%s%s", tool, binary, raw ? "'" : "", raw ? raw : "",
		 raw ? "'" : "");
	*out = (struct fn_list){0};
	each_line(cmd, gosym_line, out);
	CHECK_INT(out->n, >, 100);
}

/* Our table equals debug/gosym's: every function, in order, start, end and name. */
static void expect_same(const struct go_pclntab *t, const struct fn_list *want)
{
	uint64_t start, end;
	const char *name;
	size_t i;

	CHECK_INT(go_pclntab__count(t), ==, want->n);
	for (i = 0; i < want->n; i++) {
		CHECK_INT(go_pclntab__func(t, i, &start, &end, &name), ==, 0);
		if (start != want->v[i].start || end != want->v[i].end ||
		    strcmp(name, want->v[i].name))
			test_fail(
				__FILE__, __LINE__,
				"function %zu: ours %s [0x%llx, 0x%llx), Go's %s [0x%llx, 0x%llx)",
				i, name, (unsigned long long)start, (unsigned long long)end,
				want->v[i].name, (unsigned long long)want->v[i].start,
				(unsigned long long)want->v[i].end);
	}
	CHECK_INT(go_pclntab__func(t, i, &start, &end, &name), ==, -ERANGE);
}

static struct go_pclntab *from_file(const char *path)
{
	struct go_pclntab *t = NULL;
	uint8_t *image;
	size_t size;

	image = test_read_file(path, &size);
	CHECK_INT(go_pclntab__from_elf(image, size, &t), ==, 0);
	free(image);
	return t;
}

/* `go tool nm` names as Go's table has them (see the top of this file); NULL to skip. */
static const char *nm_name_as_go(char *name)
{
	static char buf[8192];
	size_t len = strlen(name);
	char *open, *close;

	if (!strcmp(name, "runtime.text") || !strcmp(name, "runtime.etext"))
		return NULL;
	if (len > 5 && !strcmp(name + len - 5, ".abi0"))
		name[len - 5] = '\0';
	open = strchr(name, '[');
	close = strrchr(name, ']');
	if (!open || !close || close < open)
		return name;
	snprintf(buf, sizeof(buf), "%.*s[...]%s", (int)(open - name), name, close + 1);
	return buf;
}

struct nm_check {
	const struct go_pclntab *t;
	size_t checked;
};

static void nm_line(char *line, void *arg)
{
	struct nm_check *c = arg;
	unsigned long long addr, size;
	uint64_t start;
	const char *name, *got;
	char type;
	int at = 0;

	if (sscanf(line, " %llx %llu %c %n", &addr, &size, &type, &at) != 3 || !at ||
	    (type != 'T' && type != 't'))
		return;
	name = nm_name_as_go(line + at);
	if (!name)
		return;
	got = go_pclntab__lookup(c->t, addr, &start);
	if (!got || start != addr || strcmp(got, name))
		test_fail(__FILE__, __LINE__, "go tool nm: %s at 0x%llx; ours: %s at 0x%llx", name,
			  addr, got ? got : "(none)", got ? (unsigned long long)start : 0ull);
	/* The whole function is its, up to its last byte. */
	if (size) {
		got = go_pclntab__lookup(c->t, addr + size - 1, &start);
		CHECK(got && start == addr);
	}
	c->checked++;
}

TEST(go_pclntab_stripped_matches_go_tool_nm)
{
	const char *full, *stripped;
	struct nm_check c = {0};
	struct go_pclntab *t;
	struct go_pclntab_info info;
	char cmd[2048];

	need_go();
	stripped = stripped_prog();
	full = go_build("prog_full", go_prog, "", "");
	t = from_file(stripped);
	go_pclntab__info(t, &info);
	CHECK_STR(info.where, ".gopclntab");
	CHECK_INT(info.ptr_size, ==, sizeof(void *));
	c.t = t;
	snprintf(cmd, sizeof(cmd), "env %s go tool nm -size -sort address '%s'", go_env(), full);
	each_line(cmd, nm_line, &c);
	/* Nothing more in ours than what nm lists. */
	CHECK_INT(c.checked, ==, go_pclntab__count(t));
	CHECK(go_pclntab__lookup(t, 0, NULL) == NULL);
	go_pclntab__free(t);
}

/* The names this parser must give, as Go prints them, at the addresses Go's reader gives. */
static void expect_names(const struct go_pclntab *t, const struct fn_list *want)
{
	static const char *const names[] = {"main.main",    "main.(*T).m",     "main.T.v",
					    "main.hot",	    "main.main.func1", "main.Map[...]",
					    "runtime.main", "runtime.goexit"};
	size_t i, j, found;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (j = 0, found = 0; j < want->n; j++) {
			uint64_t start;

			if (strcmp(want->v[j].name, names[i]))
				continue;
			CHECK_STR(go_pclntab__lookup(t, want->v[j].start, &start), names[i]);
			found++;
		}
		if (!found)
			test_fail(__FILE__, __LINE__, "%s is not in the program", names[i]);
	}
}

TEST(go_pclntab_matches_debug_gosym)
{
	struct go_pclntab *t;
	struct fn_list want;
	const char *bin;

	need_go();
	bin = stripped_prog();
	gosym_read(bin, NULL, &want);
	t = from_file(bin);
	expect_same(t, &want);
	expect_names(t, &want);
	go_pclntab__free(t);
	free_fns(&want);
}

TEST(go_pclntab_position_independent)
{
	struct go_pclntab_info info;
	struct go_pclntab *t;
	struct fn_list want;
	const char *bin;

	need_go();
	bin = go_build("prog_pie", go_prog, "", "-buildmode=pie -ldflags='-s -w'");
	gosym_read(bin, NULL, &want);
	t = from_file(bin);
	go_pclntab__info(t, &info);
	/* Go 1.26 moved it to .gopclntab; before, RELRO data. */
	CHECK(!strcmp(info.where, ".data.rel.ro.gopclntab") || !strcmp(info.where, ".gopclntab"));
	expect_same(t, &want);
	go_pclntab__free(t);
	free_fns(&want);
}

/* The go command the PATH gives, resolved: Debian's is /usr/lib/go-1.19/bin/go, stripped. */
static const char *system_go(void)
{
	static char path[512];
	size_t len;
	FILE *f = popen("readlink -f \"$(command -v go)\"", "r");

	CHECK(f);
	if (!fgets(path, sizeof(path), f))
		path[0] = '\0';
	pclose(f);
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[len - 1] = '\0';
	if (!path[0] || access(path, R_OK))
		SKIP("the go command is not a readable file");
	return path;
}

/* `go tool addr2line`'s function name at addr (Go's reader again, through another tool). */
static void addr2line(const char *bin, uint64_t addr, char *name, size_t size)
{
	char cmd[2048];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "echo 0x%llx | env %s go tool addr2line '%s'",
		 (unsigned long long)addr, go_env(), bin);
	f = popen(cmd, "r");
	CHECK(f);
	if (!fgets(name, (int)size, f))
		name[0] = '\0';
	CHECK_INT(pclose(f), ==, 0);
	name[strcspn(name, "\n")] = '\0';
}

TEST(go_pclntab_debian_go_command)
{
	const char *names[] = {"runtime.main", "main.main"};
	struct go_pclntab *t;
	struct fn_list want;
	const char *bin;
	uint64_t start, end;
	const char *name;
	char got[512];
	size_t i, j;

	need_go();
	bin = system_go();
	t = from_file(bin);
	gosym_read(bin, NULL, &want);
	expect_same(t, &want);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < go_pclntab__count(t); j++) {
			CHECK_INT(go_pclntab__func(t, j, &start, &end, &name), ==, 0);
			if (!strcmp(name, names[i]))
				break;
		}
		CHECK(j < go_pclntab__count(t));
		addr2line(bin, start, got, sizeof(got));
		CHECK_STR(got, names[i]);
		addr2line(bin, end - 1, got, sizeof(got));
		CHECK_STR(got, names[i]);
		addr2line(bin, start - 1, got, sizeof(got));
		CHECK(strcmp(got, names[i]) != 0);
	}
	go_pclntab__free(t);
	free_fns(&want);
}

/* The program cross-built for GOARCH, its table parsed from its bytes, against debug/gosym. */
static void cross_check(const char *goarch, uint8_t ptr_size, uint8_t min_lc)
{
	struct go_pclntab_info info;
	struct go_pclntab *t = NULL;
	struct fn_list want;
	char name[64], env[64], raw[600];
	const char *bin;
	uint8_t *data;
	size_t size;

	need_go();
	snprintf(name, sizeof(name), "prog_%s", goarch);
	snprintf(env, sizeof(env), "GOARCH=%s", goarch);
	bin = go_build(name, go_prog, env, "-ldflags='-s -w'");
	snprintf(raw, sizeof(raw), "%s.gopclntab", bin);
	gosym_read(bin, raw, &want);
	data = test_read_file(raw, &size);
	CHECK_INT(go_pclntab__parse(data, size, want.text, &t), ==, 0);
	free(data);
	go_pclntab__info(t, &info);
	CHECK(info.big_endian);
	CHECK_INT(info.ptr_size, ==, ptr_size);
	CHECK_INT(info.min_lc, ==, min_lc);
	expect_same(t, &want);
	expect_names(t, &want);
	go_pclntab__free(t);
	free_fns(&want);
}

TEST(go_pclntab_mips_big_endian_32)
{
	cross_check("mips", 4, 4);
}

TEST(go_pclntab_s390x_big_endian_64)
{
	cross_check("s390x", 8, 2);
}

/* e_shoff, e_shnum and e_shstrndx of a native ELF image set to 0. */
static void drop_section_headers(uint8_t *image)
{
	if (image[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)image;

		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = 0;
	} else {
		Elf32_Ehdr *eh = (Elf32_Ehdr *)image;

		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = 0;
	}
}

TEST(go_pclntab_found_without_section_headers)
{
	struct go_pclntab *t = NULL;
	struct go_pclntab_info info;
	struct fn_list want;
	const char *bin;
	uint8_t *image;
	size_t size;

	need_go();
	bin = stripped_prog();
	gosym_read(bin, NULL, &want);
	image = test_read_file(bin, &size);
	drop_section_headers(image);
	CHECK_INT(go_pclntab__from_elf(image, size, &t), ==, 0);
	go_pclntab__info(t, &info);
	CHECK(strstr(info.where, "segments"));
	expect_same(t, &want);
	go_pclntab__free(t);
	free(image);
	free_fns(&want);
}

TEST(go_pclntab_none_in_other_programs)
{
	struct go_pclntab *t = NULL;
	uint8_t *image;
	size_t size;

	/*
	 * This program holds the crafted tables below, magic and all, but no
	 * Go build ID: not searched.
	 */
	image = test_read_file("/proc/self/exe", &size);
	CHECK_INT(go_pclntab__from_elf(image, size, &t), ==, -ENOENT);
	free(image);
	image = test_read_file(test_system_libc(), &size);
	CHECK_INT(go_pclntab__from_elf(image, size, &t), ==, -ENOENT);
	/* Without section headers it is searched for, and still not found. */
	drop_section_headers(image);
	CHECK_INT(go_pclntab__from_elf(image, size, &t), ==, -ENOENT);
	free(image);
	CHECK(t == NULL);
	CHECK_INT(go_pclntab__from_elf("not an ELF file", 16, &t), ==, -ENOEXEC);
	CHECK_INT(go_pclntab__from_elf(NULL, 0, &t), ==, -ENOEXEC);
}

/* The symbolizer's view: elf_symtab names a stripped Go program's functions from its table. */
TEST(go_pclntab_named_by_elf_symtab)
{
	struct elf_symtab *e = NULL, *full = NULL;
	struct go_pclntab *t;
	uint64_t start, end, off;
	const char *name, *got;
	size_t i;

	need_go();
	t = from_file(stripped_prog());
	CHECK_INT(elf_symtab__open(stripped_prog(), &e), ==, 0);
	CHECK(!elf_symtab__has_symtab(e));
	CHECK_INT(elf_symtab__open(go_build("prog_full", go_prog, "", ""), &full), ==, 0);
	CHECK(elf_symtab__has_symtab(full));
	CHECK_INT(elf_symtab__symbol_count(e), >=, go_pclntab__count(t));
	for (i = 0; i < go_pclntab__count(t); i++) {
		CHECK_INT(go_pclntab__func(t, i, &start, &end, &name), ==, 0);
		got = elf_symtab__lookup(e, end - 1, &off);
		if (!got || strcmp(got, name) || off != end - 1 - start)
			test_fail(__FILE__, __LINE__, "0x%llx: %s, want %s",
				  (unsigned long long)(end - 1), got ? got : "(none)", name);
		/* The unstripped copy, from its .symtab, agrees on Go's own functions. */
		if (!strcmp(name, "main.main") || !strcmp(name, "main.(*T).m"))
			CHECK_STR(elf_symtab__lookup(full, start, NULL), name);
	}
	elf_symtab__free(e);
	elf_symtab__free(full);
	go_pclntab__free(t);
}

/* --- crafted tables ----------------------------------------------------------------------- */

#define LE64(x)                                                                        \
	(uint8_t)(x), (uint8_t)((x) >> 8), (uint8_t)((x) >> 16), (uint8_t)((x) >> 24), \
		(uint8_t)((uint64_t)(x) >> 32), (uint8_t)((uint64_t)(x) >> 40),        \
		(uint8_t)((uint64_t)(x) >> 48), (uint8_t)((uint64_t)(x) >> 56)
#define LE32(x) (uint8_t)(x), (uint8_t)((x) >> 8), (uint8_t)((x) >> 16), (uint8_t)((x) >> 24)
#define BE32(x) (uint8_t)((x) >> 24), (uint8_t)((x) >> 16), (uint8_t)((x) >> 8), (uint8_t)(x)

/*
 * Go 1.2-1.15, little-endian, 8-byte pointers: three entries, the middle
 * one without a name (as Go writes for code between functions), so main.f
 * ends where it starts. Records are cut to the fields read (entry, nameoff).
 */
static const uint8_t go12_le64[] = {
	/* 0x00 */ LE32(0xfffffffb),
	0,
	0,
	1,
	8,		    /* magic, pad, minLC 1, ptrSize 8 */
	/* 0x08 */ LE64(3), /* nfunc */
	/* 0x10 */ LE64(0x401000),
	LE64(0x50), /* function table: entry, funcoff */
	/* 0x20 */ LE64(0x401020),
	LE64(0x60),
	/* 0x30 */ LE64(0x401030),
	LE64(0x70),
	/* 0x40 */ LE64(0x401080), /* the end of the last function */
	/* 0x48 */ LE32(0),
	LE32(0), /* filetab offset (not read), pad */
	/* 0x50 */ LE64(0x401000),
	LE32(0x80),
	LE32(0), /* records: entry, nameoff, pad */
	/* 0x60 */ LE64(0x401020),
	LE32(0),
	LE32(0), /* nameoff 0: no name */
	/* 0x70 */ LE64(0x401030),
	LE32(0x87),
	LE32(0),
	/* 0x80 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'f',
	0, /* names, from the table's start */
	/* 0x87 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'g',
	0,
};

/* Go 1.16-1.17, little-endian, 8-byte pointers: sub-tables the header points to. */
static const uint8_t go116_le64[] = {
	/* 0x00 */ LE32(0xfffffffa),
	0,
	0,
	1,
	8,
	/* 0x08 */ LE64(2),    /* nfunc */
	/* 0x10 */ LE64(0),    /* nfiles */
	/* 0x18 */ LE64(0x40), /* funcnameOffset */
	/* 0x20 */ LE64(0x58), /* cuOffset, filetabOffset, pctabOffset: empty */
	/* 0x28 */ LE64(0x58),
	/* 0x30 */ LE64(0x58),
	/* 0x38 */ LE64(0x58), /* pclnOffset: the function table, and funcoff's base */
	/* 0x40 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'a',
	0, /* nameOff 0: the first name */
	/* 0x47 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'b',
	0, /* nameOff 7 */
	/* 0x4e */ 0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	/* 0x58 */ LE64(0x401000),
	LE64(0x28), /* entry, funcoff (from 0x58) */
	/* 0x68 */ LE64(0x401010),
	LE64(0x38),
	/* 0x78 */ LE64(0x401030),
	/* 0x80 */ LE64(0x401000),
	LE32(0),
	LE32(0), /* records: entry, nameOff, pad */
	/* 0x90 */ LE64(0x401010),
	LE32(7),
	LE32(0),
};

/* Go 1.20+, little-endian, 8-byte pointers: entries are 32-bit offsets from textStart. */
static const uint8_t go120_le64[] = {
	/* 0x00 */ LE32(0xfffffff1),
	0,
	0,
	1,
	8,
	/* 0x08 */ LE64(2),	   /* nfunc */
	/* 0x10 */ LE64(0),	   /* nfiles */
	/* 0x18 */ LE64(0x401000), /* textStart */
	/* 0x20 */ LE64(0x48),	   /* funcnameOffset */
	/* 0x28 */ LE64(0x60),	   /* cuOffset, filetabOffset, pctabOffset: empty */
	/* 0x30 */ LE64(0x60),
	/* 0x38 */ LE64(0x60),
	/* 0x40 */ LE64(0x60), /* pclnOffset */
	/* 0x48 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'm',
	'a',
	'i',
	'n',
	0,
	/* 0x52 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'(',
	'*',
	'T',
	')',
	'.',
	'm',
	0,
	/* 0x5e */ 0,
	0,
	/* 0x60 */ LE32(0),
	LE32(0x18), /* entryoff, funcoff (from 0x60) */
	/* 0x68 */ LE32(0x40),
	LE32(0x20), /* main.(*T).m at textStart + 0x40 */
	/* 0x70 */ LE32(0x70),
	LE32(0), /* the end, pad */
	/* 0x78 */ LE32(0),
	LE32(0), /* records: entryOff, nameOff */
	/* 0x80 */ LE32(0x40),
	LE32(10),
};
/* Offsets of go120_le64's fields the corruption test changes. */
#define GO120_FUNCNAME 0x20
#define GO120_PCLN     0x40
#define GO120_FUNCOFF0 0x64
#define GO120_ENTRY0   0x60
#define GO120_END      0x70
#define GO120_REC0     0x78
#define GO120_REC1     0x80

/* Go 1.18-1.19 as mips writes it: big-endian, 4-byte pointers, 4-byte instructions. */
static const uint8_t go118_be32[] = {
	/* 0x00 */ BE32(0xfffffff0),
	0,
	0,
	4,
	4,
	/* 0x08 */ BE32(2),	  /* nfunc */
	/* 0x0c */ BE32(0),	  /* nfiles */
	/* 0x10 */ BE32(0x11000), /* textStart */
	/* 0x14 */ BE32(0x28),	  /* funcnameOffset */
	/* 0x18 */ BE32(0x3c),	  /* cuOffset, filetabOffset, pctabOffset */
	/* 0x1c */ BE32(0x3c),
	/* 0x20 */ BE32(0x3c),
	/* 0x24 */ BE32(0x3c), /* pclnOffset */
	/* 0x28 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'm',
	'a',
	'i',
	'n',
	0,
	/* 0x32 */ 'm',
	'a',
	'i',
	'n',
	'.',
	'h',
	'o',
	't',
	0,
	/* 0x3b */ 0,
	/* 0x3c */ BE32(0),
	BE32(0x18), /* entryoff, funcoff (from 0x3c) */
	/* 0x44 */ BE32(0x20),
	BE32(0x20),
	/* 0x4c */ BE32(0x48), /* the end */
	/* 0x50 */ BE32(0),
	/* 0x54 */ BE32(0),
	BE32(0), /* records: entryOff, nameOff */
	/* 0x5c */ BE32(0x20),
	BE32(10),
};

struct crafted {
	const char *name;
	const uint8_t *bytes;
	size_t size;
	int version;
	uint8_t ptr_size, min_lc;
	bool big_endian;
	size_t entries;
	struct {
		uint64_t start, end;
		const char *name;
	} want[2];
};

static const struct crafted crafted[] = {
	{"go12_le64",
	 go12_le64,
	 sizeof(go12_le64),
	 12,
	 8,
	 1,
	 false,
	 3,
	 {{0x401000, 0x401020, "main.f"}, {0x401030, 0x401080, "main.g"}}},
	{"go116_le64",
	 go116_le64,
	 sizeof(go116_le64),
	 116,
	 8,
	 1,
	 false,
	 2,
	 {{0x401000, 0x401010, "main.a"}, {0x401010, 0x401030, "main.b"}}},
	{"go118_be32",
	 go118_be32,
	 sizeof(go118_be32),
	 118,
	 4,
	 4,
	 true,
	 2,
	 {{0x11000, 0x11020, "main.main"}, {0x11020, 0x11048, "main.hot"}}},
	{"go120_le64",
	 go120_le64,
	 sizeof(go120_le64),
	 120,
	 8,
	 1,
	 false,
	 2,
	 {{0x401000, 0x401040, "main.main"}, {0x401040, 0x401070, "main.(*T).m"}}},
};

#define NCRAFTED (sizeof(crafted) / sizeof(crafted[0]))

/* A heap copy of exactly len bytes, so that ASan sees a read one past its end. */
static int parse_copy(const uint8_t *bytes, size_t len, uint64_t text, struct go_pclntab **t)
{
	uint8_t *copy = malloc(len ? len : 1);
	int err;

	CHECK(copy);
	memcpy(copy, bytes, len);
	err = go_pclntab__parse(len ? copy : NULL, len, text, t);
	/* The object keeps nothing of the input: freed before the result is read. */
	free(copy);
	return err;
}

/* A result from corrupt input: at most max functions, sorted, every name inside the block. */
static void check_bounded(const struct go_pclntab *t, size_t max)
{
	size_t i, size, n = go_pclntab__count(t);
	const char *names = go_pclntab__names(t, &size), *name;
	uint64_t start, end, prev = 0;

	CHECK_INT(n, <=, max);
	for (i = 0; i < n; i++) {
		CHECK_INT(go_pclntab__func(t, i, &start, &end, &name), ==, 0);
		CHECK(start >= prev && end >= start);
		CHECK(name >= names && name < names + size);
		CHECK(memchr(name, 0, names + size - name));
		CHECK(name[0]);
		prev = start;
	}
}

TEST(go_pclntab_crafted_layouts)
{
	size_t i, j;

	for (i = 0; i < NCRAFTED; i++) {
		const struct crafted *c = &crafted[i];
		struct go_pclntab_info info;
		struct go_pclntab *t = NULL;
		uint64_t start, end;
		const char *name;

		CHECK_INT(parse_copy(c->bytes, c->size, 0, &t), ==, 0);
		go_pclntab__info(t, &info);
		CHECK_INT(info.version, ==, c->version);
		CHECK_INT(info.ptr_size, ==, c->ptr_size);
		CHECK_INT(info.min_lc, ==, c->min_lc);
		CHECK_INT(info.big_endian, ==, c->big_endian);
		CHECK_INT(info.entries, ==, c->entries);
		CHECK_U64(info.text_start, ==, c->version >= 118 ? c->want[0].start : 0);
		CHECK_INT(go_pclntab__count(t), ==, 2);
		for (j = 0; j < 2; j++) {
			CHECK_INT(go_pclntab__func(t, j, &start, &end, &name), ==, 0);
			CHECK_U64(start, ==, c->want[j].start);
			CHECK_U64(end, ==, c->want[j].end);
			CHECK_STR(name, c->want[j].name);
			CHECK_STR(go_pclntab__lookup(t, end - 1, &start), c->want[j].name);
			CHECK_U64(start, ==, c->want[j].start);
		}
		CHECK_INT(go_pclntab__func(t, 2, &start, &end, &name), ==, -ERANGE);
		CHECK(go_pclntab__lookup(t, c->want[0].start - 1, NULL) == NULL);
		CHECK(go_pclntab__lookup(t, c->want[1].end, NULL) == NULL);
		/* go12_le64's unnamed entry: no function there. */
		if (c->version == 12)
			CHECK(go_pclntab__lookup(t, 0x401020, NULL) == NULL);
		go_pclntab__free(t);
	}
	/* NULL is an empty table everywhere. */
	CHECK_INT(go_pclntab__count(NULL), ==, 0);
	CHECK(go_pclntab__lookup(NULL, 0x401000, NULL) == NULL);
	go_pclntab__free(NULL);
}

TEST(go_pclntab_crafted_cut_at_every_length)
{
	size_t i, len;

	for (i = 0; i < NCRAFTED; i++) {
		for (len = 0; len < crafted[i].size; len++) {
			struct go_pclntab *t = NULL;
			int err = parse_copy(crafted[i].bytes, len, 0, &t);

			if (err) {
				CHECK(t == NULL);
				CHECK(err == -EINVAL || err == -EBADMSG);
				continue;
			}
			check_bounded(t, 2);
			go_pclntab__free(t);
		}
	}
}

TEST(go_pclntab_crafted_every_byte_changed)
{
	static const uint8_t values[] = {0x00, 0xff, 0x7f, 0x80, 0x01};
	size_t i, at, v;

	for (i = 0; i < NCRAFTED; i++) {
		uint8_t buf[256];

		CHECK(crafted[i].size <= sizeof(buf));
		for (at = 0; at < crafted[i].size; at++) {
			for (v = 0; v < sizeof(values) + 1; v++) {
				struct go_pclntab *t = NULL;

				memcpy(buf, crafted[i].bytes, crafted[i].size);
				buf[at] = v < sizeof(values) ? values[v] : buf[at] ^ 0x40;
				if (parse_copy(buf, crafted[i].size, 0x500000, &t))
					continue;
				check_bounded(t, crafted[i].entries);
				go_pclntab__free(t);
			}
		}
	}
}

static void put_le(uint8_t *p, uint64_t v, size_t width)
{
	size_t i;

	for (i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* go120_le64 with the field at off (width bytes) set to v: the error parsing gives. */
static int go120_with(size_t off, uint64_t v, size_t width, uint64_t text)
{
	struct go_pclntab *t = NULL;
	uint8_t buf[sizeof(go120_le64)];
	int err;

	memcpy(buf, go120_le64, sizeof(buf));
	put_le(buf + off, v, width);
	err = parse_copy(buf, sizeof(buf), text, &t);
	if (!err)
		check_bounded(t, 2);
	go_pclntab__free(t);
	return err;
}

TEST(go_pclntab_crafted_lies)
{
	struct go_pclntab *t = NULL;
	uint64_t start, end;
	const char *name;

	/* The header: magic, pad bytes, minLC, ptrSize. */
	CHECK_INT(go120_with(0, 0xfffffff2, 4, 0), ==, -EINVAL);
	CHECK_INT(go120_with(4, 1, 1, 0), ==, -EINVAL);
	CHECK_INT(go120_with(5, 1, 1, 0), ==, -EINVAL);
	CHECK_INT(go120_with(6, 3, 1, 0), ==, -EINVAL);
	CHECK_INT(go120_with(7, 2, 1, 0), ==, -EINVAL);
	/* Counts and offsets past the end. */
	CHECK_INT(go120_with(8, UINT64_MAX, 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(8, 3, 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_FUNCNAME, sizeof(go120_le64), 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_FUNCNAME, UINT64_MAX, 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_PCLN, sizeof(go120_le64), 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_PCLN, UINT64_MAX - 7, 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_FUNCOFF0, 0xff00, 4, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_FUNCOFF0, 0xffffffff, 4, 0), ==, -EBADMSG);
	/* A name offset past the end, and one whose name runs to the end without a NUL. */
	CHECK_INT(go120_with(GO120_REC1 + 4, 0x1000, 4, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(GO120_REC1 + 4, 0xffffffff, 4, 0), ==, -EBADMSG);
	{
		uint8_t buf[sizeof(go120_le64)];

		memcpy(buf, go120_le64, sizeof(buf));
		put_le(buf + GO120_REC0 + 4, sizeof(buf) - 1 - 0x48, 4);
		buf[sizeof(buf) - 1] = 'x';
		CHECK_INT(parse_copy(buf, sizeof(buf), 0, &t), ==, -EBADMSG);
	}
	/* Unsorted entries (with records that agree), and an end before the last start. */
	{
		uint8_t buf[sizeof(go120_le64)];

		memcpy(buf, go120_le64, sizeof(buf));
		put_le(buf + GO120_ENTRY0, 0x50, 4);
		put_le(buf + GO120_REC0, 0x50, 4);
		CHECK_INT(parse_copy(buf, sizeof(buf), 0, &t), ==, -EBADMSG);
	}
	CHECK_INT(go120_with(GO120_END, 0x30, 4, 0), ==, -EBADMSG);
	/* A record that does not start with its table entry. */
	CHECK_INT(go120_with(GO120_REC1, 0x44, 4, 0), ==, -EBADMSG);
	/* A text start that would wrap, and none at all (as Go 1.26 writes). */
	CHECK_INT(go120_with(0x18, UINT64_MAX - 0x10, 8, 0), ==, -EBADMSG);
	CHECK_INT(go120_with(0x18, 0, 8, 0), ==, -ENODATA);
	CHECK_INT(go120_with(0x18, 0, 8, 0x500000), ==, 0);
	{
		uint8_t buf[sizeof(go120_le64)];

		memcpy(buf, go120_le64, sizeof(buf));
		put_le(buf + 0x18, 0, 8);
		CHECK_INT(parse_copy(buf, sizeof(buf), 0x500000, &t), ==, 0);
		CHECK_INT(go_pclntab__func(t, 1, &start, &end, &name), ==, 0);
		CHECK_U64(start, ==, 0x500040);
		CHECK_U64(end, ==, 0x500070);
		go_pclntab__free(t);
		/* The header's own text start wins over the caller's. */
		CHECK_INT(parse_copy(go120_le64, sizeof(go120_le64), 0x500000, &t), ==, 0);
		CHECK_INT(go_pclntab__func(t, 0, &start, &end, &name), ==, 0);
		CHECK_U64(start, ==, 0x401000);
		go_pclntab__free(t);
	}
	/* An empty table is a table, with nothing in it. */
	CHECK_INT(go120_with(8, 0, 8, 0), ==, 0);
	CHECK_INT(parse_copy(go120_le64, 15, 0, &t), ==, -EINVAL);
	CHECK_INT(go_pclntab__parse(NULL, 100, 0, &t), ==, -EINVAL);
	CHECK(t == NULL);
}

/* A real image with its ELF headers damaged: an error or a result, never a crash. */
TEST(go_pclntab_corrupt_elf_images)
{
	static const size_t fields64[] = {
		offsetof(Elf64_Ehdr, e_shoff),	  offsetof(Elf64_Ehdr, e_phoff),
		offsetof(Elf64_Ehdr, e_shnum),	  offsetof(Elf64_Ehdr, e_shstrndx),
		offsetof(Elf64_Ehdr, e_phnum),	  offsetof(Elf64_Ehdr, e_shentsize),
		offsetof(Elf64_Ehdr, e_phentsize)};
	static const uint64_t values[] = {0, 1, 0xffff, 0x7fffffff, UINT64_MAX};
	const char *bin;
	uint8_t *image, *copy;
	size_t size, i, v, len;

	need_go();
	bin = stripped_prog();
	image = test_read_file(bin, &size);
	CHECK(image[EI_CLASS] == ELFCLASS64);
	copy = malloc(size);
	CHECK(copy);
	for (i = 0; i < sizeof(fields64) / sizeof(fields64[0]); i++) {
		for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			struct go_pclntab *t = NULL;
			size_t width = fields64[i] == offsetof(Elf64_Ehdr, e_shoff) ||
						       fields64[i] == offsetof(Elf64_Ehdr, e_phoff)
					       ? 8
					       : 2;

			memcpy(copy, image, size);
			put_le(copy + fields64[i], values[v], width);
			if (!go_pclntab__from_elf(copy, size, &t))
				check_bounded(t, 1u << 30);
			go_pclntab__free(t);
		}
	}
	/* Cut at page steps: the table, when found, is parsed from the bytes there are. */
	for (len = 0; len < size; len += 4093) {
		struct go_pclntab *t = NULL;
		uint8_t *cut = malloc(len ? len : 1);

		CHECK(cut);
		memcpy(cut, image, len);
		if (!go_pclntab__from_elf(cut, len, &t))
			check_bounded(t, 1u << 30);
		go_pclntab__free(t);
		free(cut);
	}
	free(copy);
	free(image);
}

/* go_pclntab__parse of a Go 1.2 table (ptrSize 8) of nfunc functions, zeros after the header. */
static int parse_go12(uint64_t nfunc)
{
	size_t size = 16 + (2 * nfunc + 1) * 8;
	uint8_t *p = calloc(1, size);
	struct go_pclntab *t = NULL;
	int err;

	CHECK(p);
	memcpy(p, "\xfb\xff\xff\xff\x00\x00\x01\x08", 8);
	memcpy(p + 8, &nfunc, 8);
	err = go_pclntab__parse(p, size, 0, &t);
	go_pclntab__free(t);
	free(p);
	return err;
}

TEST(go_pclntab_over_the_cap_refused)
{
	/* The same table, one function within the cap and one past it. */
	CHECK_INT(parse_go12(LOAD_MAX_SYMBOLS), !=, -EFBIG);
	CHECK_INT(parse_go12(LOAD_MAX_SYMBOLS + 1), ==, -EFBIG);
}
