/* SPDX-License-Identifier: MIT */
/*
 * Finds the call frame information of an ELF file opened with libelf:
 * .eh_frame (what the loader maps, found by section header or, where the
 * section headers are gone, through PT_GNU_EH_FRAME) and .debug_frame
 * (decompressed if needed), and the machine they are for. The sections'
 * bytes belong to the Elf handle, which must outlive them.
 */
#ifndef CPROF_ELF_CFI_H
#define CPROF_ELF_CFI_H

#include <libelf.h>
#include <stdbool.h>

#include "unwind/unwind_table.h"

#define ELF_CFI_MAX_CODE 8

/* An executable section's bytes, to tell padding from code. */
struct elf_cfi_code {
	uint64_t addr;
	const uint8_t *data;
	size_t size;
};

struct elf_cfi {
	enum cfi_arch arch;
	struct elf_cfi_code code[ELF_CFI_MAX_CODE];
	size_t ncode;
	struct cfi_section eh_frame;
	struct cfi_section debug_frame;
	bool has_eh_frame;
	bool has_debug_frame;
	bool over_cap; /* a section is larger than LOAD_MAX_CFI_BYTES: left out */
};

/*
 * -ENOEXEC for a file that is not an ELF executable or library of a machine
 * cprof unwinds (x86_64, AArch64); a file without CFI is not an error.
 */
int elf_cfi__read(Elf *elf, struct elf_cfi *out);
/*
 * The bytes of CFI the section headers claim (.eh_frame and .debug_frame,
 * uncompressed), without reading them: what a build will cost. UINT64_MAX
 * for a file whose headers cannot say (none, or past ELF_CFI_MAX_SECTIONS).
 */
uint64_t elf_cfi__claimed_bytes(Elf *elf);
/*
 * The table's sources: .eh_frame, then .debug_frame (of the file, or of
 * debug, its separate debug file, when the file has none), and the file's
 * code to recognize padding. NULL debug is fine; c must outlive out.
 */
void elf_cfi__sources(const struct elf_cfi *c, const struct elf_cfi *debug,
		      struct unwind_sources *out);

#endif
