// SPDX-License-Identifier: MIT
/* Bounded reads of DWARF-encoded values; see dwarf_cursor.h. */
#include <errno.h>
#include <string.h>

#include "lib/dwarf_cursor.h"

/* An unsigned LEB128 of more bytes than this holds no 64-bit value. */
#define MAX_LEB_BYTES 10

int dwarf_cursor__take(struct dwarf_cursor *c, size_t n, const uint8_t **out)
{
	if (c->pos > c->size || n > c->size - c->pos)
		return -EINVAL;
	*out = c->p + c->pos;
	c->pos += n;
	return 0;
}

int dwarf_cursor__u8(struct dwarf_cursor *c, uint8_t *v)
{
	const uint8_t *b;
	int err = dwarf_cursor__take(c, 1, &b);

	if (!err)
		*v = *b;
	return err;
}

int dwarf_cursor__int(struct dwarf_cursor *c, size_t n, bool is_signed, uint64_t *v)
{
	const uint8_t *b;
	uint16_t u16;
	uint32_t u32;
	int err;

	if (n != 1 && n != 2 && n != 4 && n != 8)
		return -EINVAL;
	err = dwarf_cursor__take(c, n, &b);
	if (err)
		return err;
	switch (n) {
	case 1:
		*v = is_signed ? (uint64_t)(int64_t)(int8_t)b[0] : b[0];
		break;
	case 2:
		memcpy(&u16, b, 2);
		*v = is_signed ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		break;
	case 4:
		memcpy(&u32, b, 4);
		*v = is_signed ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		break;
	default:
		memcpy(v, b, 8);
	}
	return 0;
}

int dwarf_cursor__leb(struct dwarf_cursor *c, bool is_signed, uint64_t *v)
{
	unsigned int shift = 0, i;
	uint64_t r = 0;
	uint8_t b = 0x80;

	for (i = 0; b & 0x80; i++) {
		if (i == MAX_LEB_BYTES || dwarf_cursor__u8(c, &b))
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

int dwarf_cursor__value(struct dwarf_cursor *c, uint8_t enc, uint8_t addr_size, uint64_t *v)
{
	switch (enc & DW_EH_PE_FORMAT) {
	case DW_EH_PE_absptr:
		return dwarf_cursor__int(c, addr_size, false, v);
	case DW_EH_PE_signed:
		return dwarf_cursor__int(c, addr_size, true, v);
	case DW_EH_PE_uleb128:
		return dwarf_cursor__leb(c, false, v);
	case DW_EH_PE_sleb128:
		return dwarf_cursor__leb(c, true, v);
	case DW_EH_PE_udata2:
		return dwarf_cursor__int(c, 2, false, v);
	case DW_EH_PE_sdata2:
		return dwarf_cursor__int(c, 2, true, v);
	case DW_EH_PE_udata4:
		return dwarf_cursor__int(c, 4, false, v);
	case DW_EH_PE_sdata4:
		return dwarf_cursor__int(c, 4, true, v);
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return dwarf_cursor__int(c, 8, false, v);
	}
	return -EOPNOTSUPP;
}

size_t dwarf_value_size(uint8_t enc, uint8_t addr_size)
{
	switch (enc & DW_EH_PE_FORMAT) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_signed:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	}
	return 0;
}

uint64_t dwarf_to_addr_size(uint64_t v, uint8_t addr_size)
{
	return addr_size == 4 ? (uint32_t)v : v;
}

int dwarf_cursor__pointer(struct dwarf_cursor *c, uint8_t enc, const struct dwarf_bases *b,
			  uint64_t *v)
{
	uint64_t base, at = c->vaddr + c->pos;
	int err;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -EOPNOTSUPP;
	switch (enc & DW_EH_PE_APPLY) {
	case DW_EH_PE_absptr:
		base = 0;
		break;
	case DW_EH_PE_pcrel:
		base = at;
		break;
	case DW_EH_PE_datarel:
		if (!b->has_data)
			return -EOPNOTSUPP;
		base = b->data;
		break;
	default:
		return -EOPNOTSUPP;
	}
	err = dwarf_cursor__value(c, enc, b->addr_size, v);
	if (!err)
		*v = dwarf_to_addr_size(*v + base, b->addr_size);
	return err;
}
