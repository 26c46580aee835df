/* SPDX-License-Identifier: MIT */
/*
 * The DWARF sections of an open ELF file, copied (as the file stores them,
 * compressed or not) into a dwarf_ctx (lib/dwarf_line.h) while the file is
 * open: the symbol loader closes files once their symbols are read, and a
 * profile asks for lines only when it ends.
 */
#ifndef CPROF_ELF_DWARF_H
#define CPROF_ELF_DWARF_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

struct dwarf_ctx;

/*
 * 0, -ENOENT (no .debug_line, or only a stub of one), or what
 * dwarf_ctx__new says (-EFBIG, -EOPNOTSUPP, -ENOMEM). file_size bounds
 * every section (libelf trusts the headers). inlines: the sections for
 * inlined functions too (lib/dwarf_inline.h).
 */
int elf_dwarf__read(Elf *elf, uint64_t file_size, bool inlines, struct dwarf_ctx **out);

#endif
