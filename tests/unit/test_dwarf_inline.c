// SPDX-License-Identifier: MIT
/*
 * dwarf_inline against elfutils' `eu-addr2line -a -i -f` as the oracle,
 * then crafted and hostile .debug_info.
 *
 * Real programs: a fixture with a static inline chain of three, one
 * function inlined at two call sites on different lines, and a C++
 * template chain, built by the test with gcc/g++ -O2 (DWARF 5 and 4,
 * compressed), then Debian's libc with its debug file from libc6-dbg. At
 * every byte of every function, each name of the chain (innermost first,
 * the subprogram last) and each call's file and line must be
 * eu-addr2line's, exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/dwarf_inline.h"
#include "resolve/elf_dwarf.h"
#include "dwarf_fixtures.h"
#include "test.h"

static const char inl_c[] = "static inline __attribute__((always_inline)) int leaf(int x)\n"
			    "{\n"
			    "	return x * 3 + 1;\n"
			    "}\n"
			    "static inline __attribute__((always_inline)) int mid(int x)\n"
			    "{\n"
			    "	return leaf(x) ^ 7;\n"
			    "}\n"
			    "static inline __attribute__((always_inline)) int top(int x)\n"
			    "{\n"
			    "	return mid(x) + mid(x >> 1);\n"
			    "}\n"
			    "__attribute__((noinline)) int chain(int x)\n"
			    "{\n"
			    "	return top(x);\n"
			    "}\n"
			    "static inline __attribute__((always_inline)) int twice(int x)\n"
			    "{\n"
			    "	return x * x - 5;\n"
			    "}\n"
			    "__attribute__((noinline)) int sites(int x, int y)\n"
			    "{\n"
			    "	int a = twice(x);\n"
			    "\n"
			    "	return a + twice(y + a);\n"
			    "}\n"
			    "int main(int argc, char **argv)\n"
			    "{\n"
			    "	(void)argv;\n"
			    "	return chain(argc) + sites(argc, 2);\n"
			    "}\n";

static const char inl_cc[] =
	"template <int N> struct step {\n"
	"	static inline int go(int x) { return step<N - 1>::go(x * 5 + N); }\n"
	"};\n"
	"template <> struct step<0> {\n"
	"	static inline int go(int x) { return x ^ 0x55; }\n"
	"};\n"
	"__attribute__((noinline)) int run(int x)\n"
	"{\n"
	"	return step<3>::go(x);\n"
	"}\n"
	"int main(int argc, char **) { return run(argc); }\n";

/* Builds the fixture (C, or C++ when cc) with flags; its path. */
static const char *build(const char *name, bool cc, const char *flags)
{
	static char bin[8][1024];
	static int next;
	char *out = bin[next++ % 8], src[1024], cmd[4096];

	if (system("command -v gcc >/dev/null && command -v g++ >/dev/null && "
		   "command -v eu-addr2line >/dev/null"))
		test_skip("gcc, g++ or eu-addr2line (elfutils) missing");
	snprintf(src, sizeof(src), "%s/inl.%s", test_tmp_dir(), cc ? "cc" : "c");
	write_text(src, cc ? inl_cc : inl_c);
	snprintf(out, sizeof(bin[0]), "%s/%s", test_tmp_dir(), name);
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s %s -o '%s' inl.%s", test_tmp_dir(),
		 cc ? "g++" : "gcc", flags, out, cc ? "cc" : "c");
	CHECK_INT(system(cmd), ==, 0);
	return out;
}

/*
 * A tool's chains as text, "NAME@FILE:LINE|..." innermost first, the
 * subprogram last: tool is eu-addr2line's or llvm-symbolizer's command,
 * both printing each address before its chain.
 */
static char **oracle(const char *tool, const char *file, const struct addrs *a)
{
	char path[1024], out[1024], cmd[4096], line[8192], *s;
	char **ans = calloc(a->n, sizeof(*ans));
	size_t i = 0, len = 0;
	FILE *f;
	bool name = true;

	CHECK(ans);
	snprintf(path, sizeof(path), "%s/addrs.txt", test_tmp_dir());
	snprintf(out, sizeof(out), "%s/oracle.txt", test_tmp_dir());
	f = fopen(path, "w");
	CHECK(f);
	for (i = 0; i < a->n; i++)
		fprintf(f, "0x%" PRIx64 "\n", a->v[i]);
	CHECK_INT(fclose(f), ==, 0);
	snprintf(cmd, sizeof(cmd), "%s -e '%s' < '%s' > '%s'", tool, file, path, out);
	CHECK_INT(system(cmd), ==, 0);
	f = fopen(out, "r");
	CHECK(f);
	i = SIZE_MAX;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (!strncmp(line, "0x", 2) && name) {
			i++;
			CHECK_INT(i, <, a->n);
			CHECK_U64(strtoull(line, NULL, 16), ==, a->v[i]);
			ans[i] = calloc(1, 1);
			len = 0;
			continue;
		}
		if (name && (s = strstr(line, " inlined at ")))
			*s = '\0';
		/* FILE:LINE:COLUMN: the column left out, as cprof has none. */
		if (!name && (s = strrchr(line, ':')) && strchr(line, ':') != s)
			*s = '\0';
		ans[i] = realloc(ans[i], len + strlen(line) + 2);
		CHECK(ans[i]);
		len += (size_t)sprintf(ans[i] + len, "%s%s", line, name ? "@" : "|");
		name = !name;
	}
	fclose(f);
	CHECK_INT(i + 1, ==, a->n);
	return ans;
}

/* Ours in the oracle's text: the line table's answer for the innermost file and line. */
static char *ours(const struct dwarf_inline_answer *in, const struct dwarf_line_answer *ln)
{
	char *s = NULL;
	size_t len = 0, cap = 0;
	uint32_t i;

	for (i = 0; i <= in->n; i++) {
		const char *name = i < in->n ? in->frames[i].name : in->subprogram;
		const char *file = i ? in->frames[i - 1].call_file : ln->file;
		unsigned line = i ? in->frames[i - 1].call_line : ln->line;
		size_t need = strlen(name ? name : "??") + strlen(file ? file : "??") + 32;

		if (len + need > cap) {
			cap = 2 * (len + need);
			s = realloc(s, cap);
			CHECK(s);
		}
		len += (size_t)sprintf(s + len, "%s@%s:%u|", name ? name : "??", file ? file : "??",
				       file ? line : 0);
	}
	return s ? s : strdup("");
}

#define EU   "eu-addr2line -a -i -f"
#define LLVM "llvm-symbolizer -a --inlining --no-demangle"

/* Whether path is tail, or ends with "/" + tail (eu-addr2line joins the compilation directory). */
static bool same_file(const char *path, size_t p, const char *tail, size_t t)
{
	return (p == t && !memcmp(path, tail, t)) ||
	       (p > t && path[p - t - 1] == '/' && !memcmp(path + p - t, tail, t));
}

/* The elements of a chain's text, "NAME@FILE:LINE|": their starts, at most 64. */
static size_t elements(const char *s, const char **v)
{
	size_t n = 0;

	for (; *s && n < 64; s = strchr(s, '|') + 1)
		v[n++] = s;
	return n;
}

/* Element a of ours is element b of theirs: the same name and line, the same file or under it. */
static bool same_element(const char *a, const char *b)
{
	const char *aa = strchr(a, '@'), *ba = strchr(b, '@'), *ac, *bc;

	if (aa - a != ba - b || memcmp(a, b, (size_t)(aa - a)))
		return false;
	ac = strchr(aa, '|');
	bc = strchr(ba, '|');
	while (ac > aa && ac[-1] != ':')
		ac--;
	while (bc > ba && bc[-1] != ':')
		bc--;
	return strtoul(ac, NULL, 10) == strtoul(bc, NULL, 10) &&
	       same_file(ba + 1, (size_t)(bc - ba - 2), aa + 1, (size_t)(ac - aa - 2));
}

/*
 * 0: ours is theirs; 1: ours is theirs once consecutive calls from one
 * file:line are merged into the first, as eu-addr2line (0.188) prints
 * them (llvm-symbolizer --inlining and binutils' addr2line -i do not);
 * 3: only the subprogram's name differs; 2: they differ.
 */
static int compare(const char *ours, const char *theirs)
{
	const char *o[64], *t[64], *line, *prev = NULL;
	size_t no = elements(ours, o), nt = elements(theirs, t), i, j = 0;
	bool merged = false;

	for (i = 0; i < no && no == nt && same_element(o[i], t[i]); i++)
		;
	if (i == no && no == nt)
		return 0;
	/* Only the subprogram's name differs: eu-addr2line took the ELF symbol's, as cprof does. */
	if (i == no - 1 && no == nt && same_element(strchr(o[i], '@'), strchr(t[i], '@')))
		return 3;
	for (i = 0; i < no; i++) {
		line = strchr(o[i], '@');
		if (prev && strcspn(line, "|") == strcspn(prev, "|") &&
		    !memcmp(line, prev, strcspn(line, "|"))) {
			merged = true;
			continue;
		}
		prev = line;
		if (j == nt || strncmp(o[i], t[j], (size_t)(line - o[i])))
			return 2;
		j++;
	}
	return merged && j == nt ? 1 : 2;
}

/* Whether llvm-symbolizer --inlining gives chain ours at addr (where eu-addr2line does not). */
static bool llvm_agrees(const char *file, uint64_t addr, const char *ours)
{
	struct addrs one = {&addr, 1, 1};
	char **ans;
	int c;

	if (system("command -v llvm-symbolizer >/dev/null"))
		return false;
	ans = oracle(LLVM, file, &one);
	c = compare(ours, ans[0]);
	free(ans[0]);
	free(ans);
	return c == 0 || c == 3;
}

/* Our chains for every step-th byte of file's functions against eu-addr2line's: how many agree. */
static size_t agree(const char *file, unsigned step, size_t *inlined, size_t *merged, size_t *outer,
		    size_t *llvm)
{
	struct dwarf_inline_counts counts = {0};
	struct dwarf_line_counts lc = {0};
	struct dwarf_inline_answer *out;
	struct dwarf_line_answer *lines;
	struct dwarf_ctx *ctx = NULL;
	struct addrs a = {0};
	size_t i, bad = 0, skipped = 0;
	struct stat st;
	char **ans, *s;
	Elf *elf;
	int fd, c;

	function_addrs(file, step, &a);
	ans = oracle(EU, file, &a);
	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY);
	CHECK_INT(fd, >=, 0);
	CHECK_INT(fstat(fd, &st), ==, 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf);
	CHECK_INT(elf_dwarf__read(elf, (uint64_t)st.st_size, true, &ctx), ==, 0);
	out = calloc(a.n, sizeof(*out));
	lines = calloc(a.n, sizeof(*lines));
	CHECK(out && lines);
	CHECK_INT(dwarf_ctx__lines(ctx, a.v, a.n, lines, &lc, NULL), ==, 0);
	CHECK_INT(dwarf_ctx__inlines(ctx, a.v, a.n, out, &counts, NULL), ==, 0);
	for (i = 0; i < a.n; i++) {
		/* No line row: eu-addr2line prints "??:0" and names nothing we compare. */
		if (!lines[i].file) {
			skipped++;
			continue;
		}
		s = ours(&out[i], &lines[i]);
		*inlined += out[i].n > 0;
		c = compare(s, ans[i]);
		if (c == 2 && llvm_agrees(file, a.v[i], s)) {
			c = 4;
			(*llvm)++;
		}
		*merged += c == 1;
		*outer += c == 3;
		if (c == 2 && bad++ < 8)
			fprintf(stderr, "%s 0x%" PRIx64 ":\n  eu-addr2line %s\n  ours         %s\n",
				file, a.v[i], ans[i], s);
		free(s);
	}
	fprintf(stderr,
		"%s: %zu addresses (%zu without a line), %zu with inlined calls, %zu merged by "
		"eu-addr2line, %zu outer names by symbol, %zu as llvm-symbolizer's, %zu differ; "
		"units %" PRIu64 ", bad %" PRIu64 ", unsupported %" PRIu64 ", capped %" PRIu64 "\n",
		file, a.n, skipped, *inlined, *merged, *outer, *llvm, bad, counts.units,
		counts.bad_units, counts.unsupported, counts.capped);
	CHECK_INT(bad, ==, 0);
	CHECK_U64(counts.bad_units + counts.unsupported + counts.capped, ==, 0);
	for (i = 0; i < a.n; i++)
		free(ans[i]);
	free(ans);
	free(out);
	free(lines);
	free(a.v);
	dwarf_ctx__free(ctx);
	elf_end(elf);
	close(fd);
	return a.n - skipped - bad;
}

TEST(dwarf_inline_chain_of_three_dwarf5_matches_eu_addr2line)
{
	size_t inlined = 0, merged = 0, outer = 0, llvm = 0;

	agree(build("c5", false, "-O2 -g"), 1, &inlined, &merged, &outer, &llvm);
	CHECK_INT(llvm, ==, 0);
	CHECK_INT(llvm, ==, 0);
	CHECK_INT(outer, ==, 0);
	CHECK_INT(outer, ==, 0);
	CHECK_INT(inlined, >, 10);
	CHECK_INT(merged, ==, 0);
}

TEST(dwarf_inline_chain_of_three_dwarf4_matches_eu_addr2line)
{
	size_t inlined = 0, merged = 0, outer = 0, llvm = 0;

	agree(build("c4", false, "-O2 -gdwarf-4"), 1, &inlined, &merged, &outer, &llvm);
	CHECK_INT(llvm, ==, 0);
	CHECK_INT(outer, ==, 0);
	CHECK_INT(inlined, >, 10);
	CHECK_INT(merged, ==, 0);
}

TEST(dwarf_inline_compressed_matches_eu_addr2line)
{
	size_t inlined = 0, merged = 0, outer = 0, llvm = 0;

	agree(build("cz", false, "-O2 -g -gz=zlib"), 1, &inlined, &merged, &outer, &llvm);
	CHECK_INT(llvm, ==, 0);
	CHECK_INT(outer, ==, 0);
	CHECK_INT(inlined, >, 10);
	CHECK_INT(merged, ==, 0);
}

TEST(dwarf_inline_cxx_templates_match_eu_addr2line)
{
	size_t inlined = 0, merged = 0, outer = 0, llvm = 0;

	agree(build("cc", true, "-O2 -g"), 1, &inlined, &merged, &outer, &llvm);
	CHECK_INT(inlined, >, 2);
}

/* Exactly the chains the fixture's source says, by name and line. */
TEST(dwarf_inline_chain_of_three_exact)
{
	const char *bin = build("exact", false, "-O2 -g");
	struct dwarf_inline_counts counts = {0};
	struct dwarf_inline_answer *out;
	struct dwarf_ctx *ctx = NULL;
	struct addrs a = {0};
	size_t i, three = 0, sites[2] = {0};
	struct stat st;
	Elf *elf;
	int fd = open(bin, O_RDONLY);

	CHECK_INT(fd, >=, 0);
	function_addrs(bin, 1, &a);
	CHECK_INT(fstat(fd, &st), ==, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK_INT(elf_dwarf__read(elf, (uint64_t)st.st_size, true, &ctx), ==, 0);
	out = calloc(a.n, sizeof(*out));
	CHECK(out);
	CHECK_INT(dwarf_ctx__inlines(ctx, a.v, a.n, out, &counts, NULL), ==, 0);
	for (i = 0; i < a.n; i++) {
		const struct dwarf_inline_answer *o = &out[i];

		if (o->n == 3 && !strcmp(o->frames[0].name, "leaf")) {
			CHECK_STR(o->frames[1].name, "mid");
			CHECK_STR(o->frames[2].name, "top");
			CHECK_STR(o->subprogram, "chain");
			CHECK_INT(o->frames[0].call_line, ==, 7);
			CHECK_INT(o->frames[1].call_line, ==, 11);
			CHECK_INT(o->frames[2].call_line, ==, 15);
			CHECK(strstr(o->frames[0].call_file, "inl.c"));
			three++;
		}
		if (o->n == 1 && !strcmp(o->frames[0].name, "twice")) {
			CHECK_STR(o->subprogram, "sites");
			CHECK(o->frames[0].call_line == 23 || o->frames[0].call_line == 25);
			sites[o->frames[0].call_line == 25]++;
		}
	}
	CHECK_INT(three, >, 0);
	CHECK_INT(sites[0], >, 0);
	CHECK_INT(sites[1], >, 0);
	free(out);
	free(a.v);
	dwarf_ctx__free(ctx);
	elf_end(elf);
	close(fd);
}

TEST(dwarf_inline_debian_libc_matches_eu_addr2line)
{
	size_t inlined = 0, merged = 0, outer = 0, llvm = 0;

	if (system("command -v eu-addr2line >/dev/null 2>&1"))
		test_skip("eu-addr2line (elfutils) missing");
	CHECK_INT(agree(libc_debug_file(), 61, &inlined, &merged, &outer, &llvm), >, 10000);
	CHECK_INT(inlined, >, 1000);
}

/* --- crafted and hostile .debug_info ----------------------------------------------------- */

/* Section bytes written by hand, growing. */
struct sec {
	uint8_t *b;
	size_t n, cap;
};

static void emit(struct sec *w, const void *p, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = 2 * (w->n + n) + 256;
		w->b = realloc(w->b, w->cap);
		CHECK(w->b);
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void uleb(struct sec *w, uint64_t v)
{
	uint8_t b;

	do {
		b = v & 0x7f;
		v >>= 7;
		if (v)
			b |= 0x80;
		emit(w, &b, 1);
	} while (v);
}

static void w8(struct sec *w, uint8_t v)
{
	emit(w, &v, 1);
}

static void w32(struct sec *w, uint32_t v)
{
	emit(w, &v, 4);
}

static void w64(struct sec *w, uint64_t v)
{
	emit(w, &v, 8);
}

/* An abbreviation: code, tag, children, then (attribute, form) pairs, 0 last. */
static void abbrev(struct sec *w, unsigned code, unsigned tag, bool children, const unsigned *af)
{
	uleb(w, code);
	uleb(w, tag);
	w8(w, children);
	for (; *af; af += 2) {
		uleb(w, af[0]);
		uleb(w, af[1]);
	}
	uleb(w, 0);
	uleb(w, 0);
}

/* DW_AT_*, DW_FORM_*, DW_TAG_* used below. */
enum {
	T_CU = 0x11,
	T_INL = 0x1d,
	T_SUB = 0x2e,
	A_NAME = 0x03,
	A_LOW = 0x11,
	A_HIGH = 0x12,
	A_ORIGIN = 0x31,
	A_CALL_LINE = 0x59,
	F_ADDR = 0x01,
	F_BLOCK4 = 0x04,
	F_DATA4 = 0x06,
	F_STRING = 0x08,
	F_DATA1 = 0x0b,
	F_REF4 = 0x13,
	F_INDIRECT = 0x16,
};

/*
 * The abbreviations of the crafted unit: 1 the unit, 2 a subprogram
 * (name, pc range), 3 an inlined call (origin, pc range, call line),
 * 4 an abstract subprogram (name), 5 an inlined call whose form is
 * DW_FORM_indirect.
 */
static void crafted_abbrevs(struct sec *a)
{
	static const unsigned cu[] = {A_LOW, F_ADDR, A_HIGH, F_DATA4, 0};
	static const unsigned sub[] = {A_NAME, F_STRING, A_LOW, F_ADDR, A_HIGH, F_DATA4, 0};
	static const unsigned inl[] = {A_ORIGIN, F_REF4,      A_LOW,   F_ADDR, A_HIGH,
				       F_DATA4,	 A_CALL_LINE, F_DATA1, 0};
	static const unsigned abs[] = {A_NAME, F_STRING, 0};
	static const unsigned ind[] = {A_NAME, F_INDIRECT, 0};

	abbrev(a, 1, T_CU, true, cu);
	abbrev(a, 2, T_SUB, true, sub);
	abbrev(a, 3, T_INL, true, inl);
	abbrev(a, 4, T_SUB, false, abs);
	abbrev(a, 5, T_SUB, false, ind);
	uleb(a, 0);
}

/* An inlined call (abbreviation 3) of origin (a unit offset) over [lo, lo + len), its children
 * open. */
static void inlined(struct sec *w, uint32_t origin, uint64_t lo, uint32_t len, uint8_t line)
{
	uleb(w, 3);
	w32(w, origin);
	w64(w, lo);
	w32(w, len);
	w8(w, line);
}

/*
 * A DWARF 4 unit: "inl" (abstract), "outer" over [0x1000, 0x1100) with
 * "inl" inlined at line 7 over [0x1010, 0x1020), and in it "inl" again at
 * line 9 over [0x1014, 0x1018). self_origin: the inner call's origin is
 * itself (a loop of references).
 */
static void crafted_unit(struct sec *w, bool self_origin)
{
	size_t start = w->n;
	uint32_t abs_at, inner_at, len;

	w32(w, 0);
	w8(w, 4);
	w8(w, 0);  /* version 4 */
	w32(w, 0); /* abbreviation offset */
	w8(w, 8);
	uleb(w, 1);
	w64(w, 0x1000);
	w32(w, 0x100);
	abs_at = (uint32_t)(w->n - start);
	uleb(w, 4);
	emit(w, "inl", 4);
	uleb(w, 2);
	emit(w, "outer", 6);
	w64(w, 0x1000);
	w32(w, 0x100);
	inlined(w, abs_at, 0x1010, 0x10, 7);
	inner_at = (uint32_t)(w->n - start);
	inlined(w, self_origin ? inner_at : abs_at, 0x1014, 4, 9);
	w8(w, 0); /* the inner call's children */
	w8(w, 0); /* the outer call's */
	w8(w, 0); /* outer's */
	w8(w, 0); /* the unit's */
	len = (uint32_t)(w->n - start - 4);
	memcpy(w->b + start, &len, 4);
}

static const uint64_t probes[] = {0xfff, 0x1000, 0x1010, 0x1014, 0x1017, 0x1018, 0x10ff, 0x1100};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* Looks the probes up in info and abbrev (exact-size copies, for ASan). */
static int lookup(const uint8_t *info, size_t ninfo, const uint8_t *ab, size_t nab,
		  struct dwarf_inline_answer *out, void **mem, struct dwarf_inline_counts *c)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	uint8_t *i = malloc(ninfo ? ninfo : 1), *a = malloc(nab ? nab : 1);
	int err;

	CHECK(i && a);
	memcpy(i, info, ninfo);
	memcpy(a, ab, nab);
	secs[DWARF_INFO] = (struct dwarf_section_bytes){i, ninfo, false};
	secs[DWARF_ABBREV] = (struct dwarf_section_bytes){a, nab, false};
	err = dwarf_inline__lookup(secs, probes, NPROBES, out, mem, c, NULL);
	for (size_t k = 0; !err && k < NPROBES; k++)
		CHECK_INT(out[k].n, <=, DWARF_MAX_INLINE_DEPTH);
	free(i);
	free(a);
	return err;
}

TEST(dwarf_inline_crafted_unit)
{
	struct dwarf_inline_answer out[NPROBES];
	struct dwarf_inline_counts c = {0};
	struct sec info = {0}, ab = {0};
	void *mem = NULL;

	crafted_abbrevs(&ab);
	crafted_unit(&info, false);
	CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.units, ==, 1);
	CHECK_U64(c.bad_units + c.unsupported + c.capped, ==, 0);
	CHECK(!out[0].subprogram && !out[7].subprogram);
	CHECK_STR(out[1].subprogram, "outer");
	CHECK_INT(out[1].n, ==, 0);
	CHECK_INT(out[2].n, ==, 1);
	CHECK_STR(out[2].frames[0].name, "inl");
	CHECK_INT(out[2].frames[0].call_line, ==, 7);
	CHECK(!out[2].frames[0].call_file); /* the unit has no line table */
	CHECK_INT(out[3].n, ==, 2);
	CHECK_STR(out[3].frames[0].name, "inl");
	CHECK_INT(out[3].frames[0].call_line, ==, 9);
	CHECK_INT(out[3].frames[1].call_line, ==, 7);
	CHECK_INT(out[4].n, ==, 2);
	CHECK_INT(out[5].n, ==, 1);
	CHECK_INT(out[6].n, ==, 0);
	CHECK_STR(out[6].subprogram, "outer");
	free(mem);
	free(info.b);
	free(ab.b);
}

TEST(dwarf_inline_reference_loop_capped)
{
	struct dwarf_inline_answer out[NPROBES];
	struct dwarf_inline_counts c = {0};
	struct sec info = {0}, ab = {0};
	void *mem = NULL;

	crafted_abbrevs(&ab);
	crafted_unit(&info, true);
	CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
	CHECK_INT(out[3].n, ==, 2);
	CHECK(!out[3].frames[0].name); /* named by nothing but itself */
	CHECK_STR(out[3].frames[1].name, "inl");
	CHECK_U64(c.capped, >, 0);
	free(mem);
	free(info.b);
	free(ab.b);
}

/* Cut at every length, every byte changed: an answer or none, never a read outside. */
TEST(dwarf_inline_crafted_cut_and_changed)
{
	struct dwarf_inline_answer out[NPROBES];
	struct dwarf_inline_counts c = {0};
	struct sec info = {0}, ab = {0};
	void *mem = NULL;
	size_t cut, i;
	uint8_t keep;
	int v;

	crafted_abbrevs(&ab);
	crafted_unit(&info, false);
	for (cut = 1; cut < info.n; cut++) {
		CHECK_INT(lookup(info.b, cut, ab.b, ab.n, out, &mem, &c), ==, 0);
		free(mem);
	}
	CHECK_U64(c.bad_units, >, 0);
	for (cut = 0; cut < ab.n; cut++) {
		CHECK_INT(lookup(info.b, info.n, ab.b, cut, out, &mem, &c), ==, 0);
		free(mem);
	}
	for (i = 0; i < info.n + ab.n; i++) {
		uint8_t *b = i < info.n ? &info.b[i] : &ab.b[i - info.n];

		keep = *b;
		for (v = 0; v < 3; v++) {
			*b = v == 0 ? 0xff : v == 1 ? 0x80 : keep ^ 1;
			CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
			free(mem);
		}
		*b = keep;
	}
	free(info.b);
	free(ab.b);
}

/* A DIE that uses abbreviation code, then the unit's end: its length fixed. */
static void unit_of_one(struct sec *w, void (*die)(struct sec *w))
{
	size_t start = w->n;
	uint32_t len;

	w32(w, 0);
	w8(w, 4);
	w8(w, 0);
	w32(w, 0);
	w8(w, 8);
	uleb(w, 1);
	w64(w, 0x1000);
	w32(w, 0x100);
	die(w);
	w8(w, 0);
	len = (uint32_t)(w->n - start - 4);
	memcpy(w->b + start, &len, 4);
}

/* DW_FORM_indirect naming DW_FORM_indirect, again and again. */
static void indirect_loop(struct sec *w)
{
	int i;

	uleb(w, 5);
	for (i = 0; i < 1000; i++)
		uleb(w, F_INDIRECT);
}

/* Subprograms nested deeper than DWARF_MAX_DEPTH, each over the unit's code. */
static void too_deep(struct sec *w)
{
	unsigned i;

	uleb(w, 2);
	emit(w, "outer", 6);
	w64(w, 0x1000);
	w32(w, 0x100);
	for (i = 0; i < DWARF_MAX_DEPTH + 10; i++)
		inlined(w, 0, 0x1000, 0x100, 1);
}

TEST(dwarf_inline_hostile_forms_and_depth_counted)
{
	struct dwarf_inline_answer out[NPROBES];
	struct dwarf_inline_counts c = {0};
	struct sec info = {0}, ab = {0};
	void *mem = NULL;

	crafted_abbrevs(&ab);
	unit_of_one(&info, indirect_loop);
	CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.unsupported, ==, 1);
	free(mem);
	info.n = 0;
	unit_of_one(&info, too_deep);
	CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.capped, >=, 1);
	CHECK_INT(out[1].n, <=, DWARF_MAX_INLINE_DEPTH);
	free(mem);
	free(info.b);
	free(ab.b);
}

TEST(dwarf_inline_huge_counts_refused)
{
	static const unsigned blk[] = {A_NAME, F_BLOCK4, 0};
	struct dwarf_inline_answer out[NPROBES];
	struct dwarf_inline_counts c = {0};
	struct sec info = {0}, ab = {0}, many = {0};
	void *mem = NULL;
	unsigned i;

	/* A unit of 2^32 bytes (64-bit format) in a section of a few. */
	w32(&info, 0xffffffffu);
	w64(&info, 1ull << 32);
	w8(&info, 4);
	crafted_abbrevs(&ab);
	CHECK_INT(lookup(info.b, info.n, ab.b, ab.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.bad_units, ==, 1);
	free(mem);
	/* A block of 2^32 - 1 bytes. */
	info.n = 0;
	w32(&info, 13);
	w8(&info, 4);
	w8(&info, 0);
	w32(&info, 0);
	w8(&info, 8);
	uleb(&info, 1);
	w32(&info, 0xffffffffu);
	w8(&info, 0);
	abbrev(&many, 1, T_CU, true, blk);
	uleb(&many, 0);
	CHECK_INT(lookup(info.b, info.n, many.b, many.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.bad_units, ==, 2);
	free(mem);
	/* More abbreviations than DWARF_MAX_ABBREVS in one table. */
	many.n = 0;
	for (i = 1; i <= DWARF_MAX_ABBREVS + 1; i++)
		abbrev(&many, i, T_CU, true, blk);
	uleb(&many, 0);
	info.n = 0;
	crafted_unit(&info, false);
	CHECK_INT(lookup(info.b, info.n, many.b, many.n, out, &mem, &c), ==, 0);
	CHECK_U64(c.capped, ==, 1);
	free(mem);
	free(info.b);
	free(ab.b);
	free(many.b);
}
