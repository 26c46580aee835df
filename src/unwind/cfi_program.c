// SPDX-License-Identifier: MIT
/*
 * The call frame instruction interpreter; see cfi_program.h. The state is
 * the row being built; DW_CFA_remember_state pushes a copy on a stack that
 * grows as needed (GCC nests a few at most), DW_CFA_restore takes a
 * register's rule from the state the CIE's instructions left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_program.h"

/* The primary opcodes keep their operand in the low 6 bits. */
#define CFA_ADVANCE_LOC 0x40
#define CFA_OFFSET	0x80
#define CFA_RESTORE	0xc0

enum {
	CFA_NOP = 0x00,
	CFA_SET_LOC = 0x01,
	CFA_ADVANCE_LOC1 = 0x02,
	CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04,
	CFA_OFFSET_EXTENDED = 0x05,
	CFA_RESTORE_EXTENDED = 0x06,
	CFA_UNDEFINED = 0x07,
	CFA_SAME_VALUE = 0x08,
	CFA_REGISTER = 0x09,
	CFA_REMEMBER_STATE = 0x0a,
	CFA_RESTORE_STATE = 0x0b,
	CFA_DEF_CFA = 0x0c,
	CFA_DEF_CFA_REGISTER = 0x0d,
	CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f,
	CFA_EXPRESSION = 0x10,
	CFA_OFFSET_EXTENDED_SF = 0x11,
	CFA_DEF_CFA_SF = 0x12,
	CFA_DEF_CFA_OFFSET_SF = 0x13,
	CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15,
	CFA_VAL_EXPRESSION = 0x16,
	CFA_MIPS_ADVANCE_LOC8 = 0x1d,
	CFA_AARCH64_NEGATE_RA_STATE_WITH_PC = 0x2c,
	CFA_GNU_WINDOW_SAVE = 0x2d, /* DW_CFA_AARCH64_negate_ra_state on AArch64 */
	CFA_GNU_ARGS_SIZE = 0x2e,
	CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

struct state {
	struct cfi_reg cfa;
	/*
	 * The offset of the last register rule of the CFA, kept while an
	 * expression replaces it: see def_cfa_part.
	 */
	int64_t cfa_offset;
	bool ra_signed;
	struct cfi_reg regs[CFI_MAX_REGS];
};

struct cfi_program {
	enum cfi_arch arch;
	struct state cur;
	struct state initial; /* after the CIE's instructions: what DW_CFA_restore returns to */
	struct state *saved;  /* DW_CFA_remember_state's stack */
	size_t nsaved;
	size_t cap;
};

/* One run: the program, where it is, and where the rows go. */
struct run {
	struct cfi_program *p;
	const struct cfi_fde *fde;
	struct dwarf_cursor c;
	uint64_t loc;
	uint64_t end;
	bool in_cie;
	cfi_row_fn fn;
	void *arg;
};

int cfi_program__new(enum cfi_arch arch, struct cfi_program **out)
{
	struct cfi_program *p = calloc(1, sizeof(*p));

	*out = p;
	if (!p)
		return -ENOMEM;
	p->arch = arch;
	return 0;
}

void cfi_program__free(struct cfi_program *p)
{
	if (!p)
		return;
	free(p->saved);
	free(p);
}

static int emit(struct run *r, uint64_t until, int error, uint8_t opcode)
{
	struct state *s = &r->p->cur;
	struct cfi_row row = {
		.begin = r->loc,
		.end = until,
		.cfa = s->cfa,
		.regs = s->regs,
		.ra_signed = s->ra_signed,
		.error = error,
		.bad_opcode = opcode,
	};

	if (until <= r->loc)
		return 0;
	r->loc = until;
	return r->fn(&row, r->arg);
}

/* Moves to a later address: the rows before it are final. */
static int advance(struct run *r, uint64_t delta)
{
	uint64_t to;

	if (r->in_cie)
		return -EINVAL;
	if (delta && r->fde->code_align > UINT64_MAX / delta)
		return -EINVAL;
	delta *= r->fde->code_align;
	to = delta > r->end - r->loc ? r->end : r->loc + delta;
	return emit(r, to, 0, 0);
}

static int set_loc(struct run *r)
{
	struct dwarf_bases b = {.addr_size = r->fde->addr_size};
	uint64_t to;
	int err = dwarf_cursor__pointer(&r->c, r->fde->addr_enc, &b, &to);

	if (err)
		return err;
	if (r->in_cie || to < r->loc)
		return -EINVAL;
	return emit(r, to > r->end ? r->end : to, 0, 0);
}

static int uleb(struct run *r, uint64_t *v)
{
	return dwarf_cursor__leb(&r->c, false, v);
}

static int sleb(struct run *r, int64_t *v)
{
	return dwarf_cursor__leb(&r->c, true, (uint64_t *)v);
}

/* The register's slot; NULL (rule dropped) past the tracked ones. */
static struct cfi_reg *reg_slot(struct run *r, uint64_t reg)
{
	return reg < CFI_MAX_REGS ? &r->p->cur.regs[reg] : NULL;
}

static void set_rule(struct run *r, uint64_t reg, enum cfi_reg_rule rule, int64_t offset)
{
	struct cfi_reg *slot = reg_slot(r, reg);

	if (slot)
		*slot = (struct cfi_reg){.rule = rule, .offset = offset};
}

/* offset * data_align, refused when it overflows. */
static int scaled(struct run *r, int64_t offset, int64_t *out)
{
	if (__builtin_mul_overflow(offset, r->fde->data_align, out))
		return -EINVAL;
	return 0;
}

/* DW_CFA_offset and kin: a register saved at CFA + factored offset. */
static int op_offset(struct run *r, uint64_t reg, bool is_signed, enum cfi_reg_rule rule)
{
	uint64_t u;
	int64_t off;
	int err;

	if (is_signed)
		err = sleb(r, &off);
	else {
		err = uleb(r, &u);
		off = (int64_t)u;
	}
	if (!err)
		err = scaled(r, off, &off);
	if (!err)
		set_rule(r, reg, rule, off);
	return err;
}

static int op_expression(struct run *r, struct cfi_reg *slot, uint8_t rule)
{
	const uint8_t *expr;
	uint64_t len;
	int err = uleb(r, &len);

	if (!err)
		err = dwarf_cursor__take(&r->c, len, &expr);
	if (!err && len > UINT32_MAX)
		err = -EINVAL;
	if (!err && slot)
		*slot = (struct cfi_reg){.rule = rule, .expr = expr, .expr_size = (uint32_t)len};
	return err;
}

static int op_register_expression(struct run *r, uint8_t rule)
{
	uint64_t reg;
	int err = uleb(r, &reg);

	return err ? err : op_expression(r, reg_slot(r, reg), rule);
}

static int op_restore(struct run *r, uint64_t reg)
{
	struct cfi_reg *slot = reg_slot(r, reg);

	if (r->in_cie)
		return -EINVAL;
	if (slot)
		*slot = r->p->initial.regs[reg];
	return 0;
}

static int remember(struct run *r)
{
	struct cfi_program *p = r->p;
	size_t cap = p->cap ? 2 * p->cap : 4;
	struct state *n;

	if (p->nsaved == p->cap) {
		/* Deeper than any compiler nests: a corrupt program, not a reason to use memory. */
		if (cap > 1024)
			return -EINVAL;
		n = realloc(p->saved, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->saved = n;
		p->cap = cap;
	}
	p->saved[p->nsaved++] = p->cur;
	return 0;
}

/* DW_CFA_restore_state brings back the registers, not the location. */
static int restore_state(struct run *r)
{
	struct cfi_program *p = r->p;

	if (!p->nsaved)
		return -EINVAL;
	p->cur = p->saved[--p->nsaved];
	return 0;
}

static int def_cfa(struct run *r, bool is_signed)
{
	uint64_t reg, u;
	int64_t off;
	int err = uleb(r, &reg);

	if (!err && is_signed) {
		err = sleb(r, &off);
		if (!err)
			err = scaled(r, off, &off);
	} else if (!err) {
		err = uleb(r, &u);
		off = (int64_t)u;
	}
	if (!err && reg > UINT16_MAX)
		err = -EINVAL;
	if (!err) {
		r->p->cur.cfa =
			(struct cfi_reg){.rule = CFI_CFA_REG_OFFSET, .reg = reg, .offset = off};
		r->p->cur.cfa_offset = off;
	}
	return err;
}

/*
 * DW_CFA_def_cfa_register and _offset change half of a register rule. DWARF
 * allows them only when the CFA is one, but hand-written assembly also
 * uses them after DW_CFA_def_cfa_expression (libgcrypt's amd64 ciphers: an
 * expression for the body, then def_cfa_register rsp for the epilogue);
 * GCC's unwinder and readelf keep the register rule's offset through the
 * expression for that, and so does this: _register makes the rule
 * register + that offset again, _offset only sets it while the expression
 * stays in force.
 */
static int def_cfa_part(struct run *r, uint8_t op)
{
	struct state *st = &r->p->cur;
	struct cfi_reg *cfa = &st->cfa;
	uint64_t u;
	int64_t off;
	int err;

	if (op == CFA_DEF_CFA_OFFSET_SF) {
		err = sleb(r, &off);
		if (!err)
			err = scaled(r, off, &off);
	} else {
		err = uleb(r, &u);
		off = (int64_t)u;
	}
	if (err)
		return err;
	if (op != CFA_DEF_CFA_REGISTER) {
		/* No register to add it to. */
		if (cfa->rule == CFI_CFA_UNSET)
			return -EINVAL;
		st->cfa_offset = off;
		if (cfa->rule == CFI_CFA_REG_OFFSET)
			cfa->offset = off;
		return 0;
	}
	if (u > UINT16_MAX)
		return -EINVAL;
	*cfa = (struct cfi_reg){
		.rule = CFI_CFA_REG_OFFSET, .reg = (uint16_t)u, .offset = st->cfa_offset};
	return 0;
}

static int op_register(struct run *r)
{
	uint64_t reg, from;
	int err = uleb(r, &reg);
	struct cfi_reg *slot;

	if (!err)
		err = uleb(r, &from);
	if (!err && from > UINT16_MAX)
		err = -EINVAL;
	slot = err ? NULL : reg_slot(r, reg);
	if (slot)
		*slot = (struct cfi_reg){.rule = CFI_REG_REGISTER, .reg = (uint16_t)from};
	return err;
}

/*
 * AArch64 pointer authentication: the return address is signed from here
 * on (or no longer). DW_CFA_AARCH64_negate_ra_state_with_pc (PAuth_LR) also
 * mixes the PC into the signature; that only matters to authenticate it,
 * not to strip it, which is all an unwinder does.
 */
static int op_negate_ra_state(struct run *r)
{
	if (r->p->arch != CFI_ARCH_AARCH64)
		return -EOPNOTSUPP;
	r->p->cur.ra_signed = !r->p->cur.ra_signed;
	return 0;
}

static int op_reg_only(struct run *r, enum cfi_reg_rule rule, bool restore)
{
	uint64_t reg;
	int err = uleb(r, &reg);

	if (err)
		return err;
	if (restore)
		return op_restore(r, reg);
	set_rule(r, reg, rule, 0);
	return 0;
}

static int op_advance(struct run *r, size_t bytes)
{
	uint64_t delta;
	int err = dwarf_cursor__int(&r->c, bytes, false, &delta);

	return err ? err : advance(r, delta);
}

static int op_gnu_args_size(struct run *r)
{
	uint64_t size;

	return uleb(r, &size);
}

static int op_negative_offset(struct run *r)
{
	uint64_t reg, u;
	int64_t off;
	int err = uleb(r, &reg);

	if (!err)
		err = uleb(r, &u);
	if (!err)
		err = scaled(r, -(int64_t)u, &off);
	if (!err)
		set_rule(r, reg, CFI_REG_OFFSET, off);
	return err;
}

/* One extended opcode (the high two bits clear). */
static int step_extended(struct run *r, uint8_t op)
{
	switch (op) {
	case CFA_NOP:
		return 0;
	case CFA_SET_LOC:
		return set_loc(r);
	case CFA_ADVANCE_LOC1:
		return op_advance(r, 1);
	case CFA_ADVANCE_LOC2:
		return op_advance(r, 2);
	case CFA_ADVANCE_LOC4:
		return op_advance(r, 4);
	case CFA_MIPS_ADVANCE_LOC8:
		return op_advance(r, 8);
	case CFA_OFFSET_EXTENDED:
	case CFA_OFFSET_EXTENDED_SF:
	case CFA_VAL_OFFSET:
	case CFA_VAL_OFFSET_SF: {
		uint64_t reg;
		int err = uleb(r, &reg);

		if (err)
			return err;
		return op_offset(r, reg, op == CFA_OFFSET_EXTENDED_SF || op == CFA_VAL_OFFSET_SF,
				 op == CFA_VAL_OFFSET || op == CFA_VAL_OFFSET_SF
					 ? CFI_REG_VAL_OFFSET
					 : CFI_REG_OFFSET);
	}
	case CFA_RESTORE_EXTENDED:
		return op_reg_only(r, 0, true);
	case CFA_UNDEFINED:
		return op_reg_only(r, CFI_REG_UNDEFINED, false);
	case CFA_SAME_VALUE:
		return op_reg_only(r, CFI_REG_SAME, false);
	case CFA_REGISTER:
		return op_register(r);
	case CFA_REMEMBER_STATE:
		return remember(r);
	case CFA_RESTORE_STATE:
		return restore_state(r);
	case CFA_DEF_CFA:
		return def_cfa(r, false);
	case CFA_DEF_CFA_SF:
		return def_cfa(r, true);
	case CFA_DEF_CFA_REGISTER:
	case CFA_DEF_CFA_OFFSET:
	case CFA_DEF_CFA_OFFSET_SF:
		return def_cfa_part(r, op);
	case CFA_DEF_CFA_EXPRESSION:
		return op_expression(r, &r->p->cur.cfa, CFI_CFA_EXPR);
	case CFA_EXPRESSION:
		return op_register_expression(r, CFI_REG_EXPR);
	case CFA_VAL_EXPRESSION:
		return op_register_expression(r, CFI_REG_VAL_EXPR);
	case CFA_GNU_WINDOW_SAVE:
	case CFA_AARCH64_NEGATE_RA_STATE_WITH_PC:
		return op_negate_ra_state(r);
	case CFA_GNU_ARGS_SIZE:
		return op_gnu_args_size(r);
	case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
		return op_negative_offset(r);
	}
	return -EOPNOTSUPP;
}

static int step(struct run *r, uint8_t op)
{
	switch (op & 0xc0) {
	case CFA_ADVANCE_LOC:
		return advance(r, op & 0x3f);
	case CFA_OFFSET:
		return op_offset(r, op & 0x3f, false, CFI_REG_OFFSET);
	case CFA_RESTORE:
		return op_restore(r, op & 0x3f);
	}
	return step_extended(r, op);
}

/*
 * Runs insns; -EOPNOTSUPP / -EINVAL stop it with *bad the opcode, any
 * other nonzero return is the callback's (or -ENOMEM) and ends the run.
 */
static int run_insns(struct run *r, const uint8_t *insns, size_t size, uint64_t vaddr, uint8_t *bad)
{
	uint8_t op;
	int err = 0;

	r->c = (struct dwarf_cursor){insns, size, 0, vaddr};
	while (!err && r->c.pos < r->c.size && r->loc < r->end) {
		err = dwarf_cursor__u8(&r->c, &op);
		if (!err)
			err = step(r, op);
		*bad = op;
	}
	return err;
}

static bool program_error(int err)
{
	return err == -EOPNOTSUPP || err == -EINVAL;
}

int cfi_program__run(struct cfi_program *p, const struct cfi_fde *fde, cfi_row_fn fn, void *arg)
{
	struct run r = {p, fde, {0}, fde->pc_begin, fde->pc_begin + fde->pc_range, true, fn, arg};
	uint8_t bad = 0;
	int err;

	memset(&p->cur, 0, sizeof(p->cur));
	p->nsaved = 0;
	err = run_insns(&r, fde->cie_insns, fde->cie_insns_size, fde->cie_insns_vaddr, &bad);
	p->initial = p->cur;
	r.in_cie = false;
	if (!err)
		err = run_insns(&r, fde->insns, fde->insns_size, fde->insns_vaddr, &bad);
	if (program_error(err))
		return emit(&r, r.end, err, bad);
	if (err)
		return err;
	return emit(&r, r.end, 0, 0);
}
