// SPDX-License-Identifier: MIT
/*
 * The compact unwind table answers, for every address of a real library,
 * the rule of the CFI row that covers it: checked against the CFI reader's
 * own rows for the system's libc (and a fixture), at the first, middle and
 * last byte of every row, and in the gaps between functions.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwind/elf_cfi.h"
#include "unwind/unwind_rule.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

struct check {
	const struct unwind_table *t;
	struct unwind_rules *rules;
	struct unwind_rule_ctx ctx;
	unsigned long rows, bad;
	uint64_t prev_end;
};

static void check_at(struct check *c, uint64_t addr, uint32_t want)
{
	uint32_t got = unwind_table__lookup(c->t, addr);

	if (got != want && c->bad++ < 5)
		fprintf(stderr, "  %#lx: rule %u, want %u\n", (unsigned long)addr, got, want);
}

static int check_row(const struct cfi_row *row, void *arg)
{
	struct check *c = arg;
	struct cprof_unwind_rule rule = unwind_rule_from_cfi(&c->ctx, row);
	uint32_t id;

	if (unwind_rules__id(c->rules, &rule, &id))
		return -ENOMEM;
	c->rows++;
	check_at(c, row->begin, id);
	check_at(c, row->begin + (row->end - row->begin) / 2, id);
	check_at(c, row->end - 1, id);
	return 0;
}

static void check_file(const char *path)
{
	struct unwind_table_stats st;
	struct unwind_sources src;
	struct unwind_rules *rules;
	struct unwind_table *t;
	struct cfi_program *prog;
	struct elf_cfi cfi;
	struct cfi_fde fde;
	struct check c = {0};
	uint64_t off = 0;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf != NULL);
	CHECK_INT(elf_cfi__read(elf, &cfi), ==, 0);
	CHECK(cfi.has_eh_frame);
	elf_cfi__sources(&cfi, NULL, &src);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(unwind_table__build(&src, rules, &t, &st), ==, 0);
	CHECK_INT(st.bad_entries, ==, 0);
	CHECK(t->nrows > 0 && t->npages > 0);
	CHECK_INT(t->pages[t->npages], ==, t->nrows);

	c.t = t;
	c.rules = rules;
	c.ctx.arch = cfi.arch;
	CHECK_INT(cfi_program__new(cfi.arch, &prog), ==, 0);
	while (cfi_section__next(&cfi.eh_frame, &off, &fde) == 0) {
		c.ctx.ra_column = fde.ra_column;
		c.ctx.signal_frame = fde.signal_frame;
		CHECK_INT(cfi_program__run(prog, &fde, check_row, &c), ==, 0);
	}
	CHECK(c.rows >= st.cfi_rows / 2);
	CHECK_INT(c.bad, ==, 0);
	/* Before the first function and far past the last: no CFI. */
	CHECK_INT(unwind_table__lookup(t, 0), ==, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(t, UINT64_MAX), ==, CPROF_RULE_NO_CFI);
	/* 4 bytes per row, plus one index entry per 64 KiB of code. */
	CHECK(unwind_table__bytes(t) <= 4 * t->nrows + 4 * (t->npages + 1));

	cfi_program__free(prog);
	unwind_table__free(t);
	unwind_rules__free(rules);
	elf_end(elf);
	close(fd);
}

TEST(unwind_table_answers_every_row_of_libc)
{
	check_file(test_system_libc());
}

TEST(unwind_table_answers_every_row_of_a_fixture)
{
	check_file(test_build_fixture("known_tree"));
}

static bool all_padding(const void *arg, uint64_t begin, uint64_t end)
{
	(void)arg;
	return begin == 0x1010 && end == 0x1020;
}

/* Two functions with a gap: the gap, and past the end, have no CFI. */
TEST(unwind_table_gaps_between_functions_have_no_cfi)
{
	/* .eh_frame: a CIE (cf=1 df=-8 ra=16, CFA rsp+8, ra at c-8) and two FDEs (absptr). */
	static const uint8_t eh[] = {/* CIE */
				     0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90,
				     1, 0, 0,
				     /* FDE 1: 0x1000..0x1010, then CFA rsp+16 from 0x1004 */
				     0x18, 0, 0, 0, 0x18, 0, 0, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0,
				     0x10, 0, 0, 0, 0, 0, 0, 0, 0x44, 0x0e, 16, 0,
				     /* FDE 2: 0x1020..0x1030 */
				     0x18, 0, 0, 0, 0x34, 0, 0, 0, 0x20, 0x10, 0, 0, 0, 0, 0, 0,
				     0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				     /* terminator */
				     0, 0, 0, 0};
	struct cfi_section sec = {CFI_EH_FRAME, eh, sizeof(eh), 0x4000, {8, false, 0}};
	struct unwind_sources src = {CFI_ARCH_X86_64, {&sec}, 1};
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	struct unwind_table *t;
	uint32_t at0, at4;

	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(unwind_table__build(&src, rules, &t, &st), ==, 0);
	CHECK_INT(st.fdes, ==, 2);
	at0 = unwind_table__lookup(t, 0x1000);
	at4 = unwind_table__lookup(t, 0x1004);
	CHECK(at0 != CPROF_RULE_NO_CFI && at4 != CPROF_RULE_NO_CFI && at0 != at4);
	CHECK_INT(unwind_rules__all(rules)[at0].cfa_kind, ==, CPROF_CFA_SP);
	CHECK_INT(unwind_rules__all(rules)[at0].cfa_off, ==, 8);
	CHECK_INT(unwind_rules__all(rules)[at4].cfa_off, ==, 16);
	CHECK_INT(unwind_rules__all(rules)[at4].ra_off, ==, -8);
	CHECK_INT(unwind_table__lookup(t, 0x100f), ==, at4);
	CHECK_INT(unwind_table__lookup(t, 0x0fff), ==, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(t, 0x1010), ==, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(t, 0x101f), ==, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(t, 0x1020), ==, at0);
	CHECK_INT(unwind_table__lookup(t, 0x1030), ==, CPROF_RULE_NO_CFI);
	/* Same rule in both functions: one dictionary entry. */
	CHECK_INT(unwind_rules__count(rules), ==, 3);
	unwind_table__free(t);

	/* A gap of padding is no row: the row before covers it, no code runs there. */
	src.is_padding = all_padding;
	CHECK_INT(unwind_table__build(&src, rules, &t, &st), ==, 0);
	CHECK_INT(st.padding_gaps, ==, 1);
	CHECK_INT(unwind_table__lookup(t, 0x1010), ==, at4);
	CHECK_INT(unwind_table__lookup(t, 0x1020), ==, at0);
	CHECK_INT(unwind_table__lookup(t, 0x1030), ==, CPROF_RULE_NO_CFI);
	unwind_table__free(t);
	unwind_rules__free(rules);
}
