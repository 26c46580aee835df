/* SPDX-License-Identifier: MIT */
/*
 * The headers of an ELF file image in memory (ELF32 or ELF64, in the
 * machine's byte order), read without libelf: for the parsers that take a
 * mapped file or a copy of one (the vDSO, Go's function table, an
 * .eh_frame_hdr) and must not trust a byte of it. Opening checks that the
 * program headers lie inside the image; section headers are optional (a
 * stripped or packed file may have none that can be read): shnum is 0 then.
 * Every offset and size handed out is checked again before use
 * (elf_image__contains), by the caller.
 */
#ifndef CPROF_ELF_IMAGE_H
#define CPROF_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image {
	const uint8_t *p;
	size_t size;
	bool is64;
	uint64_t phoff;
	size_t phnum, phentsize;
	uint64_t shoff;
	size_t shnum, shentsize, shstrndx;
};

struct elf_segment {
	uint32_t type;
	uint32_t flags;
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct elf_section {
	uint32_t name;
	uint32_t type;
	uint64_t flags;
	uint64_t addr;
	uint64_t offset;
	uint64_t size;
	uint32_t link;
};

/*
 * 0, -ENOEXEC (not ELF, or headers outside the image) or -EOPNOTSUPP
 * (another byte order, or more program headers than the header can count).
 */
int elf_image__open(const void *image, size_t size, struct elf_image *img);
/* Whether [off, off + size) lies inside the image. */
bool elf_image__contains(const struct elf_image *img, uint64_t off, uint64_t size);
/* Program header i (< phnum). */
void elf_image__segment(const struct elf_image *img, size_t i, struct elf_segment *s);
/* Section header i (< shnum). */
void elf_image__section(const struct elf_image *img, size_t i, struct elf_section *s);
/* The first section called name of that type whose bytes (but for SHT_NOBITS) are in the image. */
bool elf_image__find_section(const struct elf_image *img, const char *name, uint32_t type,
			     struct elf_section *s);

#endif
