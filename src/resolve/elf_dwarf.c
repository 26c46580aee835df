// SPDX-License-Identifier: MIT
/* Copies a file's DWARF line and inline sections; see elf_dwarf.h. */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "lib/dwarf_line.h"
#include "resolve/elf_dwarf.h"

/*
 * .debug_str is kept only up to this size (as stored): line tables name
 * their files in .debug_line_str or inline; .debug_str, tens of MB in a
 * large C++ program's debug file, serves the rare one that does not.
 */
#define KEPT_DEBUG_STR_BYTES (4u << 20)

static const char *const section_names[DWARF_SECTIONS] = {
	[DWARF_LINE] = ".debug_line",	      [DWARF_LINE_STR] = ".debug_line_str",
	[DWARF_STR] = ".debug_str",	      [DWARF_INFO] = ".debug_info",
	[DWARF_ABBREV] = ".debug_abbrev",     [DWARF_STR_OFFSETS] = ".debug_str_offsets",
	[DWARF_ADDR] = ".debug_addr",	      [DWARF_RANGES] = ".debug_ranges",
	[DWARF_RNGLISTS] = ".debug_rnglists",
};

static void take(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t file_size,
		 struct dwarf_section_bytes *s)
{
	Elf_Data *d;

	if (s->size || sh->sh_offset > file_size || sh->sh_size > file_size - sh->sh_offset)
		return;
	d = elf_rawdata(scn, NULL);
	if (d && d->d_buf && d->d_size == sh->sh_size)
		*s = (struct dwarf_section_bytes){d->d_buf, d->d_size,
						  (sh->sh_flags & SHF_COMPRESSED) != 0};
}

int elf_dwarf__read(Elf *elf, uint64_t file_size, bool inlines, struct dwarf_ctx **out)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;
	int i;

	*out = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		/* A section stripped into a debug file stays as SHT_NOBITS: nothing to read. */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (i = 0; name && i < (inlines ? DWARF_SECTIONS : DWARF_STR + 1); i++)
			if (!strcmp(name, section_names[i]))
				take(scn, &sh, file_size, &secs[i]);
	}
	/* Inlined functions are named in .debug_str: kept whole with .debug_info. */
	if (secs[DWARF_STR].size > KEPT_DEBUG_STR_BYTES && !secs[DWARF_INFO].size)
		secs[DWARF_STR] = (struct dwarf_section_bytes){0};
	return dwarf_ctx__new(secs, gelf_getclass(elf) == ELFCLASS64, out);
}
