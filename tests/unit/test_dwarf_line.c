// SPDX-License-Identifier: MIT
/*
 * dwarf_line against elfutils' eu-addr2line as the oracle, then crafted
 * and hostile line tables.
 *
 * Real tables: a small program in two source files (a header's static
 * inline function, loops, a switch) is built by the test with gcc at -O0
 * and -O2 with -g (DWARF 5, gcc's default), with -gdwarf-4, and with its
 * debug sections compressed (-gz=zlib); then Debian's libc with its debug
 * file from libc6-dbg. At every function start and every few bytes inside
 * each function, our file and line must be eu-addr2line's. The one kind
 * of difference allowed, and counted: where eu-addr2line prints a path
 * joined to the unit's compilation directory, which only .debug_info
 * names (DWARF 4's directory 0), ours is the same path without it.
 *
 * Crafted tables: a DWARF 4 and a DWARF 5 unit written byte by byte; then
 * cut at every length and every byte changed: an answer or none, never a
 * read outside the buffer (the ASan build), and the lies a table can tell
 * (huge counts, rows that go backwards, bad forms) counted.
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

#include "lib/dwarf_line.h"
#include "lib/load_budget.h"
#include "resolve/elf_dwarf.h"
#include "resolve/elf_symtab.h"
#include "dwarf_fixtures.h"
#include "test.h"

/* --- real programs ------------------------------------------------------------------------ */

static const char fixture_h[] = "static inline unsigned mix(unsigned a, unsigned b)\n"
				"{\n"
				"	a ^= b << 3;\n"
				"	a *= 2654435761u;\n"
				"	return a ^ (a >> 15);\n"
				"}\n";

static const char fixture_c[] = "#include <stdio.h>\n"
				"#include \"fixture.h\"\n"
				"\n"
				"__attribute__((noinline)) unsigned walk(unsigned n)\n"
				"{\n"
				"	unsigned s = 0;\n"
				"\n"
				"	for (unsigned i = 0; i < n; i++)\n"
				"		s = mix(s, i);\n"
				"	return s;\n"
				"}\n"
				"\n"
				"__attribute__((noinline)) int pick(int k)\n"
				"{\n"
				"	switch (k) {\n"
				"	case 0:\n"
				"		return (int)walk(10);\n"
				"	case 1:\n"
				"		return (int)mix(3, 4);\n"
				"	default:\n"
				"		return k * 7;\n"
				"	}\n"
				"}\n"
				"\n"
				"int main(int argc, char **argv)\n"
				"{\n"
				"	(void)argv;\n"
				"	printf(\"%d\\n\", pick(argc) + (int)mix(argc, 2));\n"
				"	return 0;\n"
				"}\n";

/* Builds the fixture with flags into the scratch dir; its path. */
static const char *build(const char *name, const char *flags)
{
	static char bin[8][1024];
	static int next;
	char *out = bin[next++ % 8], src[1024], hdr[1024], cmd[4096];

	if (system("command -v gcc >/dev/null 2>&1 && command -v eu-addr2line >/dev/null 2>&1"))
		test_skip("gcc or eu-addr2line (elfutils) missing");
	snprintf(src, sizeof(src), "%s/fixture.c", test_tmp_dir());
	snprintf(hdr, sizeof(hdr), "%s/fixture.h", test_tmp_dir());
	write_text(src, fixture_c);
	write_text(hdr, fixture_h);
	snprintf(out, sizeof(bin[0]), "%s/%s", test_tmp_dir(), name);
	snprintf(cmd, sizeof(cmd), "cd '%s' && gcc %s -o '%s' fixture.c", test_tmp_dir(), flags,
		 out);
	CHECK_INT(system(cmd), ==, 0);
	return out;
}

/* eu-addr2line's answer, one line per address, into a malloc'd array of strings. */
static char **oracle(const char *file, const struct addrs *a)
{
	char path[1024], out[1024], cmd[4096], line[4096];
	char **ans = calloc(a->n, sizeof(*ans));
	FILE *f;
	size_t i;

	CHECK(ans);
	snprintf(path, sizeof(path), "%s/addrs.txt", test_tmp_dir());
	snprintf(out, sizeof(out), "%s/oracle.txt", test_tmp_dir());
	f = fopen(path, "w");
	CHECK(f);
	for (i = 0; i < a->n; i++)
		fprintf(f, "0x%" PRIx64 "\n", a->v[i]);
	CHECK_INT(fclose(f), ==, 0);
	snprintf(cmd, sizeof(cmd), "eu-addr2line -e '%s' < '%s' > '%s'", file, path, out);
	CHECK_INT(system(cmd), ==, 0);
	f = fopen(out, "r");
	CHECK(f);
	for (i = 0; i < a->n && fgets(line, sizeof(line), f); i++) {
		line[strcspn(line, "\n")] = '\0';
		ans[i] = strdup(line);
	}
	fclose(f);
	CHECK_INT(i, ==, a->n);
	return ans;
}

/* "FILE:LINE" or "FILE:LINE:COLUMN" into file (cut in place) and line; false for "??". */
static bool split(char *s, unsigned long *line)
{
	char *c = strrchr(s, ':'), *c2;

	if (!c || !strncmp(s, "??", 2))
		return false;
	*c = '\0';
	*line = strtoul(c + 1, NULL, 10);
	c2 = strrchr(s, ':');
	if (c2 && c2[1] >= '0' && c2[1] <= '9' && strspn(c2 + 1, "0123456789") == strlen(c2 + 1)) {
		*c2 = '\0';
		*line = strtoul(c2 + 1, NULL, 10);
	}
	return true;
}

/* Whether path ends with "/" + tail. */
static bool under_dir(const char *path, const char *tail)
{
	size_t p = strlen(path), t = strlen(tail);

	return p > t && path[p - t - 1] == '/' && !strcmp(path + p - t, tail);
}

/* Our answers for a's addresses in file, checked against the oracle's; *joined: comp-dir cases. */
static void agree(const char *file, unsigned step, size_t *checked, size_t *joined)
{
	struct dwarf_line_counts counts = {0};
	struct dwarf_line_answer *out;
	struct dwarf_ctx *ctx = NULL;
	struct addrs a = {0};
	unsigned long line;
	size_t i, bad = 0;
	struct stat st;
	char **ans;
	Elf *elf;
	int fd;

	function_addrs(file, step, &a);
	ans = oracle(file, &a);
	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY);
	CHECK_INT(fd, >=, 0);
	CHECK_INT(fstat(fd, &st), ==, 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf);
	CHECK_INT(elf_dwarf__read(elf, (uint64_t)st.st_size, false, &ctx), ==, 0);
	out = calloc(a.n, sizeof(*out));
	CHECK(out);
	CHECK_INT(dwarf_ctx__lines(ctx, a.v, a.n, out, &counts, NULL), ==, 0);
	for (i = 0; i < a.n; i++) {
		bool has = split(ans[i], &line);

		if (!has && !out[i].file)
			continue;
		if (has && out[i].file && line == out[i].line &&
		    (!strcmp(ans[i], out[i].file) || under_dir(ans[i], out[i].file))) {
			*joined += strcmp(ans[i], out[i].file) != 0;
			continue;
		}
		if (bad++ < 8)
			fprintf(stderr, "%s 0x%" PRIx64 ": eu-addr2line %s:%lu, ours %s:%u\n", file,
				a.v[i], has ? ans[i] : "??", has ? line : 0,
				out[i].file ? out[i].file : "??", out[i].line);
	}
	*checked += a.n;
	fprintf(stderr,
		"%s: %zu addresses, %zu differ; units %" PRIu64 ", bad %" PRIu64
		", unsupported %" PRIu64 "\n",
		file, a.n, bad, counts.units, counts.bad_units, counts.unsupported);
	CHECK_INT(bad, ==, 0);
	CHECK_INT(counts.bad_units + counts.unsupported + counts.capped_units, ==, 0);
	for (i = 0; i < a.n; i++)
		free(ans[i]);
	free(ans);
	free(out);
	free(a.v);
	dwarf_ctx__free(ctx);
	elf_end(elf);
	close(fd);
}

TEST(dwarf_line_fixture_O0_dwarf5_matches_eu_addr2line)
{
	size_t n = 0, joined = 0;

	agree(build("o0", "-O0 -g"), 1, &n, &joined);
	CHECK_INT(joined, ==, 0); /* DWARF 5 names directory 0 in the line table itself */
}

TEST(dwarf_line_fixture_O2_dwarf5_matches_eu_addr2line)
{
	size_t n = 0, joined = 0;

	agree(build("o2", "-O2 -g"), 1, &n, &joined);
	CHECK_INT(joined, ==, 0);
}

TEST(dwarf_line_fixture_O2_dwarf4_matches_eu_addr2line)
{
	size_t n = 0, joined = 0;

	agree(build("o2v4", "-O2 -gdwarf-4"), 1, &n, &joined);
}

TEST(dwarf_line_fixture_compressed_matches_eu_addr2line)
{
	const char *bin = build("o2z", "-O2 -g -gz=zlib");
	char cmd[2048];
	size_t n = 0, joined = 0;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | grep -q ' .debug_line .* C '", bin);
	CHECK_INT(system(cmd), ==, 0); /* the section is compressed indeed */
	agree(bin, 1, &n, &joined);
}

TEST(dwarf_line_debian_libc_matches_eu_addr2line)
{
	size_t n = 0, joined = 0;

	if (system("command -v eu-addr2line >/dev/null 2>&1"))
		test_skip("eu-addr2line (elfutils) missing");
	agree(libc_debug_file(), 61, &n, &joined);
	CHECK_INT(n, >, 10000);
}

/* --- crafted tables ----------------------------------------------------------------------- */

struct bytes {
	uint8_t b[512];
	size_t n;
};

static void put(struct bytes *w, const void *p, size_t n)
{
	CHECK(w->n + n <= sizeof(w->b));
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void u8(struct bytes *w, uint8_t v)
{
	put(w, &v, 1);
}

static void u16(struct bytes *w, uint16_t v)
{
	put(w, &v, 2);
}

static void u32(struct bytes *w, uint32_t v)
{
	put(w, &v, 4);
}

static void str(struct bytes *w, const char *s)
{
	put(w, s, strlen(s) + 1);
}

static const uint8_t std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};

/* The line program both units run: two rows and the end, at base. */
static void program(struct bytes *w, uint64_t base, uint8_t second_file)
{
	u8(w, 0); /* DW_LNE_set_address */
	u8(w, 9);
	u8(w, 2);
	put(w, &base, 8);
	u8(w, 3); /* DW_LNS_advance_line 9: line 10 */
	u8(w, 9);
	u8(w, 1); /* DW_LNS_copy */
	u8(w, 4); /* DW_LNS_set_file */
	u8(w, second_file);
	u8(w, 75); /* special: address + 4, line + 1 */
	u8(w, 2);  /* DW_LNS_advance_pc 8 */
	u8(w, 8);
	u8(w, 0); /* DW_LNE_end_sequence */
	u8(w, 1);
	u8(w, 1);
}

/* Header fields from minimum_instruction_length to the standard opcode lengths. */
static void common_header(struct bytes *w)
{
	u8(w, 1);	    /* minimum_instruction_length */
	u8(w, 1);	    /* maximum_operations_per_instruction */
	u8(w, 1);	    /* default_is_stmt */
	u8(w, (uint8_t)-5); /* line_base */
	u8(w, 14);	    /* line_range */
	u8(w, 13);	    /* opcode_base */
	put(w, std_lengths, sizeof(std_lengths));
}

/* Ends a unit begun at start: its unit_length and header_length (at hlen_at). */
static void close_unit(struct bytes *w, size_t start, size_t hlen_at, size_t prog_at)
{
	uint32_t len = (uint32_t)(w->n - start - 4), hlen = (uint32_t)(prog_at - hlen_at - 4);

	memcpy(w->b + start, &len, 4);
	memcpy(w->b + hlen_at, &hlen, 4);
}

/* A DWARF 5 unit at 0x1000: /src/inc/b.h:10 for 4 bytes, then /src/a.c:11 for 8. */
static void unit_v5(struct bytes *w)
{
	size_t start = w->n, hlen_at, prog_at;

	u32(w, 0);
	u16(w, 5);
	u8(w, 8); /* address_size */
	u8(w, 0); /* segment_selector_size */
	hlen_at = w->n;
	u32(w, 0);
	common_header(w);
	u8(w, 1); /* directory formats: path as a string */
	u8(w, 1);
	u8(w, 0x08);
	u8(w, 2);
	str(w, "/src");
	str(w, "inc");
	u8(w, 2); /* file formats: path (string), directory index (data1) */
	u8(w, 1);
	u8(w, 0x08);
	u8(w, 2);
	u8(w, 0x0b);
	u8(w, 2);
	str(w, "a.c");
	u8(w, 0);
	str(w, "b.h");
	u8(w, 1);
	prog_at = w->n;
	program(w, 0x1000, 0);
	close_unit(w, start, hlen_at, prog_at);
}

/* A DWARF 4 unit at 0x2000: a.c:10 for 4 bytes, then inc/b.h:11 for 8. */
static void unit_v4(struct bytes *w)
{
	size_t start = w->n, hlen_at, prog_at;

	u32(w, 0);
	u16(w, 4);
	hlen_at = w->n;
	u32(w, 0);
	common_header(w);
	str(w, "inc");
	u8(w, 0);
	str(w, "a.c");
	put(w, "\0\0\0", 3);
	str(w, "b.h");
	put(w, "\1\0\0", 3);
	u8(w, 0);
	prog_at = w->n;
	program(w, 0x2000, 2);
	close_unit(w, start, hlen_at, prog_at);
}

static const uint64_t probe_addrs[] = {0xfff,  0x1000, 0x1003, 0x1004, 0x100b, 0x100c,
				       0x2000, 0x2003, 0x2004, 0x200b, 0x200c};
#define NPROBES (sizeof(probe_addrs) / sizeof(probe_addrs[0]))

/* Looks the probes up in section bytes b[0..n) (an exact-size copy, for ASan). */
static int lookup(const uint8_t *b, size_t n, struct dwarf_line_answer *out,
		  struct dwarf_line_counts *c, char **names)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	uint8_t *copy = malloc(n ? n : 1);
	int err;

	CHECK(copy);
	memcpy(copy, b, n);
	secs[DWARF_LINE] = (struct dwarf_section_bytes){copy, n, false};
	err = dwarf_line__lookup(secs, probe_addrs, NPROBES, out, names, c, NULL);
	free(copy);
	return err;
}

static void check_answer(const struct dwarf_line_answer *a, const char *file, uint32_t line)
{
	if (!file) {
		CHECK(!a->file);
		return;
	}
	CHECK_STR(a->file, file);
	CHECK_INT(a->line, ==, line);
}

TEST(dwarf_line_crafted_units)
{
	struct dwarf_line_answer out[NPROBES];
	struct dwarf_line_counts c = {0};
	struct bytes w = {0};
	char *names = NULL;

	unit_v5(&w);
	unit_v4(&w);
	CHECK_INT(lookup(w.b, w.n, out, &c, &names), ==, 0);
	CHECK_INT(c.units, ==, 2);
	CHECK_INT(c.bad_units + c.unsupported + c.capped_units + c.backward_rows, ==, 0);
	check_answer(&out[0], NULL, 0);
	check_answer(&out[1], "/src/inc/b.h", 10);
	check_answer(&out[2], "/src/inc/b.h", 10);
	check_answer(&out[3], "/src/a.c", 11);
	check_answer(&out[4], "/src/a.c", 11);
	check_answer(&out[5], NULL, 0);
	check_answer(&out[6], "a.c", 10);
	check_answer(&out[7], "a.c", 10);
	check_answer(&out[8], "inc/b.h", 11);
	check_answer(&out[9], "inc/b.h", 11);
	check_answer(&out[10], NULL, 0);
	free(names);
}

/* Every answer is none or one of the crafted files, whatever the bytes say. */
static void check_sane(const struct dwarf_line_answer *out)
{
	size_t i;

	for (i = 0; i < NPROBES; i++)
		CHECK(!out[i].file || strlen(out[i].file) < 64);
}

TEST(dwarf_line_crafted_cut_at_every_length)
{
	struct dwarf_line_answer out[NPROBES];
	struct bytes w = {0};
	size_t n, first;

	unit_v5(&w);
	first = w.n;
	unit_v4(&w);
	for (n = 0; n < w.n; n++) {
		struct dwarf_line_counts c = {0};
		char *names = NULL;

		CHECK_INT(lookup(w.b, n, out, &c, &names), ==, 0);
		check_sane(out);
		/* A unit cut short is counted; the first whole one still answers. */
		if (n > 0 && n != first)
			CHECK_INT(c.bad_units + c.unsupported, >, 0);
		free(names);
	}
}

TEST(dwarf_line_crafted_every_byte_changed)
{
	static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	struct dwarf_line_answer out[NPROBES];
	struct bytes w = {0}, m;
	size_t i, v;

	unit_v5(&w);
	unit_v4(&w);
	for (i = 0; i < w.n; i++) {
		for (v = 0; v < sizeof(values); v++) {
			struct dwarf_line_counts c = {0};
			char *names = NULL;

			m = w;
			m.b[i] = values[v];
			CHECK_INT(lookup(m.b, m.n, out, &c, &names), ==, 0);
			check_sane(out);
			free(names);
		}
	}
}

/* The header of a DWARF 5 unit up to its directory table, whose count is huge. */
TEST(dwarf_line_crafted_huge_count_capped)
{
	struct dwarf_line_answer out[NPROBES];
	struct dwarf_line_counts c = {0};
	struct bytes w = {0};
	size_t start, hlen_at, prog_at;
	char *names = NULL;

	start = w.n;
	u32(&w, 0);
	u16(&w, 5);
	u8(&w, 8);
	u8(&w, 0);
	hlen_at = w.n;
	u32(&w, 0);
	common_header(&w);
	u8(&w, 0); /* no formats: entries of no bytes, as many as the count says */
	put(&w, "\xff\xff\xff\xff\x0f", 5);
	u8(&w, 0);
	u8(&w, 0);
	prog_at = w.n;
	program(&w, 0x1000, 0);
	close_unit(&w, start, hlen_at, prog_at);
	unit_v4(&w);
	CHECK_INT(lookup(w.b, w.n, out, &c, &names), ==, 0);
	CHECK_INT(c.capped_units, ==, 1);
	check_answer(&out[1], NULL, 0);
	check_answer(&out[6], "a.c", 10); /* the next unit is still read */
	free(names);
}

TEST(dwarf_line_crafted_bad_form_skips_its_unit)
{
	struct dwarf_line_answer out[NPROBES];
	struct dwarf_line_counts c = {0};
	struct bytes w = {0};
	char *names = NULL;
	size_t i;

	unit_v5(&w);
	/* The directory path's form (after the format count and DW_LNCT_path): strx, unknown here.
	 */
	for (i = 0; i + 2 < w.n; i++)
		if (w.b[i] == 1 && w.b[i + 1] == 1 && w.b[i + 2] == 0x08) {
			w.b[i + 2] = 0x1a;
			break;
		}
	unit_v4(&w);
	CHECK_INT(lookup(w.b, w.n, out, &c, &names), ==, 0);
	CHECK_INT(c.unsupported, ==, 1);
	check_answer(&out[1], NULL, 0);
	check_answer(&out[6], "a.c", 10);
	free(names);
}

/* A program whose second row is below its first: that row closes no range, and is counted. */
TEST(dwarf_line_crafted_backward_row_counted)
{
	struct dwarf_line_answer out[NPROBES];
	struct dwarf_line_counts c = {0};
	char *names = NULL;
	struct bytes b = {0};
	size_t start = 0, hlen_at, prog_at;
	uint64_t first = 0x2000, back = 0x1ff0;

	u32(&b, 0);
	u16(&b, 4);
	hlen_at = b.n;
	u32(&b, 0);
	common_header(&b);
	u8(&b, 0);
	str(&b, "a.c");
	put(&b, "\0\0\0", 3);
	u8(&b, 0);
	prog_at = b.n;
	u8(&b, 0); /* set_address 0x2000, copy, set_address 0x1ff0, copy, end */
	u8(&b, 9);
	u8(&b, 2);
	put(&b, &first, 8);
	u8(&b, 1);
	u8(&b, 0);
	u8(&b, 9);
	u8(&b, 2);
	put(&b, &back, 8);
	u8(&b, 1);
	u8(&b, 0);
	u8(&b, 1);
	u8(&b, 1);
	close_unit(&b, start, hlen_at, prog_at);
	CHECK_INT(lookup(b.b, b.n, out, &c, &names), ==, 0);
	CHECK_INT(c.backward_rows, ==, 1);
	check_answer(&out[6], NULL, 0); /* no range ends after 0x2000 */
	free(names);
}

/* Compressed sections: inflated when asked; a header over the cap refused before. */
TEST(dwarf_line_compressed_section_caps)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	uint8_t chdr[24 + 16] = {0};
	struct dwarf_ctx *ctx = NULL;
	uint64_t size = DWARF_MAX_SECTION_BYTES + 1;

	chdr[0] = 1; /* ELFCOMPRESS_ZLIB */
	memcpy(chdr + 8, &size, 8);
	secs[DWARF_LINE] = (struct dwarf_section_bytes){chdr, sizeof(chdr), true};
	CHECK_INT(dwarf_ctx__new(secs, true, &ctx), ==, -EFBIG);
	chdr[0] = 2; /* ELFCOMPRESS_ZSTD */
	size = 100;
	memcpy(chdr + 8, &size, 8);
	CHECK_INT(dwarf_ctx__new(secs, true, &ctx), ==, -EOPNOTSUPP);
	chdr[0] = 1; /* zlib, but what follows is not zlib */
	CHECK_INT(dwarf_ctx__new(secs, true, &ctx), ==, 0);
	{
		struct dwarf_line_answer out[NPROBES];
		struct dwarf_line_counts c = {0};

		CHECK_INT(dwarf_ctx__lines(ctx, probe_addrs, NPROBES, out, &c, NULL), ==, -EBADMSG);
		check_answer(&out[1], NULL, 0);
	}
	dwarf_ctx__free(ctx);
	secs[DWARF_LINE].size = 0;
	CHECK_INT(dwarf_ctx__new(secs, true, &ctx), ==, -ENOENT);
}

/* The run's line tables are held to LOAD_MAX_HELD_DWARF_BYTES; a file's are given back when freed.
 */
TEST(dwarf_line_held_bytes_capped)
{
	const char *bin = build("held", "-O2 -g");
	struct load_budget budget = {0};
	struct elf_symtab *e = NULL;
	int err;

	CHECK_INT(elf_symtab__open(bin, &e), ==, 0);
	elf_symtab__set_budget(e, &budget);
	CHECK(!elf_symtab__dwarf(e, &err));
	CHECK_INT(err, ==, -EAGAIN); /* not loaded yet */
	CHECK_INT(elf_symtab__load(e, NULL), ==, 0);
	CHECK(elf_symtab__dwarf(e, &err));
	CHECK_INT(atomic_load(&budget.dwarf_held), >, 0);
	elf_symtab__free(e);
	CHECK_INT(atomic_load(&budget.dwarf_held), ==, 0);

	atomic_store(&budget.dwarf_held, LOAD_MAX_HELD_DWARF_BYTES - 10);
	CHECK_INT(elf_symtab__open(bin, &e), ==, 0);
	elf_symtab__set_budget(e, &budget);
	CHECK_INT(elf_symtab__load(e, NULL), ==, 0);
	CHECK(!elf_symtab__dwarf(e, &err));
	CHECK_INT(err, ==, -ENOSPC);
	elf_symtab__free(e);
	CHECK_U64(atomic_load(&budget.dwarf_held), ==, LOAD_MAX_HELD_DWARF_BYTES - 10);
}
