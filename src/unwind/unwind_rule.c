// SPDX-License-Identifier: MIT
/*
 * CFI rows to compact rules; see unwind_rule.h. The expressions recognized
 * are byte-exact patterns (BUILD-NOTES measured them over 1,179 Debian
 * files: 0.03% of rows use an expression, nearly all of them these):
 *   PLT:      breg7 8; breg16 0; lit15; and; lit11 (or lit10); ge; lit3; shl; plus
 *   re-align: breg6 N; deref             (GCC, functions that align the stack)
 *   OpenSSL:  breg7 N; deref; plus_uconst M
 * and the last two with any general register the walk keeps (CPROF_GREGS),
 * as the CFA of a plain register rule may be (OpenSSL's rax + 8).
 */
#include <string.h>

#include "lib/dwarf_cursor.h"
#include "unwind/unwind_rule.h"

#define X86_RBP 6
#define X86_RSP 7
#define A64_FP	29
#define A64_LR	30
#define A64_SP	31

#define OP_DEREF       0x06
#define OP_AND	       0x1a
#define OP_PLUS	       0x22
#define OP_PLUS_UCONST 0x23
#define OP_SHL	       0x24
#define OP_GE	       0x2a
#define OP_LIT0	       0x30
#define OP_BREG0       0x70

struct regs_of {
	unsigned int sp, fp;
};

static struct regs_of regs_of(enum cfi_arch arch)
{
	if (arch == CFI_ARCH_AARCH64)
		return (struct regs_of){A64_SP, A64_FP};
	return (struct regs_of){X86_RSP, X86_RBP};
}

struct cprof_unwind_rule unwind_rule_stop(unsigned int reason)
{
	return (struct cprof_unwind_rule){.cfa_kind = CPROF_CFA_STOP, .stop = (__u8)reason};
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* "bregN off": the register and its signed offset; false for anything else. */
static bool read_breg(struct dwarf_cursor *c, unsigned int *reg, int64_t *off)
{
	uint8_t op;

	if (dwarf_cursor__u8(c, &op) || op < OP_BREG0 || op > OP_BREG0 + 31)
		return false;
	*reg = op - OP_BREG0;
	return dwarf_cursor__leb(c, true, (uint64_t *)off) == 0;
}

static bool expect(struct dwarf_cursor *c, const uint8_t *bytes, size_t n)
{
	const uint8_t *b;

	return dwarf_cursor__take(c, n, &b) == 0 && memcmp(b, bytes, n) == 0;
}

static bool at_end(const struct dwarf_cursor *c)
{
	return c->pos == c->size;
}

static bool plt_expression(struct dwarf_cursor *c, struct cprof_unwind_rule *r)
{
	static const uint8_t tail[] = {OP_BREG0 + 16, 0, OP_LIT0 + 15, OP_AND};
	static const uint8_t end[] = {OP_GE, OP_LIT0 + 3, OP_SHL, OP_PLUS};
	unsigned int reg;
	int64_t off;
	uint8_t lit;

	if (!read_breg(c, &reg, &off) || reg != X86_RSP || !fits_s32(off))
		return false;
	if (!expect(c, tail, sizeof(tail)) || dwarf_cursor__u8(c, &lit))
		return false;
	if (lit < OP_LIT0 || lit > OP_LIT0 + 15 || !expect(c, end, sizeof(end)) || !at_end(c))
		return false;
	r->cfa_kind = CPROF_CFA_PLT;
	r->cfa_off = (__s32)off;
	r->cfa_add = lit - OP_LIT0;
	return true;
}

/*
 * The kind a CFA from reg takes (kinds[0] from SP, [1] from FP, [2] from
 * another general register), or CPROF_CFA_STOP for a register the walk
 * does not keep.
 */
static __u8 cfa_kind_of(struct regs_of regs, unsigned int reg, const __u8 kinds[3])
{
	if (reg == regs.sp)
		return kinds[0];
	if (reg == regs.fp)
		return kinds[1];
	return reg < CPROF_GREGS ? kinds[2] : CPROF_CFA_STOP;
}

/* breg(reg) N; deref [; plus_uconst M] */
static bool deref_expression(struct dwarf_cursor *c, struct regs_of regs,
			     struct cprof_unwind_rule *r)
{
	static const __u8 kinds[3] = {CPROF_CFA_SP_DEREF, CPROF_CFA_FP_DEREF, CPROF_CFA_REG_DEREF};
	uint64_t add = 0;
	unsigned int reg;
	int64_t off;
	uint8_t op;

	if (!read_breg(c, &reg, &off) || cfa_kind_of(regs, reg, kinds) == CPROF_CFA_STOP ||
	    !fits_s32(off))
		return false;
	if (dwarf_cursor__u8(c, &op) || op != OP_DEREF)
		return false;
	if (!at_end(c) && (dwarf_cursor__u8(c, &op) || op != OP_PLUS_UCONST ||
			   dwarf_cursor__leb(c, false, &add) || add > INT32_MAX || !at_end(c)))
		return false;
	r->cfa_kind = cfa_kind_of(regs, reg, kinds);
	r->cfa_reg = r->cfa_kind == CPROF_CFA_REG_DEREF ? (__u8)reg : 0;
	r->cfa_off = (__s32)off;
	r->cfa_add = (__s32)add;
	return true;
}

static unsigned int cfa_rule(const struct unwind_rule_ctx *ctx, const struct cfi_reg *cfa,
			     struct cprof_unwind_rule *r)
{
	struct regs_of regs = regs_of(ctx->arch);
	static const __u8 kinds[3] = {CPROF_CFA_SP, CPROF_CFA_FP, CPROF_CFA_REG};
	struct dwarf_cursor c = {cfa->expr, cfa->expr_size, 0, 0};

	if (cfa->rule == CFI_CFA_REG_OFFSET) {
		r->cfa_kind = cfa_kind_of(regs, cfa->reg, kinds);
		if (r->cfa_kind == CPROF_CFA_STOP || !fits_s32(cfa->offset))
			return CPROF_STOP_UNSUPPORTED;
		r->cfa_reg = r->cfa_kind == CPROF_CFA_REG ? (__u8)cfa->reg : 0;
		r->cfa_off = (__s32)cfa->offset;
		return 0;
	}
	if (cfa->rule != CFI_CFA_EXPR)
		return CPROF_STOP_BAD_CFI;
	if (ctx->arch == CFI_ARCH_X86_64 && plt_expression(&c, r))
		return 0;
	c.pos = 0;
	return deref_expression(&c, regs, r) ? 0 : CPROF_STOP_UNSUPPORTED;
}

static unsigned int ra_rule(const struct unwind_rule_ctx *ctx, const struct cfi_reg *ra,
			    struct cprof_unwind_rule *r)
{
	switch (ra->rule) {
	case CFI_REG_OFFSET:
		if (!fits_s16(ra->offset))
			return CPROF_STOP_UNSUPPORTED;
		r->ra_kind = CPROF_RA_AT_CFA;
		r->ra_off = (__s16)ra->offset;
		return 0;
	case CFI_REG_UNSET:
	case CFI_REG_SAME:
		/* On AArch64 the return address column is LR itself, which the callee has not saved
		 * yet. */
		if (ctx->arch != CFI_ARCH_AARCH64 || ctx->ra_column != A64_LR)
			return CPROF_STOP_UNSUPPORTED;
		r->ra_kind = CPROF_RA_IN_LR;
		return 0;
	}
	return CPROF_STOP_UNSUPPORTED;
}

/* An unreadable frame pointer is only a problem for a rule that needs it. */
static void fp_rule(const struct unwind_rule_ctx *ctx, const struct cfi_reg *fp,
		    struct cprof_unwind_rule *r)
{
	struct regs_of regs = regs_of(ctx->arch);
	struct dwarf_cursor c = {fp->expr, fp->expr_size, 0, 0};
	unsigned int reg;
	int64_t off;

	switch (fp->rule) {
	case CFI_REG_UNSET:
	case CFI_REG_SAME:
		r->fp_kind = CPROF_FP_SAME;
		return;
	case CFI_REG_OFFSET:
		if (fits_s16(fp->offset)) {
			r->fp_kind = CPROF_FP_AT_CFA;
			r->fp_off = (__s16)fp->offset;
			return;
		}
		break;
	case CFI_REG_EXPR:
		if (read_breg(&c, &reg, &off) && reg == regs.fp && at_end(&c) && fits_s16(off)) {
			r->fp_kind = CPROF_FP_AT_FP;
			r->fp_off = (__s16)off;
			return;
		}
		break;
	}
	r->fp_kind = CPROF_FP_LOST;
}

/*
 * The caller-saved general registers the row has no rule for: unchanged in
 * the caller. Only those: callee-saved ones are saved and restored row by
 * row, and keeping them made a whole system's tables 6% larger (rows that
 * differ only there no longer merge), for CFA rules that never name them
 * (OpenSSL's use rax, rsi, r11, r9, rcx, rdi). AArch64's x0 to x15 are all
 * caller-saved.
 */
static __u16 keep_regs(const struct unwind_rule_ctx *ctx, const struct cfi_row *row)
{
	/* rax rdx rcx rsi rdi r8 r9 r10 r11 */
	__u16 keep = ctx->arch == CFI_ARCH_AARCH64 ? 0xffff : 0x0f37;
	unsigned int i;

	for (i = 0; i < CPROF_GREGS; i++)
		if (row->regs[i].rule != CFI_REG_UNSET && row->regs[i].rule != CFI_REG_SAME)
			keep &= (__u16) ~(1u << i);
	return keep;
}

struct cprof_unwind_rule unwind_rule_from_cfi(const struct unwind_rule_ctx *ctx,
					      const struct cfi_row *row)
{
	struct regs_of regs = regs_of(ctx->arch);
	struct cprof_unwind_rule r = {0};
	const struct cfi_reg *ra;
	unsigned int stop;

	if (row->error)
		return unwind_rule_stop(CPROF_STOP_BAD_CFI);
	/* The trampoline's own CFI describes the signal frame: the unwinder reads it directly. */
	if (ctx->signal_frame)
		return (struct cprof_unwind_rule){.cfa_kind = CPROF_CFA_SIGNAL};
	if (ctx->ra_column >= CFI_MAX_REGS)
		return unwind_rule_stop(CPROF_STOP_UNSUPPORTED);
	ra = &row->regs[ctx->ra_column];
	if (ra->rule == CFI_REG_UNDEFINED)
		return (struct cprof_unwind_rule){.cfa_kind = CPROF_CFA_END};
	stop = cfa_rule(ctx, &row->cfa, &r);
	if (!stop)
		stop = ra_rule(ctx, ra, &r);
	if (stop)
		return unwind_rule_stop(stop);
	fp_rule(ctx, &row->regs[regs.fp], &r);
	r.keep_regs = keep_regs(ctx, row);
	return r;
}
