// SPDX-License-Identifier: MIT
/* ELF headers of a file image in memory; see elf_image.h. */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "lib/elf_image.h"

bool elf_image__contains(const struct elf_image *img, uint64_t off, uint64_t size)
{
	return off <= img->size && size <= img->size - off;
}

void elf_image__section(const struct elf_image *img, size_t i, struct elf_section *s)
{
	const uint8_t *sh = img->p + img->shoff + i * img->shentsize;
	Elf64_Shdr s64;
	Elf32_Shdr s32;

	if (img->is64) {
		memcpy(&s64, sh, sizeof(s64));
		*s = (struct elf_section){s64.sh_name,	 s64.sh_type, s64.sh_flags, s64.sh_addr,
					  s64.sh_offset, s64.sh_size, s64.sh_link};
	} else {
		memcpy(&s32, sh, sizeof(s32));
		*s = (struct elf_section){s32.sh_name,	 s32.sh_type, s32.sh_flags, s32.sh_addr,
					  s32.sh_offset, s32.sh_size, s32.sh_link};
	}
}

void elf_image__segment(const struct elf_image *img, size_t i, struct elf_segment *s)
{
	const uint8_t *ph = img->p + img->phoff + i * img->phentsize;
	Elf64_Phdr p64;
	Elf32_Phdr p32;

	if (img->is64) {
		memcpy(&p64, ph, sizeof(p64));
		*s = (struct elf_segment){p64.p_type, p64.p_flags, p64.p_offset, p64.p_vaddr,
					  p64.p_filesz};
	} else {
		memcpy(&p32, ph, sizeof(p32));
		*s = (struct elf_segment){p32.p_type, p32.p_flags, p32.p_offset, p32.p_vaddr,
					  p32.p_filesz};
	}
}

/*
 * The section headers, when there are any that lie inside the image: a
 * file without them (or with headers that cannot be read) still has its
 * segments.
 */
static void read_section_headers(struct elf_image *img, uint64_t shoff, size_t shnum,
				 size_t shentsize, size_t shstrndx)
{
	size_t min = img->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	struct elf_section s0;

	img->shnum = 0;
	if (!shoff || shentsize < min || !elf_image__contains(img, shoff, shentsize))
		return;
	img->shoff = shoff;
	img->shentsize = shentsize;
	img->shnum = 1;
	elf_image__section(img, 0, &s0);
	/* Extended numbering: the real counts are in section 0. */
	if (!shnum)
		shnum = s0.size < SIZE_MAX ? (size_t)s0.size : 0;
	if (shstrndx == SHN_XINDEX)
		shstrndx = s0.link;
	if (shnum > (img->size - shoff) / shentsize)
		shnum = 0;
	img->shnum = shnum;
	img->shstrndx = shstrndx < shnum ? shstrndx : 0;
}

int elf_image__open(const void *image, size_t size, struct elf_image *img)
{
	const uint8_t *id = image;
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;

	if (!image || size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (id[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB))
		return -EOPNOTSUPP;
	*img = (struct elf_image){.p = image, .size = size};
	if (id[EI_CLASS] == ELFCLASS64 && size >= sizeof(e64)) {
		memcpy(&e64, image, sizeof(e64));
		img->is64 = true;
		img->phoff = e64.e_phoff;
		img->phnum = e64.e_phnum;
		img->phentsize = e64.e_phentsize;
		read_section_headers(img, e64.e_shoff, e64.e_shnum, e64.e_shentsize,
				     e64.e_shstrndx);
		if (img->phentsize < sizeof(Elf64_Phdr))
			return -ENOEXEC;
	} else if (id[EI_CLASS] == ELFCLASS32 && size >= sizeof(e32)) {
		memcpy(&e32, image, sizeof(e32));
		img->phoff = e32.e_phoff;
		img->phnum = e32.e_phnum;
		img->phentsize = e32.e_phentsize;
		read_section_headers(img, e32.e_shoff, e32.e_shnum, e32.e_shentsize,
				     e32.e_shstrndx);
		if (img->phentsize < sizeof(Elf32_Phdr))
			return -ENOEXEC;
	} else {
		return -ENOEXEC;
	}
	/* PN_XNUM: the count is in section 0, which a memory image need not have. */
	if (img->phnum == PN_XNUM)
		return -EOPNOTSUPP;
	if (img->phoff > size || img->phnum > (size - img->phoff) / img->phentsize)
		return -ENOEXEC;
	return 0;
}

/* Whether section s is called name in the section name table. */
static bool section_named(const struct elf_image *img, const struct elf_section *s,
			  const char *name)
{
	size_t len = strlen(name) + 1;
	struct elf_section strtab;

	if (!img->shstrndx)
		return false;
	elf_image__section(img, img->shstrndx, &strtab);
	if (strtab.type != SHT_STRTAB || !elf_image__contains(img, strtab.offset, strtab.size) ||
	    s->name >= strtab.size || len > strtab.size - s->name)
		return false;
	return !memcmp(img->p + strtab.offset + s->name, name, len);
}

bool elf_image__find_section(const struct elf_image *img, const char *name, uint32_t type,
			     struct elf_section *s)
{
	size_t i;

	for (i = 1; i < img->shnum; i++) {
		elf_image__section(img, i, s);
		if (s->type == type && section_named(img, s, name) &&
		    (type == SHT_NOBITS || elf_image__contains(img, s->offset, s->size)))
			return true;
	}
	return false;
}
