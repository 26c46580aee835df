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

#define LOG_MODULE "eh_frame"
#include "lib/log.h"
#include "unwind/eh_frame_hdr.h"

/* DW_EH_PE_*: the low nibble is the value's format, the next three bits its base. */
#define PE_ABSPTR   0x00
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SIGNED   0x08
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c
#define PE_PCREL    0x10
#define PE_DATAREL  0x30
#define PE_ALIGNED  0x50
#define PE_INDIRECT 0x80
#define PE_OMIT	    0xff
#define PE_FORMAT   0x0f
#define PE_APPLY    0x70

/* An unsigned LEB128 of more bytes than this holds no 64-bit value. */
#define MAX_LEB_BYTES 10

struct eh_frame_hdr {
	struct eh_frame_sections sec;
	size_t table_off; /* of the first entry, in sec.hdr */
	size_t count;
	size_t field_size; /* of initial_loc and of fde_address */
	uint8_t table_enc;
	uint64_t eh_frame_ptr;
};

/* Bytes p[0..size) loaded at vaddr, read from pos on. */
struct cursor {
	const uint8_t *p;
	size_t size;
	size_t pos;
	uint64_t vaddr;
};

struct bases {
	uint8_t addr_size;
	bool has_data;
	uint64_t data;
};

/* What an FDE needs from its CIE. */
struct cie {
	uint8_t fde_enc;
	bool has_aug_data; /* 'z': FDEs carry an augmentation data length */
	bool signal_frame;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
	const uint8_t *insns;
	size_t insns_size;
};

static int take(struct cursor *c, size_t n, const uint8_t **out)
{
	if (n > c->size - c->pos)
		return -EINVAL;
	*out = c->p + c->pos;
	c->pos += n;
	return 0;
}

static int read_u8(struct cursor *c, uint8_t *v)
{
	const uint8_t *b;
	int err = take(c, 1, &b);

	if (!err)
		*v = *b;
	return err;
}

/* An n-byte (2, 4 or 8) integer in the machine's byte order, zero- or sign-extended. */
static int read_int(struct cursor *c, size_t n, bool is_signed, uint64_t *v)
{
	const uint8_t *b;
	uint16_t u16;
	uint32_t u32;
	int err = take(c, n, &b);

	if (err)
		return err;
	switch (n) {
	case 2:
		memcpy(&u16, b, 2);
		*v = is_signed ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		return 0;
	case 4:
		memcpy(&u32, b, 4);
		*v = is_signed ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		return 0;
	case 8:
		memcpy(v, b, 8);
		return 0;
	}
	return -EINVAL;
}

/* LEB128; bits past the 64th are dropped, as no address or size has them. */
static int read_leb(struct cursor *c, bool is_signed, uint64_t *v)
{
	unsigned int shift = 0, i;
	uint64_t r = 0;
	uint8_t b = 0x80;

	for (i = 0; b & 0x80; i++) {
		if (i == MAX_LEB_BYTES || read_u8(c, &b))
			return -EINVAL;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (is_signed && shift < 64 && (b & 0x40))
		r |= ~0ull << shift;
	*v = r;
	return 0;
}

/* A value in the format of enc's low nibble, without its base. */
static int read_value(struct cursor *c, uint8_t enc, uint8_t addr_size, uint64_t *v)
{
	switch (enc & PE_FORMAT) {
	case PE_ABSPTR:
		return read_int(c, addr_size, false, v);
	case PE_SIGNED:
		return read_int(c, addr_size, true, v);
	case PE_ULEB128:
		return read_leb(c, false, v);
	case PE_SLEB128:
		return read_leb(c, true, v);
	case PE_UDATA2:
		return read_int(c, 2, false, v);
	case PE_SDATA2:
		return read_int(c, 2, true, v);
	case PE_UDATA4:
		return read_int(c, 4, false, v);
	case PE_SDATA4:
		return read_int(c, 4, true, v);
	case PE_UDATA8:
	case PE_SDATA8:
		return read_int(c, 8, false, v);
	}
	return -EOPNOTSUPP;
}

/* Size of a value in the format of enc, or 0 when it varies (LEB128) or is unknown. */
static size_t value_size(uint8_t enc, uint8_t addr_size)
{
	switch (enc & PE_FORMAT) {
	case PE_ABSPTR:
	case PE_SIGNED:
		return addr_size;
	case PE_UDATA2:
	case PE_SDATA2:
		return 2;
	case PE_UDATA4:
	case PE_SDATA4:
		return 4;
	case PE_UDATA8:
	case PE_SDATA8:
		return 8;
	}
	return 0;
}

static uint64_t to_addr_size(uint64_t v, uint8_t addr_size)
{
	return addr_size == 4 ? (uint32_t)v : v;
}

/*
 * A pointer encoded as enc: absolute, relative to its own address (pcrel)
 * or to the data base (datarel). Indirect pointers would need the memory
 * they point to, and the text- and function-relative bases are unused on
 * Linux: all refused.
 */
static int read_pointer(struct cursor *c, uint8_t enc, const struct bases *b, uint64_t *v)
{
	uint64_t base, at = c->vaddr + c->pos;
	int err;

	if (enc == PE_OMIT || (enc & PE_INDIRECT))
		return -EOPNOTSUPP;
	switch (enc & PE_APPLY) {
	case PE_ABSPTR:
		base = 0;
		break;
	case PE_PCREL:
		base = at;
		break;
	case PE_DATAREL:
		if (!b->has_data)
			return -EOPNOTSUPP;
		base = b->data;
		break;
	default:
		return -EOPNOTSUPP;
	}
	err = read_value(c, enc, b->addr_size, v);
	if (!err)
		*v = to_addr_size(*v + base, b->addr_size);
	return err;
}

/*
 * An entry's length and ID; the cursor is then bounded by the entry.
 * *end is where the entry ends; *id_pos where the ID is (an FDE's CIE
 * pointer counts back from there). The ID has 4 bytes even after a 64-bit
 * length: in .eh_frame it is not a section offset (LSB). -ENOENT for the
 * zero terminator.
 */
static int read_entry_start(struct cursor *c, size_t *end, uint64_t *id, size_t *id_pos)
{
	uint64_t len;
	int err = read_int(c, 4, false, &len);

	if (err)
		return err;
	if (!len)
		return -ENOENT;
	if (len == 0xffffffff) {
		err = read_int(c, 8, false, &len);
		if (err)
			return err;
	}
	if (len > c->size - c->pos)
		return -EINVAL;
	*end = c->pos + len;
	c->size = *end;
	*id_pos = c->pos;
	return read_int(c, 4, false, id);
}

/* The augmentation data of a 'z' CIE: the letters say what it holds, in order. */
static int read_augmentation(struct cursor *c, const char *aug, uint8_t addr_size, struct cie *cie)
{
	struct cursor d = *c;
	const uint8_t *skip;
	uint64_t len, v;
	uint8_t enc;
	int err = read_leb(c, false, &len);

	if (!err)
		err = take(c, len, &skip);
	if (err)
		return err;
	d.pos = c->pos - len;
	d.size = c->pos;
	for (; *aug && !err; aug++) {
		switch (*aug) {
		case 'R':
			err = read_u8(&d, &cie->fde_enc);
			break;
		case 'L':
			err = read_u8(&d, &enc);
			break;
		case 'P':
			/* Only skipped: its base does not matter, only its size. */
			err = read_u8(&d, &enc);
			/* DW_EH_PE_aligned: its padding depends on where the CIE is loaded. */
			if (!err && (enc & PE_APPLY) == PE_ALIGNED)
				err = -EOPNOTSUPP;
			if (!err)
				err = read_value(&d, enc, addr_size, &v);
			break;
		case 'S':
			cie->signal_frame = true;
			break;
		case 'B': /* AArch64 pointer authentication with the B key */
		case 'G': /* AArch64 memory tagging */
			break;
		default:
			/* Unknown from here on; the length skips whatever it is. */
			return 0;
		}
	}
	return err;
}

/* The CIE at off in .eh_frame. */
static int parse_cie(const struct eh_frame_hdr *h, size_t off, struct cie *cie)
{
	struct cursor c = {h->sec.eh_frame, h->sec.eh_frame_size, off, h->sec.eh_frame_vaddr};
	const uint8_t *skip;
	const char *aug;
	uint64_t id, ra;
	size_t end, id_pos, aug_len;
	uint8_t version, u8;
	int err;

	*cie = (struct cie){.fde_enc = PE_ABSPTR};
	err = read_entry_start(&c, &end, &id, &id_pos);
	if (err)
		return err == -ENOENT ? -EINVAL : err;
	if (id != 0)
		return -EINVAL;
	err = read_u8(&c, &version);
	if (err)
		return err;
	if (version != 1 && version != 3 && version != 4)
		return -EOPNOTSUPP;
	aug = (const char *)c.p + c.pos;
	aug_len = strnlen(aug, end - c.pos);
	if (aug_len == end - c.pos)
		return -EINVAL;
	c.pos += aug_len + 1;
	/* GCC before 3.0: "eh" and a pointer to the exception table. */
	if (aug[0] == 'e' && aug[1] == 'h') {
		err = take(&c, h->sec.addr_size, &skip);
		aug += 2;
	}
	if (!err && version == 4) /* address size and segment selector size */
		err = take(&c, 2, &skip);
	if (!err)
		err = read_leb(&c, false, &cie->code_align);
	if (!err)
		err = read_leb(&c, true, (uint64_t *)&cie->data_align);
	if (!err && version == 1) {
		err = read_u8(&c, &u8);
		ra = u8;
	} else if (!err) {
		err = read_leb(&c, false, &ra);
	}
	if (err)
		return err;
	cie->ra_column = ra;
	if (aug[0] == 'z') {
		cie->has_aug_data = true;
		err = read_augmentation(&c, aug + 1, h->sec.addr_size, cie);
	} else if (aug[0]) {
		/* Without 'z' nothing says how long the unknown data is. */
		err = -EOPNOTSUPP;
	}
	if (err)
		return err;
	cie->insns = c.p + c.pos;
	cie->insns_size = end - c.pos;
	return 0;
}

/* The FDE at vaddr (inside .eh_frame), with its CIE. */
static int parse_fde(const struct eh_frame_hdr *h, uint64_t vaddr, struct eh_frame_fde *out)
{
	struct bases b = {h->sec.addr_size, h->sec.has_data_base, h->sec.data_base};
	struct cursor c = {h->sec.eh_frame, h->sec.eh_frame_size, 0, h->sec.eh_frame_vaddr};
	const uint8_t *skip;
	uint64_t id, aug_len;
	size_t end, id_pos;
	struct cie cie;
	int err;

	if (vaddr < c.vaddr || vaddr - c.vaddr >= c.size)
		return -EINVAL;
	c.pos = vaddr - c.vaddr;
	err = read_entry_start(&c, &end, &id, &id_pos);
	if (err)
		return err == -ENOENT ? -EINVAL : err;
	if (id == 0 || id > id_pos)
		return -EINVAL;
	err = parse_cie(h, id_pos - id, &cie);
	if (!err)
		err = read_pointer(&c, cie.fde_enc, &b, &out->pc_begin);
	/* The range is a size: the encoding's format without its base. */
	if (!err)
		err = read_value(&c, cie.fde_enc, b.addr_size, &out->pc_range);
	if (!err && cie.has_aug_data) {
		err = read_leb(&c, false, &aug_len);
		if (!err)
			err = take(&c, aug_len, &skip);
	}
	if (err)
		return err;
	out->pc_range = to_addr_size(out->pc_range, b.addr_size);
	if (out->pc_range > to_addr_size(~0ull, b.addr_size) - out->pc_begin)
		return -EINVAL;
	out->vaddr = vaddr;
	out->cie_insns = cie.insns;
	out->cie_insns_size = cie.insns_size;
	out->insns = c.p + c.pos;
	out->insns_size = end - c.pos;
	out->code_align = cie.code_align;
	out->data_align = cie.data_align;
	out->ra_column = cie.ra_column;
	out->signal_frame = cie.signal_frame;
	return 0;
}

/* Table entry i: the function's first address and its FDE's address. */
static int table_entry(const struct eh_frame_hdr *h, size_t i, uint64_t *loc, uint64_t *fde)
{
	struct bases b = {h->sec.addr_size, true, h->sec.hdr_vaddr};
	struct cursor c = {h->sec.hdr, h->sec.hdr_size, h->table_off + 2 * i * h->field_size,
			   h->sec.hdr_vaddr};
	int err = read_pointer(&c, h->table_enc, &b, loc);

	return err ? err : read_pointer(&c, h->table_enc, &b, fde);
}

static int parse_header(struct eh_frame_hdr *h)
{
	struct bases b = {h->sec.addr_size, true, h->sec.hdr_vaddr};
	struct cursor c = {h->sec.hdr, h->sec.hdr_size, 0, h->sec.hdr_vaddr};
	uint8_t version, ptr_enc, count_enc;
	uint64_t count;
	int err;

	err = read_u8(&c, &version);
	if (!err)
		err = read_u8(&c, &ptr_enc);
	if (!err)
		err = read_u8(&c, &count_enc);
	if (!err)
		err = read_u8(&c, &h->table_enc);
	if (err)
		return err;
	if (version != 1)
		return -EOPNOTSUPP;
	err = read_pointer(&c, ptr_enc, &b, &h->eh_frame_ptr);
	if (err)
		return err;
	if (count_enc == PE_OMIT || h->table_enc == PE_OMIT)
		return -ENOENT;
	err = read_pointer(&c, count_enc, &b, &count);
	if (err)
		return err;
	/* A binary search needs entries of one size: no LEB128. */
	h->field_size = value_size(h->table_enc, h->sec.addr_size);
	if (!h->field_size || (h->table_enc & PE_INDIRECT))
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

size_t eh_frame_hdr__count(const struct eh_frame_hdr *h)
{
	return h ? h->count : 0;
}

int eh_frame_hdr__fde(const struct eh_frame_hdr *h, size_t i, struct eh_frame_fde *out)
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

int eh_frame_hdr__find(const struct eh_frame_hdr *h, uint64_t vaddr, struct eh_frame_fde *out)
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

/* ELF program headers, ELF32 or ELF64, in a file image. */
struct elf_image {
	const uint8_t *p;
	size_t size;
	uint8_t addr_size;
	uint64_t phoff;
	size_t phnum;
	size_t phentsize;
};

struct segment {
	uint32_t type;
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

static int read_elf_header(const void *image, size_t size, struct elf_image *img)
{
	const uint8_t *id = image;
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;

	if (!image || size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (id[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB))
		return -EOPNOTSUPP;
	if (id[EI_CLASS] == ELFCLASS64 && size >= sizeof(e64)) {
		memcpy(&e64, image, sizeof(e64));
		*img = (struct elf_image){image,       size,	    8,
					  e64.e_phoff, e64.e_phnum, e64.e_phentsize};
		if (img->phentsize < sizeof(Elf64_Phdr))
			return -ENOEXEC;
	} else if (id[EI_CLASS] == ELFCLASS32 && size >= sizeof(e32)) {
		memcpy(&e32, image, sizeof(e32));
		*img = (struct elf_image){image,       size,	    4,
					  e32.e_phoff, e32.e_phnum, e32.e_phentsize};
		if (img->phentsize < sizeof(Elf32_Phdr))
			return -ENOEXEC;
	} else {
		return -ENOEXEC;
	}
	/* PN_XNUM: the count is in section 0, which a memory image need not have. */
	if (img->phnum == PN_XNUM)
		return -EOPNOTSUPP;
	if (img->phoff > size || img->phnum * img->phentsize > size - img->phoff)
		return -ENOEXEC;
	return 0;
}

static void read_segment(const struct elf_image *img, size_t i, struct segment *s)
{
	const uint8_t *ph = img->p + img->phoff + i * img->phentsize;
	Elf64_Phdr p64;
	Elf32_Phdr p32;

	if (img->addr_size == 8) {
		memcpy(&p64, ph, sizeof(p64));
		*s = (struct segment){p64.p_type, p64.p_offset, p64.p_vaddr, p64.p_filesz};
	} else {
		memcpy(&p32, ph, sizeof(p32));
		*s = (struct segment){p32.p_type, p32.p_offset, p32.p_vaddr, p32.p_filesz};
	}
}

/* The bytes of the file image at vaddr up to the end of the PT_LOAD segment holding them. */
static int find_loaded(const struct elf_image *img, uint64_t vaddr, const uint8_t **p, size_t *size)
{
	struct segment s;
	uint64_t off;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		read_segment(img, i, &s);
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
	struct segment s;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		read_segment(img, i, &s);
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
	err = read_elf_header(image, size, &img);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sec.addr_size = img.addr_size;
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
