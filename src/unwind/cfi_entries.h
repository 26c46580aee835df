/* SPDX-License-Identifier: MIT */
/*
 * The entries of a call frame information section: .eh_frame (the LSB's
 * format, loaded with the program, what unwinders and C++ exceptions use)
 * or .debug_frame (DWARF's, in debug files, sometimes the only CFI of an
 * arm64 or hand-written function). Both are sequences of CIEs (what many
 * functions share: alignment factors, the return-address column, initial
 * instructions) and FDEs (a function's range and its own instructions);
 * they differ in the IDs that tell the two apart, in how an FDE points to
 * its CIE and in how addresses are encoded.
 *
 * The bytes come from the programs being profiled: every read is bounded
 * by the section and by the entry, so a corrupt entry is an error, never a
 * crash, and iteration goes on past it when its length can be trusted.
 * The section's bytes are borrowed and must outlive what is read from them.
 */
#ifndef CPROF_CFI_ENTRIES_H
#define CPROF_CFI_ENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/dwarf_cursor.h"

enum cfi_format {
	CFI_EH_FRAME,
	CFI_DEBUG_FRAME,
};

struct cfi_section {
	enum cfi_format format;
	const uint8_t *data;
	size_t size;
	/* Where the section is loaded: the base of pcrel pointers (.eh_frame only). */
	uint64_t vaddr;
	struct dwarf_bases bases;
};

/* One FDE with what its CIE says about it. */
struct cfi_fde {
	uint64_t pc_begin; /* the function's first address */
	uint64_t pc_range; /* its size: the FDE covers [pc_begin, pc_begin + pc_range) */
	uint64_t vaddr;	   /* where the FDE is: section vaddr + its offset */
	/* The CIE's initial instructions run first, then the FDE's. */
	const uint8_t *cie_insns;
	size_t cie_insns_size;
	uint64_t cie_insns_vaddr;
	const uint8_t *insns;
	size_t insns_size;
	uint64_t insns_vaddr;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
	uint8_t addr_enc;  /* DW_EH_PE_* of addresses (DW_CFA_set_loc's operand) */
	uint8_t addr_size; /* 4 or 8 */
	bool signal_frame; /* augmentation 'S': the frame of a signal trampoline */
	bool pauth_b_key;  /* augmentation 'B' (AArch64): return addresses signed with key B */
};

/*
 * The FDE that starts at byte off of the section. -ENOENT when a CIE or the
 * .eh_frame terminator is there; -EINVAL for corrupt bytes; -EOPNOTSUPP
 * for an encoding or version it cannot read.
 */
int cfi_section__fde_at(const struct cfi_section *s, uint64_t off, struct cfi_fde *out);

/*
 * Iterates over the FDEs: start with *off = 0. 0 when *out holds the next
 * FDE; -ENOENT at the end. Any other error is the entry at the old *off:
 * *off has moved past it when its length was readable (call again to go
 * on), or to the end of the section when not.
 */
int cfi_section__next(const struct cfi_section *s, uint64_t *off, struct cfi_fde *out);

#endif
