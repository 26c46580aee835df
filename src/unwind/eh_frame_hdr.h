/* SPDX-License-Identifier: MIT */
/*
 * Call frame information found through .eh_frame_hdr. Its binary search
 * table maps the first address of each function to the function's FDE in
 * .eh_frame; the FDE gives the function's extent [pc_begin, pc_begin +
 * pc_range) and, with its CIE, the CFA rules an unwinder runs. So one
 * lookup answers "which function holds this address, and where does it
 * start" for code that no symbol names, and later "how to unwind it".
 *
 * The bytes come from the programs being profiled (or the kernel's vDSO):
 * every read is bounds-checked, every pointer encoding (DW_EH_PE_*) is
 * decoded or refused, and a table entry must agree with the FDE it points
 * to. Corrupt input is an error, never a crash. The object borrows the
 * bytes it is given: they must outlive it.
 *
 * Addresses are ELF virtual addresses (as linked), like the symbol tables'.
 */
#ifndef CPROF_EH_FRAME_HDR_H
#define CPROF_EH_FRAME_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_entries.h"

struct eh_frame_hdr;

/* The two sections, as bytes and the addresses they are loaded at. */
struct eh_frame_sections {
	const uint8_t *hdr; /* .eh_frame_hdr */
	size_t hdr_size;
	uint64_t hdr_vaddr;
	const uint8_t *eh_frame; /* .eh_frame, where the header's eh_frame_ptr points */
	size_t eh_frame_size;
	uint64_t eh_frame_vaddr;
	/*
	 * The base of DW_EH_PE_datarel pointers in .eh_frame (the GOT on
	 * i386); without one they are refused. In .eh_frame_hdr the base is
	 * always the header's own address.
	 */
	uint64_t data_base;
	bool has_data_base;
	uint8_t addr_size; /* 4 or 8: the size of a DW_EH_PE_absptr */
};

/*
 * Reads the header and checks its table: sorted, every entry inside
 * .eh_frame. -ENOENT when the header has no table (DW_EH_PE_omit),
 * -EOPNOTSUPP for encodings it cannot decode, -EINVAL for corrupt bytes,
 * -ENOMEM.
 */
int eh_frame_hdr__new(const struct eh_frame_sections *sec, struct eh_frame_hdr **out);
/*
 * The same for an ELF image in memory, laid out as its file (the vDSO is):
 * PT_GNU_EH_FRAME locates the header, and the PT_LOAD segment holding its
 * eh_frame_ptr bounds .eh_frame. Only the machine's own byte order.
 * -ENOENT when the image has no PT_GNU_EH_FRAME.
 */
int eh_frame_hdr__from_elf(const void *image, size_t size, struct eh_frame_hdr **out);
void eh_frame_hdr__free(struct eh_frame_hdr *h);
/*
 * The .eh_frame the header points to: from eh_frame_hdr__from_elf, the
 * bytes up to the end of the segment (the section's zero terminator ends
 * it before). False without one.
 */
bool eh_frame_hdr__eh_frame(const struct eh_frame_hdr *h, const uint8_t **data, size_t *size,
			    uint64_t *vaddr);

/* Entries of the table, in ascending pc_begin order. */
size_t eh_frame_hdr__count(const struct eh_frame_hdr *h);
/* The FDE of entry i: 0, -ERANGE past the end, or an error for a corrupt FDE or CIE. */
int eh_frame_hdr__fde(const struct eh_frame_hdr *h, size_t i, struct cfi_fde *out);
/*
 * The FDE of the function holding vaddr: 0, -ENOENT when none does (before
 * the first, in a gap, or past the end of the nearest function below), or
 * an error for a corrupt FDE or CIE.
 */
int eh_frame_hdr__find(const struct eh_frame_hdr *h, uint64_t vaddr, struct cfi_fde *out);

#endif
