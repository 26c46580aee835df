/* SPDX-License-Identifier: MIT */
/*
 * Bounded reads of DWARF-encoded values (fixed-size integers, LEB128, the
 * DW_EH_PE_* pointer encodings of .eh_frame) from bytes that come from the
 * programs being profiled. Every read checks the bounds of the cursor, so
 * no length or offset in the input can send a read outside them; a failed
 * read is -EINVAL and leaves nothing half-read to use.
 *
 * Integers are read in the machine's own byte order: cprof reads the CFI
 * of the programs it runs beside.
 */
#ifndef CPROF_DWARF_CURSOR_H
#define CPROF_DWARF_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DW_EH_PE_*: the low nibble is the value's format, the next three bits its base. */
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_signed	  0x08
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_aligned  0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit	  0xff
#define DW_EH_PE_FORMAT	  0x0f
#define DW_EH_PE_APPLY	  0x70

/* Bytes p[0..size) loaded at vaddr, read from pos on. */
struct dwarf_cursor {
	const uint8_t *p;
	size_t size;
	size_t pos;
	uint64_t vaddr;
};

/* What a DW_EH_PE_* pointer may be relative to. */
struct dwarf_bases {
	uint8_t addr_size; /* 4 or 8: the size of a DW_EH_PE_absptr */
	bool has_data;
	uint64_t data; /* DW_EH_PE_datarel's base (the GOT on i386) */
};

/* The next n bytes, in place. */
int dwarf_cursor__take(struct dwarf_cursor *c, size_t n, const uint8_t **out);
int dwarf_cursor__u8(struct dwarf_cursor *c, uint8_t *v);
/* An n-byte (1, 2, 4 or 8) integer, zero- or sign-extended. */
int dwarf_cursor__int(struct dwarf_cursor *c, size_t n, bool is_signed, uint64_t *v);
/* LEB128; bits past the 64th are dropped, as no address or size has them. */
int dwarf_cursor__leb(struct dwarf_cursor *c, bool is_signed, uint64_t *v);
/* A value in the format of enc's low nibble, without its base; -EOPNOTSUPP for an unknown format.
 */
int dwarf_cursor__value(struct dwarf_cursor *c, uint8_t enc, uint8_t addr_size, uint64_t *v);
/*
 * A pointer encoded as enc: absolute, relative to its own address (pcrel)
 * or to the data base (datarel). Indirect pointers would need the memory
 * they point to, and the text- and function-relative bases are unused on
 * Linux: all -EOPNOTSUPP, as is DW_EH_PE_omit.
 */
int dwarf_cursor__pointer(struct dwarf_cursor *c, uint8_t enc, const struct dwarf_bases *b,
			  uint64_t *v);
/* Size of a value in the format of enc, or 0 when it varies (LEB128) or is unknown. */
size_t dwarf_value_size(uint8_t enc, uint8_t addr_size);
/* v cut to an address of addr_size bytes. */
uint64_t dwarf_to_addr_size(uint64_t v, uint8_t addr_size);

#endif
