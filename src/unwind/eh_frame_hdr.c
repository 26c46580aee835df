// SPDX-License-Identifier: MIT
/*
 * .eh_frame_hdr and .eh_frame readers; see eh_frame_hdr.h. The formats are
 * the LSB's (Linux Standard Base Core, "Exception Frames"): .eh_frame_hdr is
 *   u8 version (1), u8 eh_frame_ptr_enc, u8 fde_count_enc, u8 table_enc,
 *   eh_frame_ptr, fde_count, then fde_count pairs (initial_loc, fde_address)
 * sorted by initial_loc; .eh_frame is a sequence of CIEs and FDEs, each
 * with a 32-bit length (0xffffffff: a 64-bit length follows) and an ID
 * that is 0 for a CIE and, for an FDE, the distance back to its CIE.
 *
 * All reads go through a cursor bounded by the section, or by the entry
 * being parsed, so no length in the input can send a read past either.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf_image.h"

#define LOG_MODULE "eh_frame"
#include "lib/log.h"
#include "unwind/cfi_entries.h"
#include "unwind/eh_frame_hdr.h"

struct eh_frame_hdr {
	struct eh_frame_sections sec;
	struct cfi_section cfi; /* .eh_frame */
	size_t table_off;	/* of the first entry, in sec.hdr */
	size_t count;
	size_t field_size; /* of initial_loc and of fde_address */
	uint8_t table_enc;
	uint64_t eh_frame_ptr;
};

/* The FDE at vaddr (inside .eh_frame), with its CIE. */
static int parse_fde(const struct eh_frame_hdr *h, uint64_t vaddr, struct cfi_fde *out)
{
	if (vaddr < h->cfi.vaddr || vaddr - h->cfi.vaddr >= h->cfi.size)
		return -EINVAL;
	return cfi_section__fde_at(&h->cfi, vaddr - h->cfi.vaddr, out);
}

/* Table entry i: the function's first address and its FDE's address. */
static int table_entry(const struct eh_frame_hdr *h, size_t i, uint64_t *loc, uint64_t *fde)
{
	struct dwarf_bases b = {h->sec.addr_size, true, h->sec.hdr_vaddr};
	struct dwarf_cursor c = {h->sec.hdr, h->sec.hdr_size, h->table_off + 2 * i * h->field_size,
				 h->sec.hdr_vaddr};
	int err = dwarf_cursor__pointer(&c, h->table_enc, &b, loc);

	return err ? err : dwarf_cursor__pointer(&c, h->table_enc, &b, fde);
}

static int parse_header(struct eh_frame_hdr *h)
{
	struct dwarf_bases b = {h->sec.addr_size, true, h->sec.hdr_vaddr};
	struct dwarf_cursor c = {h->sec.hdr, h->sec.hdr_size, 0, h->sec.hdr_vaddr};
	uint8_t version, ptr_enc, count_enc;
	uint64_t count;
	int err;

	err = dwarf_cursor__u8(&c, &version);
	if (!err)
		err = dwarf_cursor__u8(&c, &ptr_enc);
	if (!err)
		err = dwarf_cursor__u8(&c, &count_enc);
	if (!err)
		err = dwarf_cursor__u8(&c, &h->table_enc);
	if (err)
		return err;
	if (version != 1)
		return -EOPNOTSUPP;
	err = dwarf_cursor__pointer(&c, ptr_enc, &b, &h->eh_frame_ptr);
	if (err)
		return err;
	if (count_enc == DW_EH_PE_omit || h->table_enc == DW_EH_PE_omit)
		return -ENOENT;
	err = dwarf_cursor__pointer(&c, count_enc, &b, &count);
	if (err)
		return err;
	/* A binary search needs entries of one size: no LEB128. */
	h->field_size = dwarf_value_size(h->table_enc, h->sec.addr_size);
	if (!h->field_size || (h->table_enc & DW_EH_PE_indirect))
		return -EOPNOTSUPP;
	if (count > (c.size - c.pos) / (2 * h->field_size))
		return -EINVAL;
	h->table_off = c.pos;
	h->count = count;
	return 0;
}

/* Every entry decodes, lies in .eh_frame and comes in order: the search relies on it. */
static int check_table(const struct eh_frame_hdr *h)
{
	uint64_t loc, fde, prev = 0;
	size_t i;
	int err;

	for (i = 0; i < h->count; i++) {
		err = table_entry(h, i, &loc, &fde);
		if (err)
			return err;
		if ((i && loc < prev) || fde < h->sec.eh_frame_vaddr ||
		    fde - h->sec.eh_frame_vaddr >= h->sec.eh_frame_size)
			return -EINVAL;
		prev = loc;
	}
	return 0;
}

static int check_sections(const struct eh_frame_sections *sec)
{
	if ((sec->addr_size != 4 && sec->addr_size != 8) || !sec->hdr || !sec->eh_frame)
		return -EINVAL;
	return 0;
}

/* Takes h (freed on error): the header is parsed, .eh_frame must be in place. */
static int finish(struct eh_frame_hdr *h, struct eh_frame_hdr **out)
{
	int err = check_sections(&h->sec);

	h->cfi = (struct cfi_section){
		.format = CFI_EH_FRAME,
		.data = h->sec.eh_frame,
		.size = h->sec.eh_frame_size,
		.vaddr = h->sec.eh_frame_vaddr,
		.bases = {h->sec.addr_size, h->sec.has_data_base, h->sec.data_base},
	};

	if (!err && h->eh_frame_ptr != h->sec.eh_frame_vaddr)
		err = -EINVAL;
	if (!err)
		err = check_table(h);
	if (err) {
		pr_debug("unusable .eh_frame_hdr: %s", strerror(-err));
		eh_frame_hdr__free(h);
		return err;
	}
	*out = h;
	return 0;
}

int eh_frame_hdr__new(const struct eh_frame_sections *sec, struct eh_frame_hdr **out)
{
	struct eh_frame_hdr *h;
	int err;

	*out = NULL;
	err = check_sections(sec);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sec = *sec;
	err = parse_header(h);
	if (err) {
		eh_frame_hdr__free(h);
		return err;
	}
	return finish(h, out);
}

void eh_frame_hdr__free(struct eh_frame_hdr *h)
{
	free(h);
}

bool eh_frame_hdr__eh_frame(const struct eh_frame_hdr *h, const uint8_t **data, size_t *size,
			    uint64_t *vaddr)
{
	if (!h || !h->sec.eh_frame)
		return false;
	*data = h->sec.eh_frame;
	*size = h->sec.eh_frame_size;
	*vaddr = h->sec.eh_frame_vaddr;
	return true;
}

size_t eh_frame_hdr__count(const struct eh_frame_hdr *h)
{
	return h ? h->count : 0;
}

int eh_frame_hdr__fde(const struct eh_frame_hdr *h, size_t i, struct cfi_fde *out)
{
	uint64_t loc, fde;
	int err;

	if (!h || i >= h->count)
		return -ERANGE;
	err = table_entry(h, i, &loc, &fde);
	if (!err)
		err = parse_fde(h, fde, out);
	/* A table that disagrees with the FDE would name the wrong function. */
	if (!err && out->pc_begin != loc)
		err = -EINVAL;
	return err;
}

int eh_frame_hdr__find(const struct eh_frame_hdr *h, uint64_t vaddr, struct cfi_fde *out)
{
	size_t lo = 0, hi = eh_frame_hdr__count(h), mid;
	uint64_t loc, fde;
	int err;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		err = table_entry(h, mid, &loc, &fde);
		if (err)
			return err;
		if (loc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	err = eh_frame_hdr__fde(h, lo - 1, out);
	if (err)
		return err;
	return vaddr - out->pc_begin < out->pc_range ? 0 : -ENOENT;
}

/* The bytes of the file image at vaddr up to the end of the PT_LOAD segment holding them. */
static int find_loaded(const struct elf_image *img, uint64_t vaddr, const uint8_t **p, size_t *size)
{
	struct elf_segment s;
	uint64_t off;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		elf_image__segment(img, i, &s);
		if (s.type != PT_LOAD || vaddr < s.vaddr || vaddr - s.vaddr >= s.filesz)
			continue;
		off = vaddr - s.vaddr + s.offset;
		if (s.offset > img->size || s.filesz > img->size - s.offset)
			return -ENOEXEC;
		*p = img->p + off;
		*size = s.filesz - (vaddr - s.vaddr);
		return 0;
	}
	/* The header points at no loaded bytes. */
	return -EINVAL;
}

static int find_hdr(const struct elf_image *img, struct eh_frame_sections *sec)
{
	struct elf_segment s;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		elf_image__segment(img, i, &s);
		if (s.type != PT_GNU_EH_FRAME)
			continue;
		if (s.offset > img->size || s.filesz > img->size - s.offset)
			return -ENOEXEC;
		sec->hdr = img->p + s.offset;
		sec->hdr_size = s.filesz;
		sec->hdr_vaddr = s.vaddr;
		return 0;
	}
	return -ENOENT;
}

int eh_frame_hdr__from_elf(const void *image, size_t size, struct eh_frame_hdr **out)
{
	struct eh_frame_hdr *h;
	struct elf_image img;
	int err;

	*out = NULL;
	err = elf_image__open(image, size, &img);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sec.addr_size = img.is64 ? 8 : 4;
	err = find_hdr(&img, &h->sec);
	if (!err)
		err = parse_header(h);
	if (!err)
		err = find_loaded(&img, h->eh_frame_ptr, &h->sec.eh_frame, &h->sec.eh_frame_size);
	if (err) {
		eh_frame_hdr__free(h);
		return err;
	}
	h->sec.eh_frame_vaddr = h->eh_frame_ptr;
	return finish(h, out);
}
