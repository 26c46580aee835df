// SPDX-License-Identifier: MIT
/*
 * CIE and FDE readers for .eh_frame and .debug_frame; see cfi_entries.h.
 * Each entry starts with a 32-bit length (0xffffffff: a 64-bit length
 * follows) and an ID:
 *   .eh_frame:    ID 0 is a CIE; an FDE's ID is the distance back from the
 *                 ID itself to its CIE; the ID has 4 bytes even after a
 *                 64-bit length; a zero length ends the section.
 *   .debug_frame: ID 0xffffffff (0xffffffffffffffff after a 64-bit length)
 *                 is a CIE; an FDE's ID is its CIE's offset in the section.
 */
#include <errno.h>
#include <string.h>

#include "unwind/cfi_entries.h"

/* What an FDE needs from its CIE. */
struct cie {
	uint8_t fde_enc;
	uint8_t lsda_enc; /* 'L': its FDEs point to their LSDA; DW_EH_PE_omit if not */
	uint8_t addr_size;
	bool has_aug_data; /* 'z': FDEs carry an augmentation data length */
	bool signal_frame;
	bool pauth_b_key;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
	const uint8_t *insns;
	size_t insns_size;
	uint64_t insns_vaddr;
};

struct entry {
	size_t end;    /* offset of the next entry */
	size_t id_pos; /* offset of the ID */
	uint64_t id;
	bool is_cie;
};

static struct dwarf_cursor section_cursor(const struct cfi_section *s, uint64_t off)
{
	return (struct dwarf_cursor){s->data, s->size, off, s->vaddr};
}

/*
 * The entry's length and ID; the cursor is then bounded by the entry.
 * -ENOENT for the .eh_frame terminator (and a zero length in .debug_frame:
 * the caller skips it).
 */
static int read_entry(const struct cfi_section *s, struct dwarf_cursor *c, struct entry *e)
{
	bool is64 = false;
	uint64_t len;
	int err = dwarf_cursor__int(c, 4, false, &len);

	if (err)
		return err;
	if (!len) {
		e->end = c->pos;
		return -ENOENT;
	}
	if (len == 0xffffffff) {
		is64 = true;
		err = dwarf_cursor__int(c, 8, false, &len);
		if (err)
			return err;
	}
	if (len > c->size - c->pos)
		return -EINVAL;
	e->end = c->pos + len;
	c->size = e->end;
	e->id_pos = c->pos;
	if (s->format == CFI_EH_FRAME) {
		err = dwarf_cursor__int(c, 4, false, &e->id);
		e->is_cie = !err && e->id == 0;
	} else {
		err = dwarf_cursor__int(c, is64 ? 8 : 4, false, &e->id);
		e->is_cie = !err && e->id == (is64 ? ~0ull : 0xffffffffull);
	}
	return err;
}

/*
 * The augmentation data that the letters announce, in their order. After
 * 'z' the data has a length: a letter it does not know ends the reading,
 * the length skips the rest. Without 'z' the data follows in place, so an
 * unknown letter leaves no way to find the instructions; but a CIE of
 * letters it knows is readable: GNU as writes "S" into the .debug_frame
 * CIE of a signal frame (.cfi_signal_frame), with no 'z'.
 */
static int read_augmentation(struct dwarf_cursor *c, const char *aug, struct cie *cie)
{
	struct dwarf_cursor d = *c;
	const uint8_t *skip;
	uint64_t len, v;
	uint8_t enc;
	int err = 0;

	cie->has_aug_data = aug[0] == 'z';
	if (cie->has_aug_data) {
		err = dwarf_cursor__leb(c, false, &len);
		if (!err)
			err = dwarf_cursor__take(c, len, &skip);
		if (err)
			return err;
		d.pos = c->pos - len;
		d.size = c->pos;
		aug++;
	}
	for (; *aug && !err; aug++) {
		switch (*aug) {
		case 'R':
			err = dwarf_cursor__u8(&d, &cie->fde_enc);
			break;
		case 'L':
			err = dwarf_cursor__u8(&d, &cie->lsda_enc);
			break;
		case 'P':
			/* Only skipped: its base does not matter, only its size. */
			err = dwarf_cursor__u8(&d, &enc);
			/* DW_EH_PE_aligned: its padding depends on where the CIE is loaded. */
			if (!err && (enc & DW_EH_PE_APPLY) == DW_EH_PE_aligned)
				err = -EOPNOTSUPP;
			if (!err)
				err = dwarf_cursor__value(&d, enc, cie->addr_size, &v);
			break;
		case 'S':
			cie->signal_frame = true;
			break;
		case 'B': /* AArch64 pointer authentication with the B key */
			cie->pauth_b_key = true;
			break;
		case 'G': /* AArch64 memory tagging */
			break;
		default:
			/* Unknown from here on: a length skips whatever it is. */
			return cie->has_aug_data ? 0 : -EOPNOTSUPP;
		}
	}
	if (!cie->has_aug_data)
		c->pos = d.pos;
	return err;
}

/* From the version to the return-address column. */
static int read_cie_fields(const struct cfi_section *s, struct dwarf_cursor *c, size_t end,
			   struct cie *cie, const char **aug_out)
{
	const uint8_t *skip;
	const char *aug;
	uint8_t version, u8, seg_size;
	size_t aug_len;
	uint64_t ra = 0;
	int err = dwarf_cursor__u8(c, &version);

	if (err)
		return err;
	if (version != 1 && version != 3 && version != 4)
		return -EOPNOTSUPP;
	aug = (const char *)c->p + c->pos;
	aug_len = strnlen(aug, end - c->pos);
	if (aug_len == end - c->pos)
		return -EINVAL;
	c->pos += aug_len + 1;
	/* GCC before 3.0: "eh" and a pointer to the exception table. */
	if (aug[0] == 'e' && aug[1] == 'h') {
		err = dwarf_cursor__take(c, s->bases.addr_size, &skip);
		aug += 2;
	}
	if (!err && version == 4) {
		err = dwarf_cursor__u8(c, &cie->addr_size);
		if (!err)
			err = dwarf_cursor__u8(c, &seg_size);
		if (!err && (seg_size || (cie->addr_size != 4 && cie->addr_size != 8)))
			err = -EOPNOTSUPP;
	}
	if (!err)
		err = dwarf_cursor__leb(c, false, &cie->code_align);
	if (!err)
		err = dwarf_cursor__leb(c, true, (uint64_t *)&cie->data_align);
	if (!err && version == 1) {
		err = dwarf_cursor__u8(c, &u8);
		ra = u8;
	} else if (!err) {
		err = dwarf_cursor__leb(c, false, &ra);
	}
	cie->ra_column = ra;
	*aug_out = aug;
	return err;
}

static int parse_cie(const struct cfi_section *s, uint64_t off, struct cie *cie)
{
	struct dwarf_cursor c = section_cursor(s, off);
	const char *aug;
	struct entry e;
	int err;

	*cie = (struct cie){
		.fde_enc = DW_EH_PE_absptr,
		.lsda_enc = DW_EH_PE_omit,
		.addr_size = s->bases.addr_size,
	};
	if (off >= s->size)
		return -EINVAL;
	err = read_entry(s, &c, &e);
	if (err)
		return err == -ENOENT ? -EINVAL : err;
	if (!e.is_cie)
		return -EINVAL;
	err = read_cie_fields(s, &c, e.end, cie, &aug);
	if (err)
		return err;
	err = read_augmentation(&c, aug, cie);
	if (err)
		return err;
	cie->insns = c.p + c.pos;
	cie->insns_size = e.end - c.pos;
	cie->insns_vaddr = c.vaddr + c.pos;
	return 0;
}

static uint64_t cie_offset(const struct cfi_section *s, const struct entry *e)
{
	if (s->format == CFI_EH_FRAME)
		return e->id <= e->id_pos ? e->id_pos - e->id : UINT64_MAX;
	return e->id;
}

static int parse_fde(const struct cfi_section *s, struct dwarf_cursor *c, const struct entry *e,
		     struct cfi_fde *out)
{
	struct dwarf_bases b = s->bases;
	const uint8_t *skip;
	uint64_t aug_len, coff = cie_offset(s, e);
	struct cie cie;
	int err;

	/* A CIE that points at the entry itself would be no CIE. */
	if (coff >= s->size || coff == e->id_pos)
		return -EINVAL;
	err = parse_cie(s, coff, &cie);
	if (err)
		return err;
	b.addr_size = cie.addr_size;
	err = dwarf_cursor__pointer(c, cie.fde_enc, &b, &out->pc_begin);
	/* The range is a size: the encoding's format without its base. */
	if (!err)
		err = dwarf_cursor__value(c, cie.fde_enc, b.addr_size, &out->pc_range);
	if (!err && cie.has_aug_data) {
		err = dwarf_cursor__leb(c, false, &aug_len);
		if (!err)
			err = dwarf_cursor__take(c, aug_len, &skip);
	} else if (!err && cie.lsda_enc != DW_EH_PE_omit) {
		/* No 'z': the LSDA pointer is there without a length before it. */
		err = dwarf_cursor__value(c, cie.lsda_enc, b.addr_size, &aug_len);
	}
	if (err)
		return err;
	out->pc_range = dwarf_to_addr_size(out->pc_range, b.addr_size);
	if (out->pc_range > dwarf_to_addr_size(~0ull, b.addr_size) - out->pc_begin)
		return -EINVAL;
	out->cie_insns = cie.insns;
	out->cie_insns_size = cie.insns_size;
	out->cie_insns_vaddr = cie.insns_vaddr;
	out->insns = c->p + c->pos;
	out->insns_size = e->end - c->pos;
	out->insns_vaddr = c->vaddr + c->pos;
	out->code_align = cie.code_align;
	out->data_align = cie.data_align;
	out->ra_column = cie.ra_column;
	out->addr_enc = cie.fde_enc;
	out->addr_size = b.addr_size;
	out->signal_frame = cie.signal_frame;
	out->pauth_b_key = cie.pauth_b_key;
	return 0;
}

int cfi_section__fde_at(const struct cfi_section *s, uint64_t off, struct cfi_fde *out)
{
	struct dwarf_cursor c = section_cursor(s, off);
	struct entry e;
	int err;

	if (off >= s->size)
		return -EINVAL;
	err = read_entry(s, &c, &e);
	if (err)
		return err;
	if (e.is_cie)
		return -ENOENT;
	out->vaddr = s->vaddr + off;
	return parse_fde(s, &c, &e, out);
}

int cfi_section__next(const struct cfi_section *s, uint64_t *off, struct cfi_fde *out)
{
	struct dwarf_cursor c;
	struct entry e;
	int err;

	while (*off < s->size) {
		c = section_cursor(s, *off);
		e = (struct entry){0};
		err = read_entry(s, &c, &e);
		if (err == -ENOENT && s->format == CFI_DEBUG_FRAME) {
			*off = e.end; /* padding */
			continue;
		}
		if (err == -ENOENT) {
			*off = s->size;
			return err;
		}
		if (err) {
			/* Past the entry if its length was good; else nothing after it can be
			 * trusted. */
			*off = e.end ? e.end : s->size;
			return err;
		}
		out->vaddr = s->vaddr + *off;
		*off = e.end;
		if (!e.is_cie)
			return parse_fde(s, &c, &e, out);
	}
	return -ENOENT;
}
