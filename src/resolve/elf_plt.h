/* SPDX-License-Identifier: MIT */
/*
 * Names for the stubs of the procedure linkage table, as objdump and perf
 * give them: `puts@plt`. A program calls another object's function through
 * its stub, and a sample that lands in one would otherwise show the
 * object's name and an offset, although every stub says exactly whose it is.
 *
 * x86_64: each stub of .plt and .plt.sec jumps through a GOT slot
 * (`jmp *disp(%rip)`, after an endbr64 and a bnd prefix when present); the
 * JUMP_SLOT relocation that fills the slot names the function. (.plt.got's
 * few stubs, named by .rela.dyn's GLOB_DAT entries, stay unnamed: reading
 * .rela.dyn costs large libraries megabytes of pages.) AArch64: after the 32-byte header, stub i of
 * .plt belongs to relocation i of .rela.plt.
 */
#ifndef CPROF_ELF_PLT_H
#define CPROF_ELF_PLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_plt_stub {
	uint64_t start; /* ELF virtual address */
	uint32_t size;
	uint32_t name; /* offset in elf_plt.names */
};

struct elf_plt {
	struct elf_plt_stub *stubs;
	size_t n;
	char *names; /* "puts@plt\0memcpy@plt\0..." */
	size_t names_size;
};

/* The stubs the file's relocations name; none is not an error. -ENOMEM. */
int elf_plt__read(Elf *elf, struct elf_plt *out);
void elf_plt__free(struct elf_plt *p);

#endif
