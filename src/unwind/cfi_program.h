/* SPDX-License-Identifier: MIT */
/*
 * Runs the call frame instructions of an FDE (its CIE's initial
 * instructions, then its own) and hands out the table they describe, one
 * row per address range: how to find the canonical frame address (CFA,
 * the caller's stack pointer at the call) and where each register of the
 * caller was saved. DWARF 5, section 6.4.
 *
 * Every DW_CFA_* opcode of DWARF 5 and the GNU and AArch64 extensions is
 * read. An opcode it does not know, or bytes that make no sense, end the
 * table usefully: the rest of the function's range becomes one row marked
 * unusable with the reason, so an unwinder stops there and says why
 * instead of guessing, and the caller can count it.
 */
#ifndef CPROF_CFI_PROGRAM_H
#define CPROF_CFI_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_entries.h"

/* DWARF register numbers tracked; rules for higher ones are read and dropped. */
#define CFI_MAX_REGS 128

/* What 0x2d means depends on the machine (SPARC's GNU_window_save elsewhere). */
enum cfi_arch {
	CFI_ARCH_X86_64,
	CFI_ARCH_AARCH64,
};

enum cfi_reg_rule {
	CFI_REG_UNSET = 0,  /* no rule given: the ABI's default applies */
	CFI_REG_UNDEFINED,  /* not recoverable (for the return address: the stack ends here) */
	CFI_REG_SAME,	    /* unchanged from the callee */
	CFI_REG_OFFSET,	    /* saved at CFA + offset */
	CFI_REG_VAL_OFFSET, /* its value is CFA + offset */
	CFI_REG_REGISTER,   /* its value is in register reg */
	CFI_REG_EXPR,	    /* saved at the address the expression computes (CFA pushed first) */
	CFI_REG_VAL_EXPR,   /* its value is what the expression computes */
};

struct cfi_reg {
	uint8_t rule; /* enum cfi_reg_rule */
	uint16_t reg;
	uint32_t expr_size;
	int64_t offset;
	const uint8_t *expr; /* DWARF expression bytes, inside the section */
};

enum cfi_cfa_rule {
	CFI_CFA_UNSET = 0,
	CFI_CFA_REG_OFFSET, /* register reg + offset */
	CFI_CFA_EXPR,	    /* what the expression computes */
};

struct cfi_row {
	uint64_t begin; /* the row holds for [begin, end) */
	uint64_t end;
	struct cfi_reg cfa;	    /* rule is enum cfi_cfa_rule */
	const struct cfi_reg *regs; /* CFI_MAX_REGS rules, by DWARF register number */
	/* AArch64: the return address was signed (pointer authentication) and must be stripped. */
	bool ra_signed;
	/*
	 * 0, or why nothing is known from begin on: -EOPNOTSUPP for an opcode
	 * it does not know, -EINVAL for bytes that make no sense.
	 */
	int error;
	uint8_t bad_opcode; /* with -EOPNOTSUPP */
};

struct cfi_program;

/* The callback's nonzero return ends the run and is returned. */
typedef int (*cfi_row_fn)(const struct cfi_row *row, void *arg);

int cfi_program__new(enum cfi_arch arch, struct cfi_program **out);
void cfi_program__free(struct cfi_program *p);
/*
 * Calls fn for each row of the FDE's table, in address order; rows cover
 * [pc_begin, pc_begin + pc_range) without gaps. 0, fn's nonzero return,
 * or -ENOMEM. A program that goes wrong midway still returns 0: its last
 * row carries the error.
 */
int cfi_program__run(struct cfi_program *p, const struct cfi_fde *fde, cfi_row_fn fn, void *arg);

#endif
