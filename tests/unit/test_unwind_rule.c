// SPDX-License-Identifier: MIT
/*
 * CFI rows whose CFA is in a general register, to compact rules (issue 38,
 * item 1): a plain register rule (OpenSSL's rax + 8), the dereferencing
 * expressions with any general register, the caller-saved registers a
 * row keeps, and the registers no rule can name.
 */
#include <string.h>

#include "test.h"
#include "unwind/unwind_rule.h"

static struct cfi_reg regs[CFI_MAX_REGS];

static const struct unwind_rule_ctx x86 = {.arch = CFI_ARCH_X86_64, .ra_column = 16};
static const struct unwind_rule_ctx a64 = {.arch = CFI_ARCH_AARCH64, .ra_column = 30};

/* A row with the CFA in reg + off, the return address at CFA - 8. */
static struct cprof_unwind_rule reg_row(const struct unwind_rule_ctx *ctx, unsigned int reg,
					int64_t off)
{
	struct cfi_row row = {
		.begin = 0x1000,
		.end = 0x1010,
		.cfa = {.rule = CFI_CFA_REG_OFFSET, .reg = (uint16_t)reg, .offset = off},
		.regs = regs,
	};

	regs[ctx->ra_column] = (struct cfi_reg){.rule = CFI_REG_OFFSET, .offset = -8};
	return unwind_rule_from_cfi(ctx, &row);
}

/* A row with the CFA a DWARF expression. */
static struct cprof_unwind_rule expr_row(const uint8_t *expr, uint32_t size)
{
	struct cfi_row row = {
		.begin = 0x1000,
		.end = 0x1010,
		.cfa = {.rule = CFI_CFA_EXPR, .expr = expr, .expr_size = size},
		.regs = regs,
	};

	regs[16] = (struct cfi_reg){.rule = CFI_REG_OFFSET, .offset = -8};
	return unwind_rule_from_cfi(&x86, &row);
}

TEST(unwind_rule_cfa_in_a_general_register)
{
	struct cprof_unwind_rule r;

	memset(regs, 0, sizeof(regs));
	r = reg_row(&x86, 0, 8); /* rax + 8 */
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_REG);
	CHECK_INT(r.cfa_reg, ==, 0);
	CHECK_INT(r.cfa_off, ==, 8);
	CHECK_INT(r.ra_off, ==, -8);
	/* Every caller-saved register kept: rax rdx rcx rsi rdi r8-r11. */
	CHECK_INT(r.keep_regs, ==, 0x0f37);
	r = reg_row(&x86, 10, 16); /* r10 + 16 */
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_REG);
	CHECK_INT(r.cfa_reg, ==, 10);
	/* SP and FP keep their own kinds. */
	CHECK_INT(reg_row(&x86, 7, 8).cfa_kind, ==, CPROF_CFA_SP);
	CHECK_INT(reg_row(&x86, 6, 16).cfa_kind, ==, CPROF_CFA_FP);
	/* rip (16) or a vector register (17+) is no general register. */
	r = reg_row(&x86, 17, 8);
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_STOP);
	CHECK_INT(r.stop, ==, CPROF_STOP_UNSUPPORTED);
}

TEST(unwind_rule_keeps_registers_without_a_rule)
{
	memset(regs, 0, sizeof(regs));
	/* A saved callee-saved register changes nothing: only caller-saved ones are kept. */
	regs[3] = (struct cfi_reg){.rule = CFI_REG_OFFSET, .offset = -16};
	CHECK_INT(reg_row(&x86, 7, 24).keep_regs, ==, 0x0f37);
	/* A rule for r10 (saved, or in another register): its value in the caller is another. */
	regs[10] = (struct cfi_reg){.rule = CFI_REG_OFFSET, .offset = -24};
	CHECK_INT(reg_row(&x86, 7, 24).keep_regs, ==, 0x0f37 & ~0x400);
	regs[10] = (struct cfi_reg){.rule = CFI_REG_SAME};
	regs[0] = (struct cfi_reg){.rule = CFI_REG_UNDEFINED};
	CHECK_INT(reg_row(&x86, 7, 24).keep_regs, ==, 0x0f36);
	/* A stop rule keeps nothing. */
	CHECK_INT(reg_row(&x86, 20, 8).keep_regs, ==, 0);
}

TEST(unwind_rule_dereferenced_register)
{
	/* breg1(rdx) 0; deref; plus_uconst 8 */
	static const uint8_t rdx[] = {0x71, 0x00, 0x06, 0x23, 0x08};
	/* breg7(rsp) -8; deref; plus_uconst 8 (OpenSSL) */
	static const uint8_t rsp[] = {0x77, 0x78, 0x06, 0x23, 0x08};
	/* breg6(rbp) -16; deref (GCC's stack re-alignment) */
	static const uint8_t rbp[] = {0x76, 0x70, 0x06};
	/* breg10(r10) 0; deref; plus_uconst 8 */
	static const uint8_t r10[] = {0x7a, 0x00, 0x06, 0x23, 0x08};
	/* breg16 (rip): no general register */
	static const uint8_t rip[] = {0x80, 0x00, 0x06};
	/* breg7 8; breg9 0; lit8; mul; plus; deref; plus_uconst 8: not one of the forms */
	static const uint8_t scaled[] = {0x77, 0x08, 0x79, 0x00, 0x38,
					 0x1e, 0x22, 0x06, 0x23, 0x08};
	struct cprof_unwind_rule r;

	memset(regs, 0, sizeof(regs));
	r = expr_row(rdx, sizeof(rdx));
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_REG_DEREF);
	CHECK_INT(r.cfa_reg, ==, 1);
	CHECK_INT(r.cfa_off, ==, 0);
	CHECK_INT(r.cfa_add, ==, 8);
	r = expr_row(rsp, sizeof(rsp));
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_SP_DEREF);
	CHECK_INT(r.cfa_off, ==, -8);
	CHECK_INT(r.cfa_add, ==, 8);
	r = expr_row(rbp, sizeof(rbp));
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_FP_DEREF);
	CHECK_INT(r.cfa_off, ==, -16);
	CHECK_INT(r.cfa_add, ==, 0);
	r = expr_row(r10, sizeof(r10));
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_REG_DEREF);
	CHECK_INT(r.cfa_reg, ==, 10);
	CHECK_INT(expr_row(rip, sizeof(rip)).stop, ==, CPROF_STOP_UNSUPPORTED);
	CHECK_INT(expr_row(scaled, sizeof(scaled)).stop, ==, CPROF_STOP_UNSUPPORTED);
}

TEST(unwind_rule_arm64_registers)
{
	struct cprof_unwind_rule r;

	memset(regs, 0, sizeof(regs));
	CHECK_INT(reg_row(&a64, 31, 16).cfa_kind, ==, CPROF_CFA_SP);
	CHECK_INT(reg_row(&a64, 29, 16).cfa_kind, ==, CPROF_CFA_FP);
	r = reg_row(&a64, 9, 0); /* x9 */
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_REG);
	CHECK_INT(r.cfa_reg, ==, 9);
	/* x0 to x15, all caller-saved, all kept. */
	CHECK_INT(r.keep_regs, ==, 0xffff);
	/* x16 and above are not carried (CPROF_GREGS). */
	CHECK_INT(reg_row(&a64, 16, 0).stop, ==, CPROF_STOP_UNSUPPORTED);
}
