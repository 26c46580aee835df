// SPDX-License-Identifier: MIT
/*
 * The DW_CFA interpreter (src/unwind/cfi_program.c) on programs written here
 * byte by byte: every opcode it reads, with the exact rows it must give;
 * the factors; the location ops clamped to the function; and every way a
 * program can go wrong (an unknown opcode, an operand cut short, a
 * restore_state with nothing remembered, nesting without end, overflowing
 * factors), each of which must end the table with one unusable row that
 * says why, after the good rows before it.
 *
 * Rows are compared as text, one line each:
 *   BEGIN-END cfa=REG+OFF|exp:BYTES|none rN=RULE... [signed]
 *   BEGIN-END error=EINVAL|EOPNOTSUPP op=0xNN
 * with a register's rule as c+OFF (saved at CFA+OFF), v+OFF (its value is
 * CFA+OFF), rM (in register M), s (same value), u (undefined), exp:BYTES or
 * vexp:BYTES (the expression's bytes, read through the row's pointer).
 * The program bytes are exact-size heap copies, so ASan sees any read past them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/cfi_program.h"

#define PC	 0x1000
#define RANGE	 0x100
#define MAX_ROWS 64

/* The CIE of x86-64 code: CFA = rsp + 8, return address (r16) at CFA - 8. */
#define X86_CIE "\x0c\x07\x08\x90\x01"
/* GCC's arm64 CIE: CFA = sp + 0. */
#define A64_CIE "\x0c\x1f\x00"

struct prog {
	struct cfi_fde fde;
	uint8_t *cie, *insns;
};

/* An FDE for [PC, PC + RANGE) with x86-64's factors over copies of the bytes given. */
static void prog_init(struct prog *p, const void *cie, size_t cie_size, const void *insns,
		      size_t size)
{
	p->cie = malloc(cie_size ? cie_size : 1);
	p->insns = malloc(size ? size : 1);
	CHECK(p->cie && p->insns);
	memcpy(p->cie, cie, cie_size);
	memcpy(p->insns, insns, size);
	p->fde = (struct cfi_fde){
		.pc_begin = PC,
		.pc_range = RANGE,
		.vaddr = 0x400,
		.cie_insns = p->cie,
		.cie_insns_size = cie_size,
		.cie_insns_vaddr = 0x500,
		.insns = p->insns,
		.insns_size = size,
		.insns_vaddr = 0x600,
		.code_align = 1,
		.data_align = -8,
		.ra_column = 16,
		.addr_enc = DW_EH_PE_absptr,
		.addr_size = 8,
	};
}

#define PROG(p, cie, insns) prog_init(p, cie, sizeof(cie) - 1, insns, sizeof(insns) - 1)

static void prog_free(struct prog *p)
{
	free(p->cie);
	free(p->insns);
}

struct got {
	char rows[MAX_ROWS][512];
	size_t n;
	uint64_t next; /* where the next row must begin */
	int stop_at;   /* the callback returns 7 at this row (1-based), if set */
};

static void put_bytes(char *out, size_t size, const uint8_t *p, size_t n)
{
	size_t len = strlen(out), i;

	for (i = 0; i < n && len + 3 < size; i++, len += 2)
		snprintf(out + len, size - len, "%02x", p[i]);
}

static void put_rule(char *out, size_t size, unsigned int reg, const struct cfi_reg *r)
{
	size_t len = strlen(out);

	switch (r->rule) {
	case CFI_REG_UNSET:
		return;
	case CFI_REG_UNDEFINED:
		snprintf(out + len, size - len, " r%u=u", reg);
		return;
	case CFI_REG_SAME:
		snprintf(out + len, size - len, " r%u=s", reg);
		return;
	case CFI_REG_OFFSET:
		snprintf(out + len, size - len, " r%u=c%+lld", reg, (long long)r->offset);
		return;
	case CFI_REG_VAL_OFFSET:
		snprintf(out + len, size - len, " r%u=v%+lld", reg, (long long)r->offset);
		return;
	case CFI_REG_REGISTER:
		snprintf(out + len, size - len, " r%u=r%u", reg, r->reg);
		return;
	case CFI_REG_EXPR:
	case CFI_REG_VAL_EXPR:
		snprintf(out + len, size - len, " r%u=%s:", reg,
			 r->rule == CFI_REG_EXPR ? "exp" : "vexp");
		put_bytes(out, size, r->expr, r->expr_size);
		return;
	}
	snprintf(out + len, size - len, " r%u=?%u", reg, r->rule);
}

/* Formats each row, and checks that the rows follow each other without a gap. */
static int collect(const struct cfi_row *row, void *arg)
{
	struct got *g = arg;
	char *out = g->rows[g->n];
	size_t size = sizeof(g->rows[0]), len;
	unsigned int i;

	CHECK_U64(row->begin, ==, g->next);
	CHECK_U64(row->begin, <, row->end);
	CHECK_INT(g->n, <, MAX_ROWS);
	g->next = row->end;
	g->n++;
	snprintf(out, size, "%llx-%llx", (unsigned long long)row->begin,
		 (unsigned long long)row->end);
	len = strlen(out);
	if (row->error) {
		snprintf(out + len, size - len, " error=%s op=0x%02x",
			 row->error == -EINVAL	     ? "EINVAL"
			 : row->error == -EOPNOTSUPP ? "EOPNOTSUPP"
						     : "?",
			 row->bad_opcode);
		return (int)g->n == g->stop_at ? 7 : 0;
	}
	CHECK_INT(row->bad_opcode, ==, 0);
	if (row->cfa.rule == CFI_CFA_REG_OFFSET) {
		snprintf(out + len, size - len, " cfa=r%u%+lld", row->cfa.reg,
			 (long long)row->cfa.offset);
	} else if (row->cfa.rule == CFI_CFA_EXPR) {
		snprintf(out + len, size - len, " cfa=exp:");
		put_bytes(out, size, row->cfa.expr, row->cfa.expr_size);
	} else {
		CHECK_INT(row->cfa.rule, ==, CFI_CFA_UNSET);
		snprintf(out + len, size - len, " cfa=none");
	}
	for (i = 0; i < CFI_MAX_REGS; i++)
		put_rule(out, size, i, &row->regs[i]);
	if (row->ra_signed) {
		len = strlen(out);
		snprintf(out + len, size - len, " signed");
	}
	return (int)g->n == g->stop_at ? 7 : 0;
}

/* Runs the program; the rows must cover the FDE's whole range. */
static int run(struct cfi_program *cp, const struct prog *p, struct got *g)
{
	int err;

	g->n = 0;
	g->next = p->fde.pc_begin;
	err = cfi_program__run(cp, &p->fde, collect, g);
	if (!err && p->fde.pc_range)
		CHECK_U64(g->next, ==, p->fde.pc_begin + p->fde.pc_range);
	return err;
}

static void expect_rows(const struct prog *p, enum cfi_arch arch, const char *const *want, size_t n,
			int line)
{
	struct cfi_program *cp;
	static struct got g;
	size_t i;
	int err;

	CHECK_INT(cfi_program__new(arch, &cp), ==, 0);
	err = run(cp, p, &g);
	cfi_program__free(cp);
	if (err)
		test_fail(__FILE__, line, "cfi_program__run: %d", err);
	for (i = 0; i < g.n || i < n; i++) {
		if (i < g.n && i < n && !strcmp(g.rows[i], want[i]))
			continue;
		for (size_t k = 0; k < g.n; k++)
			fprintf(stderr, "got  %s\n", g.rows[k]);
		for (size_t k = 0; k < n; k++)
			fprintf(stderr, "want %s\n", want[k]);
		test_fail(__FILE__, line, "row %zu: got \"%s\", want \"%s\"", i,
			  i < g.n ? g.rows[i] : "(none)", i < n ? want[i] : "(none)");
	}
}

#define EXPECT_ROWS(p, arch, ...)                                                        \
	do {                                                                             \
		static const char *const _want[] = {__VA_ARGS__};                        \
		expect_rows(p, arch, _want, sizeof(_want) / sizeof(_want[0]), __LINE__); \
	} while (0)

TEST(cfi_program_advance_ops_and_set_loc)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x41"				    /* advance_loc 1 */
	     "\x0e\x10"				    /* def_cfa_offset 16 */
	     "\x02\x03"				    /* advance_loc1 3 */
	     "\x0e\x18"				    /* def_cfa_offset 24 */
	     "\x03\x00\x01"			    /* advance_loc2 0x100 */
	     "\x0e\x20"				    /* def_cfa_offset 32 */
	     "\x04\x00\x00\x01\x00"		    /* advance_loc4 0x10000 */
	     "\x0e\x28"				    /* def_cfa_offset 40 */
	     "\x1d\x10\x00\x00\x00\x00\x00\x00\x00" /* MIPS_advance_loc8 0x10 */
	     "\x0e\x30"				    /* def_cfa_offset 48 */
	     "\x01\x00\x00\x02\x00\x00\x00\x00\x00" /* set_loc 0x20000 */
	     "\x00\x0e\x38");			    /* nop; def_cfa_offset 56 */
	p.fde.pc_range = 0x100000;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1004 cfa=r7+16 r16=c-8", "1004-1104 cfa=r7+24 r16=c-8",
		    "1104-11104 cfa=r7+32 r16=c-8", "11104-11114 cfa=r7+40 r16=c-8",
		    "11114-20000 cfa=r7+48 r16=c-8", "20000-101000 cfa=r7+56 r16=c-8");
	prog_free(&p);
}

/* arm64's factors: instructions of 4 bytes, registers saved 8 bytes apart. */
TEST(cfi_program_code_and_data_alignment_factors)
{
	struct prog p;

	PROG(&p, A64_CIE,
	     "\x41"		/* advance_loc 1: 4 bytes */
	     "\x0e\x20"		/* def_cfa_offset 32 (not factored) */
	     "\x9d\x04\x9e\x03" /* offset x29 at 4 * -8, x30 at 3 * -8 */
	     "\x02\x03"		/* advance_loc1 3: 12 bytes */
	     "\x13\x7e"		/* def_cfa_offset_sf -2: 16 */
	     "\x03\x02\x00"	/* advance_loc2 2: 8 bytes */
	     "\x12\x1d\x7c");	/* def_cfa_sf x29, -4: 32 */
	p.fde.code_align = 4;
	p.fde.ra_column = 30;
	EXPECT_ROWS(&p, CFI_ARCH_AARCH64, "1000-1004 cfa=r31+0",
		    "1004-1010 cfa=r31+32 r29=c-32 r30=c-24",
		    "1010-1018 cfa=r31+16 r29=c-32 r30=c-24",
		    "1018-1100 cfa=r29+32 r29=c-32 r30=c-24");
	prog_free(&p);
}

/* DW_CFA_set_loc takes the FDE's pointer encoding: here pcrel sdata4, from its own address. */
TEST(cfi_program_set_loc_encodings)
{
	struct prog p;

	/* At insns_vaddr 0x600: the operand is at 0x601, 0x1010 - 0x601 = 0x0a0f. */
	PROG(&p, X86_CIE, "\x01\x0f\x0a\x00\x00\x0e\x10");
	p.fde.addr_enc = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1010 cfa=r7+8 r16=c-8",
		    "1010-1100 cfa=r7+16 r16=c-8");
	prog_free(&p);
	/* 32-bit absolute addresses. */
	PROG(&p, X86_CIE, "\x01\x20\x10\x00\x00\x0e\x10");
	p.fde.addr_size = 4;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1020 cfa=r7+8 r16=c-8",
		    "1020-1100 cfa=r7+16 r16=c-8");
	prog_free(&p);
	/* datarel needs a base the interpreter does not have; indirect is refused too. */
	PROG(&p, X86_CIE, "\x41\x01\x20\x10\x00\x00");
	p.fde.addr_enc = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1100 error=EOPNOTSUPP op=0x01");
	prog_free(&p);
	/* Back before where the table is: nonsense. */
	PROG(&p, X86_CIE, "\x02\x10\x01\x08\x10\x00\x00\x00\x00\x00\x00");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1010 cfa=r7+8 r16=c-8",
		    "1010-1100 error=EINVAL op=0x01");
	prog_free(&p);
	/* To where it already is: no row of no length. */
	PROG(&p, X86_CIE, "\x01\x00\x10\x00\x00\x00\x00\x00\x00\x0e\x10");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r7+16 r16=c-8");
	prog_free(&p);
}

/* A location past the FDE's end is its end: no row outside the function, the rest unread. */
TEST(cfi_program_location_clamped_to_the_fde)
{
	struct prog p;

	PROG(&p, X86_CIE, "\x41\x0e\x10\x04\xff\xff\xff\xff\x0e\x20\x3f");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1100 cfa=r7+16 r16=c-8");
	prog_free(&p);
	PROG(&p, X86_CIE, "\x0e\x10\x01\x00\x00\x00\x01\x00\x00\x00\x00\x0e\x20");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r7+16 r16=c-8");
	prog_free(&p);
	PROG(&p, X86_CIE, "\x1d\xff\xff\xff\xff\xff\xff\xff\xff\x0e\x20");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r7+8 r16=c-8");
	prog_free(&p);
	/* Exactly to the end, then more: the same. */
	PROG(&p, X86_CIE, "\x03\x00\x01\x0e\x20\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r7+8 r16=c-8");
	prog_free(&p);
	/* A delta times the code alignment that overflows 64 bits. */
	PROG(&p, X86_CIE, "\x42\x41");
	p.fde.code_align = 1ull << 63;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x42");
	prog_free(&p);
	/* A function at the top of the address space. */
	PROG(&p, X86_CIE, "\x41\x0e\x10\x04\xff\xff\xff\xff\x0e\x20");
	p.fde.pc_begin = UINT64_MAX - 0x10;
	p.fde.pc_range = 0x10;
	{
		struct cfi_program *cp;
		static struct got g;

		CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
		CHECK_INT(run(cp, &p, &g), ==, 0);
		CHECK_INT(g.n, ==, 2);
		CHECK_STR(g.rows[1], "fffffffffffffff0-ffffffffffffffff cfa=r7+16 r16=c-8");
		cfi_program__free(cp);
	}
	prog_free(&p);
}

TEST(cfi_program_offset_rules)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x83\x02"		/* offset r3, 2: c-16 */
	     "\x05\x0c\x03"	/* offset_extended r12, 3: c-24 */
	     "\x11\x0d\x7e"	/* offset_extended_sf r13, -2: c+16 */
	     "\x05\x7f\x05"	/* offset_extended r127 (the last tracked), 5: c-40 */
	     "\x05\x90\x01\x04" /* offset_extended r144: read and dropped */
	     "\x14\x0e\x02"	/* val_offset r14, 2: v-16 */
	     "\x15\x0f\x7f"	/* val_offset_sf r15, -1: v+8 */
	     "\x2f\x06\x02"	/* GNU_negative_offset_extended r6, 2: c+16 */
	     "\x2e\x20"		/* GNU_args_size 32: nothing for the rows */
	     "\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64,
		    "1000-1001 cfa=r7+8 r3=c-16 r6=c+16 r12=c-24 r13=c+16 r14=v-16 r15=v+8 "
		    "r16=c-8 r127=c-40",
		    "1001-1100 cfa=r7+8 r3=c-16 r6=c+16 r12=c-24 r13=c+16 r14=v-16 r15=v+8 "
		    "r16=c-8 r127=c-40");
	prog_free(&p);
	/* A factored offset that overflows 64 bits. */
	PROG(&p, X86_CIE, "\x41\x83\x02");
	p.fde.data_align = INT64_MAX;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c+9223372036854775807",
		    "1001-1100 error=EINVAL op=0x83");
	prog_free(&p);
}

/* DW_CFA_restore and _extended: back to the CIE's rule, or to none. */
TEST(cfi_program_restore_to_the_cie_rule)
{
	struct prog p;

	PROG(&p,
	     X86_CIE "\x86\x02"	     /* the CIE: also rbp at c-16 */
		     "\x05\x64\x03", /* and r100 at c-24 */
	     "\x83\x03"		     /* offset r3: c-24 */
	     "\x86\x04"		     /* offset r6: c-32 */
	     "\x90\x05"		     /* offset r16: c-40 */
	     "\x05\x64\x06"	     /* offset_extended r100: c-48 */
	     "\x41"
	     "\xc3"	    /* restore r3: none in the CIE */
	     "\xc6"	    /* restore r6: c-16 */
	     "\x06\x10"	    /* restore_extended r16: c-8 */
	     "\x06\x64"	    /* restore_extended r100: c-24 */
	     "\x06\x90\x01" /* restore_extended r144: not tracked */
	     "\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r3=c-24 r6=c-32 r16=c-40 r100=c-48",
		    "1001-1002 cfa=r7+8 r6=c-16 r16=c-8 r100=c-24",
		    "1002-1100 cfa=r7+8 r6=c-16 r16=c-8 r100=c-24");
	prog_free(&p);
	/* In the CIE there is nothing to restore to yet. */
	PROG(&p, X86_CIE "\xc3", "\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0xc3");
	prog_free(&p);
	PROG(&p, X86_CIE "\x06\x03", "\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x06");
	prog_free(&p);
}

TEST(cfi_program_undefined_same_value_register)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x07\x10"		/* undefined r16: the outermost frame */
	     "\x08\x03"		/* same_value r3 */
	     "\x09\x0c\x0d"	/* register r12 in r13 */
	     "\x09\x90\x01\x03" /* register r144: not tracked */
	     "\x07\x90\x01"	/* undefined r144 */
	     "\x08\x90\x01");	/* same_value r144 */
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r7+8 r3=s r12=r13 r16=u");
	prog_free(&p);
	/* A register number that does not fit the rule. */
	PROG(&p, X86_CIE, "\x41\x09\x03\x80\x80\x04");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1100 error=EINVAL op=0x09");
	prog_free(&p);
}

/* Three states deep and back: the rules come back, the location does not. */
TEST(cfi_program_remember_restore_state_nested)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x0e\x10\x86\x02\x41" /* cfa +16, r6 at c-16 */
	     "\x0a"		    /* remember 1 */
	     "\x0e\x20\x83\x03\x41" /* cfa +32, r3 at c-24 */
	     "\x0a"		    /* remember 2 */
	     "\x0d\x06\x07\x06\x41" /* cfa in r6, r6 undefined */
	     "\x0a"		    /* remember 3 */
	     "\x0c\x07\x08\x41"	    /* cfa = r7 + 8 */
	     "\x0b\x41"		    /* restore 3 */
	     "\x0b\x41"		    /* restore 2 */
	     "\x0b\x41"		    /* restore 1 */
	     "\x0b");		    /* nothing left to restore */
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+16 r6=c-16 r16=c-8",
		    "1001-1002 cfa=r7+32 r3=c-24 r6=c-16 r16=c-8",
		    "1002-1003 cfa=r6+32 r3=c-24 r6=u r16=c-8",
		    "1003-1004 cfa=r7+8 r3=c-24 r6=u r16=c-8",
		    "1004-1005 cfa=r6+32 r3=c-24 r6=u r16=c-8",
		    "1005-1006 cfa=r7+32 r3=c-24 r6=c-16 r16=c-8",
		    "1006-1007 cfa=r7+16 r6=c-16 r16=c-8", "1007-1100 error=EINVAL op=0x0b");
	prog_free(&p);
	/* restore_state first thing. */
	PROG(&p, X86_CIE, "\x0b\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x0b");
	prog_free(&p);
}

/* What one FDE left remembered is not the next one's. */
TEST(cfi_program_state_stack_per_run)
{
	struct cfi_program *cp;
	static struct got g;
	struct prog a, b;

	PROG(&a, X86_CIE, "\x0e\x10\x0a\x0a\x0a\x41");
	PROG(&b, X86_CIE, "\x41\x0b\x41");
	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	CHECK_INT(run(cp, &a, &g), ==, 0);
	CHECK_INT(run(cp, &b, &g), ==, 0);
	CHECK_INT(g.n, ==, 2);
	CHECK_STR(g.rows[0], "1000-1001 cfa=r7+8 r16=c-8");
	CHECK_STR(g.rows[1], "1001-1100 error=EINVAL op=0x0b");
	/* And a run after b starts from its own CIE again. */
	CHECK_INT(run(cp, &a, &g), ==, 0);
	CHECK_STR(g.rows[0], "1000-1001 cfa=r7+16 r16=c-8");
	cfi_program__free(cp);
	cfi_program__free(NULL);
	prog_free(&a);
	prog_free(&b);
}

/* 1024 states deep, each with its own CFA offset, all restored; one more is too many. */
TEST(cfi_program_remember_state_nesting_bounded)
{
	enum { DEPTH = 1024 };
	static uint8_t bytes[DEPTH * 4 + DEPTH + 16];
	struct cfi_program *cp;
	static struct got g;
	struct prog p;
	size_t n = 0, i;

	for (i = 1; i <= DEPTH; i++) {
		bytes[n++] = 0x0e; /* def_cfa_offset i (uleb128, two bytes) */
		bytes[n++] = 0x80 | (i & 0x7f);
		bytes[n++] = (uint8_t)(i >> 7);
		bytes[n++] = 0x0a;
	}
	bytes[n++] = 0x41;
	memset(bytes + n, 0x0b, DEPTH);
	n += DEPTH;
	bytes[n++] = 0x41;
	prog_init(&p, X86_CIE, sizeof(X86_CIE) - 1, bytes, n);
	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	CHECK_INT(run(cp, &p, &g), ==, 0);
	CHECK_INT(g.n, ==, 3);
	CHECK_STR(g.rows[0], "1000-1001 cfa=r7+1024 r16=c-8");
	CHECK_STR(g.rows[1], "1001-1002 cfa=r7+1 r16=c-8");
	CHECK_STR(g.rows[2], "1002-1100 cfa=r7+1 r16=c-8");
	prog_free(&p);
	/* One more than that is refused. */
	memset(bytes, 0x0a, DEPTH + 1);
	bytes[DEPTH + 1] = 0x41;
	prog_init(&p, X86_CIE, sizeof(X86_CIE) - 1, bytes, DEPTH + 2);
	CHECK_INT(run(cp, &p, &g), ==, 0);
	CHECK_INT(g.n, ==, 1);
	CHECK_STR(g.rows[0], "1000-1100 error=EINVAL op=0x0a");
	prog_free(&p);
	/* A million remember_states: refused the same, not a reason to use memory. */
	{
		size_t big = 1000000;
		uint8_t *many = malloc(big);

		CHECK(many);
		memset(many, 0x0a, big);
		many[0] = 0x41;
		prog_init(&p, X86_CIE, sizeof(X86_CIE) - 1, many, big);
		free(many);
		CHECK_INT(run(cp, &p, &g), ==, 0);
		CHECK_INT(g.n, ==, 2);
		CHECK_STR(g.rows[1], "1001-1100 error=EINVAL op=0x0a");
		prog_free(&p);
	}
	cfi_program__free(cp);
}

TEST(cfi_program_cfa_rules)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x0c\x06\x10\x41"	    /* def_cfa r6, 16 */
	     "\x12\x07\x7e\x41"	    /* def_cfa_sf r7, -2: 16 */
	     "\x0d\x03\x41"	    /* def_cfa_register r3: the offset stays */
	     "\x0e\x80\x01\x41"	    /* def_cfa_offset 128 */
	     "\x13\x7c\x41"	    /* def_cfa_offset_sf -4: 32 */
	     "\x0f\x03\x77\x08\x06" /* def_cfa_expression: breg7 8; deref */
	     "\x10\x03\x02\x76\x10" /* expression r3: breg6 16 */
	     "\x16\x0c\x01\x30\x41" /* val_expression r12: lit0 */
	     "\x10\x0d\x00"	    /* expression r13 of no bytes */
	     "\x0c\x06\x10\x41"	    /* def_cfa again: a register rule replaces the expression */
	     "\x0f\x01\x30\x41"	    /* def_cfa_expression: lit0 */
	     "\x0e\x28\x41"	    /* def_cfa_offset under an expression: kept for later */
	     "\x0d\x07");	    /* def_cfa_register: r7 + that offset */
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r6+16 r16=c-8",
		    "1001-1002 cfa=r7+16 r16=c-8", "1002-1003 cfa=r3+16 r16=c-8",
		    "1003-1004 cfa=r3+128 r16=c-8", "1004-1005 cfa=r3+32 r16=c-8",
		    "1005-1006 cfa=exp:770806 r3=exp:7610 r12=vexp:30 r16=c-8",
		    "1006-1007 cfa=r6+16 r3=exp:7610 r12=vexp:30 r13=exp: r16=c-8",
		    "1007-1008 cfa=exp:30 r3=exp:7610 r12=vexp:30 r13=exp: r16=c-8",
		    "1008-1009 cfa=exp:30 r3=exp:7610 r12=vexp:30 r13=exp: r16=c-8",
		    "1009-1100 cfa=r7+40 r3=exp:7610 r12=vexp:30 r13=exp: r16=c-8");
	prog_free(&p);
	/* def_cfa_register with no CFA rule yet: register + 0. */
	PROG(&p, "", "\x0d\x06");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=r6+0");
	prog_free(&p);
	/* def_cfa_offset and _sf with no CFA rule: no register to add them to. */
	PROG(&p, "", "\x0e\x10");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x0e");
	prog_free(&p);
	PROG(&p, "", "\x13\x7e");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x13");
	prog_free(&p);
	/* def_cfa_register after an expression and no register rule before it: + 0. */
	PROG(&p, "\x0f\x01\x30", "\x41\x0d\x06");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=exp:30", "1001-1100 cfa=r6+0");
	prog_free(&p);
	/* Register numbers that do not fit. */
	PROG(&p, X86_CIE, "\x0c\x80\x80\x04\x08");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x0c");
	prog_free(&p);
	PROG(&p, X86_CIE, "\x0d\x80\x80\x04");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x0d");
	prog_free(&p);
	/* No instructions at all: no rule for anything. */
	PROG(&p, "", "");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 cfa=none");
	prog_free(&p);
}

/*
 * DWARF allows DW_CFA_def_cfa_register only after a register rule; libgcrypt's
 * amd64 assembly (the FDE at 0xcb480 of Debian 12's libgcrypt.so.20.4.1)
 * uses it after an expression, for its epilogue. GCC's unwinder and readelf
 * go on from the offset of the register rule before the expression: so must
 * this, or the epilogue is lost. Its instructions, as they are there.
 */
TEST(cfi_program_cfa_register_after_expression)
{
	struct prog p;

	PROG(&p, X86_CIE,
	     "\x41\x0e\x10\x86\x02"		    /* push rbp */
	     "\x41\x0e\x38\x83\x07"		    /* pushes: cfa +56, rbx at c-56 */
	     "\x41\x0f\x06\x77\x98\x04\x06\x23\x38" /* breg7 536; deref; plus_uconst 56 */
	     "\x03\xfe\x15\x0d\x07"		    /* advance_loc2 5630; def_cfa_register rsp */
	     "\x42\x0e\x30\xc3"			    /* advance 2; def_cfa_offset 48; restore rbx */
	     "\x41\x0e\x08");
	p.fde.pc_range = 0x2000;
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1002 cfa=r7+16 r6=c-16 r16=c-8",
		    "1002-1003 cfa=r7+56 r3=c-56 r6=c-16 r16=c-8",
		    "1003-2601 cfa=exp:779804062338 r3=c-56 r6=c-16 r16=c-8",
		    "2601-2603 cfa=r7+56 r3=c-56 r6=c-16 r16=c-8",
		    "2603-2604 cfa=r7+48 r6=c-16 r16=c-8", "2604-3000 cfa=r7+8 r6=c-16 r16=c-8");
	prog_free(&p);
}

/* AArch64 pointer authentication: negate_ra_state and 0x2c (with PC) toggle it, remembered too. */
TEST(cfi_program_aarch64_negate_ra_state)
{
	struct prog p;

	PROG(&p, A64_CIE,
	     "\x41"			    /* unsigned */
	     "\x2d"			    /* paciasp: signed */
	     "\x0e\x10\x9d\x02\x9e\x01\x42" /* cfa +16, x29 at c-16, x30 at c-8 */
	     "\x0a"			    /* remember (signed) */
	     "\x2c\x41"			    /* with PC: unsigned */
	     "\x0b\x41"			    /* restore: signed */
	     "\x2d");			    /* autiasp: unsigned */
	p.fde.code_align = 4;
	p.fde.ra_column = 30;
	EXPECT_ROWS(&p, CFI_ARCH_AARCH64, "1000-1004 cfa=r31+0",
		    "1004-100c cfa=r31+16 r29=c-16 r30=c-8 signed",
		    "100c-1010 cfa=r31+16 r29=c-16 r30=c-8",
		    "1010-1014 cfa=r31+16 r29=c-16 r30=c-8 signed",
		    "1014-1100 cfa=r31+16 r29=c-16 r30=c-8");
	/* Elsewhere 0x2d is SPARC's GNU_window_save, and 0x2c nothing. */
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1004 cfa=r31+0",
		    "1004-1100 error=EOPNOTSUPP op=0x2d");
	prog_free(&p);
	PROG(&p, A64_CIE, "\x2c\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EOPNOTSUPP op=0x2c");
	/* Signed in the CIE: from the function's first byte. */
	prog_free(&p);
	PROG(&p, A64_CIE "\x2d", "\x41\x2d");
	p.fde.code_align = 4;
	EXPECT_ROWS(&p, CFI_ARCH_AARCH64, "1000-1004 cfa=r31+0 signed", "1004-1100 cfa=r31+0");
	prog_free(&p);
}

/* An opcode it does not know: the rows before it stand, the rest is unusable, and says why. */
TEST(cfi_program_unknown_opcodes)
{
	static const uint8_t known[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
					0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
					0x14, 0x15, 0x16, 0x1d, 0x2c, 0x2d, 0x2e, 0x2f};
	uint8_t bytes[] = {0x41, 0x0e, 0x10, 0x41, 0x3f, 0x0e, 0x20, 0x41};
	char want[64];
	unsigned int op;
	struct prog p;

	PROG(&p, X86_CIE, "\x41\x0e\x10\x41\x3f\x0e\x20\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1002 cfa=r7+16 r16=c-8", "1002-1100 error=EOPNOTSUPP op=0x3f");
	prog_free(&p);
	/* Every extended opcode that is none of DWARF 5's, GNU's or AArch64's. */
	for (op = 0; op < 0x40; op++) {
		struct cfi_program *cp;
		static struct got g;

		if (memchr(known, (int)op, sizeof(known)))
			continue;
		bytes[4] = (uint8_t)op;
		prog_init(&p, X86_CIE, sizeof(X86_CIE) - 1, bytes, sizeof(bytes));
		CHECK_INT(cfi_program__new(CFI_ARCH_AARCH64, &cp), ==, 0);
		CHECK_INT(run(cp, &p, &g), ==, 0);
		snprintf(want, sizeof(want), "1002-1100 error=EOPNOTSUPP op=0x%02x", op);
		CHECK_INT(g.n, ==, 3);
		CHECK_STR(g.rows[2], want);
		cfi_program__free(cp);
		prog_free(&p);
	}
	/* In the CIE: nothing of the function is usable. */
	PROG(&p, X86_CIE "\x3f", "\x41\x0e\x10");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EOPNOTSUPP op=0x3f");
	prog_free(&p);
}

/*
 * Every opcode with operands, whole and then cut short at each byte: whole
 * it runs to the end; cut, the rows before it stand and the rest is -EINVAL.
 */
TEST(cfi_program_truncated_operands)
{
	static const struct {
		const char *b;
		size_t n;
	} ops[] = {
#define OP(s) {s, sizeof(s) - 1}
		OP("\x01\x00\x11\x00\x00\x00\x00\x00\x00"),
		OP("\x02\x05"),
		OP("\x03\x05\x00"),
		OP("\x04\x05\x00\x00\x00"),
		OP("\x1d\x05\x00\x00\x00\x00\x00\x00\x00"),
		OP("\x83\x02"),
		OP("\x05\x03\x82\x01"),
		OP("\x06\x03"),
		OP("\x07\x83\x01"),
		OP("\x08\x03"),
		OP("\x09\x03\x84\x01"),
		OP("\x0c\x07\x90\x01"),
		OP("\x0d\x06"),
		OP("\x0e\x90\x01"),
		OP("\x0f\x02\x77\x08"),
		OP("\x10\x03\x02\x76\x10"),
		OP("\x11\x03\xfe\x7f"),
		OP("\x12\x07\x7e"),
		OP("\x13\xfe\x7f"),
		OP("\x14\x03\x02"),
		OP("\x15\x03\x7e"),
		OP("\x16\x03\x01\x30"),
		OP("\x2e\x90\x01"),
		OP("\x2f\x03\x02"),
#undef OP
	};
	struct cfi_program *cp;
	static struct got g;
	uint8_t bytes[32];
	char want[64];
	struct prog p;
	size_t i, cut;

	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		bytes[0] = 0x41;
		memcpy(bytes + 1, ops[i].b, ops[i].n);
		for (cut = 1; cut <= ops[i].n; cut++) {
			prog_init(&p, X86_CIE, sizeof(X86_CIE) - 1, bytes, 1 + cut);
			CHECK_INT(run(cp, &p, &g), ==, 0);
			CHECK_STR(g.rows[0], "1000-1001 cfa=r7+8 r16=c-8");
			if (cut == ops[i].n) {
				if (strstr(g.rows[g.n - 1], "error"))
					test_fail(__FILE__, __LINE__, "op 0x%02x whole: %s",
						  (uint8_t)ops[i].b[0], g.rows[g.n - 1]);
			} else {
				snprintf(want, sizeof(want), "1001-1100 error=EINVAL op=0x%02x",
					 (uint8_t)ops[i].b[0]);
				CHECK_INT(g.n, ==, 2);
				if (strcmp(g.rows[1], want))
					test_fail(__FILE__, __LINE__, "op 0x%02x cut at %zu: %s",
						  (uint8_t)ops[i].b[0], cut, g.rows[1]);
			}
			prog_free(&p);
		}
	}
	/* An expression longer than what is left of the program. */
	PROG(&p, X86_CIE, "\x41\x10\x03\x05\x76\x10");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1100 error=EINVAL op=0x10");
	prog_free(&p);
	/* A LEB128 that never ends. */
	PROG(&p, X86_CIE, "\x41\x0e\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1001 cfa=r7+8 r16=c-8",
		    "1001-1100 error=EINVAL op=0x0e");
	prog_free(&p);
	/* Cut in the CIE: the whole function. */
	PROG(&p, "\x0c\x07", "\x41");
	EXPECT_ROWS(&p, CFI_ARCH_X86_64, "1000-1100 error=EINVAL op=0x0c");
	prog_free(&p);
	cfi_program__free(cp);
}

/* Location ops belong to an FDE: in a CIE they make no sense. */
TEST(cfi_program_location_ops_in_the_cie)
{
	static const char *const cies[] = {"\x41",
					   "\x02\x01",
					   "\x03\x01\x00",
					   "\x04\x01\x00\x00\x00",
					   "\x1d\x01\x00\x00\x00\x00\x00\x00\x00",
					   "\x01\x00\x10\x00\x00\x00\x00\x00\x00"};
	static const size_t sizes[] = {1, 2, 3, 5, 9, 9};
	struct cfi_program *cp;
	static struct got g;
	char want[64];
	struct prog p;
	size_t i;

	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	for (i = 0; i < sizeof(cies) / sizeof(cies[0]); i++) {
		prog_init(&p, cies[i], sizes[i], "\x0e\x10", 2);
		CHECK_INT(run(cp, &p, &g), ==, 0);
		snprintf(want, sizeof(want), "1000-1100 error=EINVAL op=0x%02x",
			 (uint8_t)cies[i][0]);
		CHECK_INT(g.n, ==, 1);
		CHECK_STR(g.rows[0], want);
		prog_free(&p);
	}
	cfi_program__free(cp);
}

/* The callback's nonzero return ends the run; a function of no bytes has no rows. */
TEST(cfi_program_callback_and_empty_range)
{
	struct cfi_program *cp;
	static struct got g;
	struct prog p;

	PROG(&p, X86_CIE, "\x41\x41\x41\x41");
	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	g.stop_at = 2;
	CHECK_INT(run(cp, &p, &g), ==, 7);
	CHECK_INT(g.n, ==, 2);
	g.stop_at = 0;
	/* Stopped in the last row, the error row too. */
	prog_free(&p);
	PROG(&p, X86_CIE, "\x41\x3f");
	g.stop_at = 2;
	CHECK_INT(run(cp, &p, &g), ==, 7);
	g.stop_at = 0;
	p.fde.pc_range = 0;
	CHECK_INT(run(cp, &p, &g), ==, 0);
	CHECK_INT(g.n, ==, 0);
	prog_free(&p);
	cfi_program__free(cp);
}
