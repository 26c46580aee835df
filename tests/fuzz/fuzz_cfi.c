// SPDX-License-Identifier: MIT
/*
 * .eh_frame and .debug_frame come from the profiled programs. The input is
 * one header byte and the section's bytes:
 *   bit 0: .debug_frame (else .eh_frame)      bit 1: 32-bit addresses
 *   bit 2: AArch64 (else x86-64)              bit 3: no data base
 * Every FDE cfi_section__next hands out goes through cfi_program__run, and
 * what comes back must hold together, or this aborts: iteration moves on
 * at each call and ends at the section's end; an FDE's instructions lie in
 * the section and cfi_section__fde_at reads the same FDE at its offset; its
 * rows follow each other without a gap from pc_begin to pc_begin +
 * pc_range, each non-empty; only the last may carry an error, which is
 * -EINVAL or -EOPNOTSUPP; expressions point into the section.
 *
 * The section gets its own exact-size copy, so ASan catches a read past it.
 * The seeds (fixtures/corpus/cfi/) are real sections behind their header
 * byte, cut out with `objcopy -O binary --only-section=.eh_frame` (or
 * .debug_frame): fixtures, GCC's .debug_frame (CIE version 1), clang's
 * (version 4, 64-bit lengths), arm64 code with pointer authentication, an
 * i386 object, and the assembler sources of tests/e2e/cfi_readelf.sh that
 * use every opcode.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_entries.h"
#include "unwind/cfi_program.h"

#define VADDR	  0x400000
#define DATA_BASE 0x600000

struct check {
	const struct cfi_section *sec;
	uint64_t next; /* where the next row must begin */
	uint64_t end;  /* the FDE's end */
	bool ended;    /* an error row came: nothing may follow */
	size_t rows;
};

static bool inside(const struct cfi_section *s, const uint8_t *p, size_t n)
{
	return p >= s->data && p <= s->data + s->size && n <= (size_t)(s->data + s->size - p);
}

static void check_reg(const struct check *c, const struct cfi_reg *r, bool cfa)
{
	if (cfa ? r->rule > CFI_CFA_EXPR : r->rule > CFI_REG_VAL_EXPR)
		abort();
	if ((cfa ? r->rule == CFI_CFA_EXPR
		 : r->rule == CFI_REG_EXPR || r->rule == CFI_REG_VAL_EXPR) &&
	    !inside(c->sec, r->expr, r->expr_size))
		abort();
}

static int check_row(const struct cfi_row *row, void *arg)
{
	struct check *c = arg;
	size_t i;

	if (c->ended || row->begin != c->next || row->end <= row->begin || row->end > c->end)
		abort();
	c->next = row->end;
	c->rows++;
	if (row->error) {
		if (row->error != -EINVAL && row->error != -EOPNOTSUPP)
			abort();
		c->ended = true;
		return 0;
	}
	if (row->bad_opcode || !row->regs)
		abort();
	check_reg(c, &row->cfa, true);
	for (i = 0; i < CFI_MAX_REGS; i++)
		check_reg(c, &row->regs[i], false);
	return 0;
}

static void check_fde(const struct cfi_section *s, struct cfi_program *p, const struct cfi_fde *f,
		      uint64_t off)
{
	struct check c = {.sec = s, .next = f->pc_begin, .end = f->pc_begin + f->pc_range};
	struct cfi_fde again;
	int err;

	if (!inside(s, f->insns, f->insns_size) || !inside(s, f->cie_insns, f->cie_insns_size) ||
	    f->insns_vaddr != s->vaddr + (uint64_t)(f->insns - s->data) ||
	    (f->addr_size != 4 && f->addr_size != 8) ||
	    f->pc_range > dwarf_to_addr_size(~0ull, f->addr_size) - f->pc_begin)
		abort();
	if (cfi_section__fde_at(s, off, &again) || again.pc_begin != f->pc_begin ||
	    again.pc_range != f->pc_range || again.insns != f->insns)
		abort();
	err = cfi_program__run(p, f, check_row, &c);
	if (err == -ENOMEM)
		return;
	if (err || c.next != c.end || (f->pc_range == 0) != (c.rows == 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_section sec = {0};
	struct cfi_program *prog;
	struct cfi_fde fde;
	uint64_t off = 0, at;
	uint8_t head, *copy;
	int err;

	if (size < 1)
		return 0;
	head = data[0];
	data++;
	size--;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	sec.format = head & 1 ? CFI_DEBUG_FRAME : CFI_EH_FRAME;
	sec.data = copy;
	sec.size = size;
	sec.vaddr = head & 1 ? 0 : VADDR;
	sec.bases.addr_size = head & 2 ? 4 : 8;
	sec.bases.has_data = !(head & 8);
	sec.bases.data = DATA_BASE;
	if (cfi_program__new(head & 4 ? CFI_ARCH_AARCH64 : CFI_ARCH_X86_64, &prog)) {
		free(copy);
		return 0;
	}
	for (;;) {
		at = off;
		err = cfi_section__next(&sec, &off, &fde);
		if (err == -ENOENT)
			break;
		/* Each call moves on, never past the end: iteration always ends. */
		if (off <= at || off > size)
			abort();
		if (!err)
			check_fde(&sec, prog, &fde, fde.vaddr - sec.vaddr);
	}
	if (off != size)
		abort();
	cfi_program__free(prog);
	free(copy);
	return 0;
}
