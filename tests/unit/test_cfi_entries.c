// SPDX-License-Identifier: MIT
/*
 * The CIE and FDE reader (src/unwind/cfi_entries.c) on sections built here:
 * .eh_frame with each pointer encoding an FDE may use (pcrel, datarel,
 * absolute; 2-, 4-, 8-byte and LEB128; 32- and 64-bit addresses) and each
 * augmentation ('z', 'R', 'P', 'L', 'S', 'B', 'G', "eh", unknown letters
 * with and without 'z'); .debug_frame with CIE versions 1, 3 and 4 and
 * 32- and 64-bit lengths; and damage: a zero terminator, a length that
 * runs past the section (iteration stops), a corrupt entry whose length can
 * be trusted (iteration skips it and goes on), every byte changed and every
 * prefix (no crash, every answer inside the section). Sections are
 * exact-size heap copies, so ASan sees any read past them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/cfi_program.h"

#define VADDR	  0x200000 /* where the .eh_frame built here is loaded */
#define DATA_BASE 0x300000 /* DW_EH_PE_datarel's base */

struct sec {
	uint8_t b[4096];
	size_t n;
	enum cfi_format fmt;
	bool dwarf64;	   /* 64-bit entry lengths */
	uint8_t addr_size; /* the section's (the file's) address size */
};

struct cie_spec {
	uint8_t version;	     /* 1, 3 or 4; 0 means 1 */
	const char *aug;	     /* the augmentation string */
	uint8_t fde_enc;	     /* 'R' */
	uint8_t lsda_enc;	     /* 'L' */
	uint8_t pers_enc;	     /* 'P'; 0 means pcrel sdata4 */
	uint8_t addr_size, seg_size; /* version 4's fields; addr_size 0 means the section's */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	const char *insns;
	size_t insns_size;
};

static void put(struct sec *s, const void *p, size_t n)
{
	CHECK_INT(s->n + n, <=, sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put_u8(struct sec *s, uint8_t v)
{
	put(s, &v, 1);
}

static void put_u32(struct sec *s, uint32_t v)
{
	put(s, &v, 4);
}

static void put_u64(struct sec *s, uint64_t v)
{
	put(s, &v, 8);
}

static void put_leb(struct sec *s, uint64_t v, bool is_signed)
{
	for (;;) {
		uint8_t byte = v & 0x7f;
		bool done = is_signed ? ((int64_t)v >> 6 == 0 || (int64_t)v >> 6 == -1) : v < 0x80;

		v = is_signed ? (uint64_t)((int64_t)v >> 7) : v >> 7;
		if (done) {
			put_u8(s, byte);
			return;
		}
		put_u8(s, byte | 0x80);
	}
}

/* A value in the format of enc's low nibble. */
static void put_value(struct sec *s, uint8_t enc, uint8_t addr_size, uint64_t v)
{
	uint16_t u16 = (uint16_t)v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_signed:
		if (addr_size == 4)
			put_u32(s, (uint32_t)v);
		else
			put_u64(s, v);
		return;
	case DW_EH_PE_uleb128:
		put_leb(s, v, false);
		return;
	case DW_EH_PE_sleb128:
		put_leb(s, v, true);
		return;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		put(s, &u16, 2);
		return;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		put_u32(s, (uint32_t)v);
		return;
	}
	put_u64(s, v);
}

/* A pointer to target encoded as enc: pcrel from its own address, datarel from DATA_BASE. */
static void put_ptr(struct sec *s, uint8_t enc, uint8_t addr_size, uint64_t target)
{
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		target -= VADDR + s->n;
	else if ((enc & 0x70) == DW_EH_PE_datarel)
		target -= DATA_BASE;
	put_value(s, enc, addr_size, target);
}

/* An entry's length, filled in by end_entry. */
static size_t begin_entry(struct sec *s)
{
	size_t at;

	if (s->dwarf64)
		put_u32(s, 0xffffffff);
	at = s->n;
	if (s->dwarf64)
		put_u64(s, 0);
	else
		put_u32(s, 0);
	return at;
}

static void end_entry(struct sec *s, size_t at)
{
	size_t field = s->dwarf64 ? 8 : 4;
	uint64_t len = s->n - at - field;
	uint32_t len32 = (uint32_t)len;

	if (s->dwarf64)
		memcpy(s->b + at, &len, 8);
	else
		memcpy(s->b + at, &len32, 4);
}

static uint8_t cie_addr_size(const struct sec *s, const struct cie_spec *c)
{
	return c->version == 4 && c->addr_size ? c->addr_size : s->addr_size;
}

/* The augmentation data its letters announce, in their order. */
static void put_aug_data(struct sec *s, const struct cie_spec *c, const char *a)
{
	uint8_t pers = c->pers_enc ? c->pers_enc : DW_EH_PE_pcrel | DW_EH_PE_sdata4;

	for (; *a; a++) {
		if (*a == 'R') {
			put_u8(s, c->fde_enc);
		} else if (*a == 'L') {
			put_u8(s, c->lsda_enc);
		} else if (*a == 'P') {
			put_u8(s, pers);
			put_ptr(s, pers, cie_addr_size(s, c), 0x5000);
		} else if (*a == 'X') {
			put(s, "\xde\xad", 2); /* what an unknown letter might have */
		}
	}
}

/* Returns the CIE's offset. */
static size_t put_cie(struct sec *s, const struct cie_spec *c)
{
	size_t off = s->n, at = begin_entry(s), len_at;
	const char *aug = c->aug ? c->aug : "";
	uint8_t version = c->version ? c->version : 1;

	if (s->fmt == CFI_EH_FRAME)
		put_u32(s, 0);
	else if (s->dwarf64)
		put_u64(s, ~0ull);
	else
		put_u32(s, 0xffffffff);
	put_u8(s, version);
	put(s, aug, strlen(aug) + 1);
	if (aug[0] == 'e' && aug[1] == 'h')
		put_value(s, DW_EH_PE_absptr, s->addr_size, 0x7000);
	if (version == 4) {
		put_u8(s, c->addr_size ? c->addr_size : s->addr_size);
		put_u8(s, c->seg_size);
	}
	put_leb(s, c->code_align ? c->code_align : 1, false);
	put_leb(s, (uint64_t)(c->data_align ? c->data_align : -8), true);
	if (version == 1)
		put_u8(s, (uint8_t)c->ra);
	else
		put_leb(s, c->ra, false);
	if (aug[0] == 'z') {
		put_u8(s, 0); /* the data's length, patched below (< 128) */
		len_at = s->n;
		put_aug_data(s, c, aug + 1);
		s->b[len_at - 1] = (uint8_t)(s->n - len_at);
	} else {
		put_aug_data(s, c, aug);
	}
	put(s, c->insns, c->insns_size);
	end_entry(s, at);
	return off;
}

/* An FDE of the CIE at cie_off (built from c) for [begin, begin + range); returns its offset. */
static size_t put_fde(struct sec *s, size_t cie_off, const struct cie_spec *c, uint64_t begin,
		      uint64_t range, const char *insns, size_t size)
{
	size_t off = s->n, at = begin_entry(s), len_at;
	const char *aug = c->aug ? c->aug : "";
	uint8_t enc = strchr(aug, 'R') ? c->fde_enc : DW_EH_PE_absptr;
	uint8_t addr_size = cie_addr_size(s, c);

	if (s->fmt == CFI_EH_FRAME)
		put_u32(s, (uint32_t)(s->n - cie_off));
	else if (s->dwarf64)
		put_u64(s, cie_off);
	else
		put_u32(s, (uint32_t)cie_off);
	put_ptr(s, enc, addr_size, begin);
	put_value(s, enc, addr_size, range);
	if (aug[0] == 'z') {
		put_u8(s, 0);
		len_at = s->n;
		if (strchr(aug, 'L'))
			put_ptr(s, c->lsda_enc, addr_size, 0x6000);
		s->b[len_at - 1] = (uint8_t)(s->n - len_at);
	} else if (strchr(aug, 'L')) {
		put_ptr(s, c->lsda_enc, addr_size, 0x6000);
	}
	put(s, insns, size);
	end_entry(s, at);
	return off;
}

static void sec_init(struct sec *s, enum cfi_format fmt, bool dwarf64, uint8_t addr_size)
{
	memset(s, 0, sizeof(*s));
	s->fmt = fmt;
	s->dwarf64 = dwarf64;
	s->addr_size = addr_size;
}

/* An exact-size copy of the bytes, as cfi_section__next reads it. */
static struct cfi_section sec_open(const struct sec *s, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	CHECK(copy);
	memcpy(copy, s->b, size);
	return (struct cfi_section){
		.format = s->fmt,
		.data = copy,
		.size = size,
		.vaddr = s->fmt == CFI_EH_FRAME ? VADDR : 0,
		.bases = {.addr_size = s->addr_size, .has_data = true, .data = DATA_BASE},
	};
}

static void sec_close(struct cfi_section *cs)
{
	free((void *)cs->data);
}

/* What cfi_section__next said, call by call. */
struct walk {
	int err[64];
	struct cfi_fde fde[64];
	uint64_t off[64]; /* *off after the call */
	size_t n;
};

/* Rows contiguous over the FDE: what any FDE it hands out must give the interpreter. */
static int check_row(const struct cfi_row *row, void *arg)
{
	uint64_t *next = arg;

	if (row->begin != *next || row->end <= row->begin)
		abort();
	*next = row->end;
	return 0;
}

/* Every answer, until -ENOENT; each call must move on; each FDE must lie inside the section. */
static void walk(const struct cfi_section *cs, struct walk *w)
{
	struct cfi_program *cp;
	uint64_t off = 0, prev, next;
	struct cfi_fde fde;
	int err;

	CHECK_INT(cfi_program__new(CFI_ARCH_X86_64, &cp), ==, 0);
	w->n = 0;
	for (;;) {
		prev = off;
		memset(&fde, 0, sizeof(fde));
		err = cfi_section__next(cs, &off, &fde);
		if (err == -ENOENT)
			break;
		CHECK_U64(off, >, prev);
		CHECK_U64(off, <=, cs->size);
		if (w->n < 64) {
			w->err[w->n] = err;
			w->fde[w->n] = fde;
			w->off[w->n] = off;
		}
		w->n++;
		if (err)
			continue;
		CHECK(fde.insns >= cs->data && fde.insns + fde.insns_size <= cs->data + cs->size);
		CHECK(fde.cie_insns >= cs->data &&
		      fde.cie_insns + fde.cie_insns_size <= cs->data + cs->size);
		CHECK_U64(fde.insns_vaddr, ==, cs->vaddr + (uint64_t)(fde.insns - cs->data));
		CHECK_U64(fde.pc_range, <=,
			  dwarf_to_addr_size(~0ull, fde.addr_size) - fde.pc_begin);
		next = fde.pc_begin;
		CHECK_INT(cfi_program__run(cp, &fde, check_row, &next), ==, 0);
		if (fde.pc_range)
			CHECK_U64(next, ==, fde.pc_begin + fde.pc_range);
	}
	CHECK_U64(off, ==, cs->size);
	cfi_program__free(cp);
}

static const struct cie_spec x86_zr = {
	.aug = "zR",
	.fde_enc = DW_EH_PE_pcrel | DW_EH_PE_sdata4,
	.ra = 16,
	.insns = "\x0c\x07\x08\x90\x01",
	.insns_size = 5,
};

/* What GNU ld writes: one CIE, FDEs with pcrel sdata4 addresses, the terminator. */
TEST(cfi_entries_eh_frame_fields)
{
	struct cfi_section cs;
	struct cfi_fde fde;
	struct walk w;
	struct sec s;
	size_t cie, f1, f2, term;

	sec_init(&s, CFI_EH_FRAME, false, 8);
	cie = put_cie(&s, &x86_zr);
	f1 = put_fde(&s, cie, &x86_zr, 0x1000, 0x40, "\x41\x0e\x10", 3);
	f2 = put_fde(&s, cie, &x86_zr, 0x2000, 0x10, "", 0);
	term = s.n;
	put_u32(&s, 0);
	/* Past the terminator: not read. */
	put_fde(&s, cie, &x86_zr, 0x3000, 0x10, "", 0);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 2);
	CHECK_INT(w.err[0], ==, 0);
	fde = w.fde[0];
	CHECK_U64(fde.pc_begin, ==, 0x1000);
	CHECK_U64(fde.pc_range, ==, 0x40);
	CHECK_U64(fde.vaddr, ==, VADDR + f1);
	CHECK(fde.cie_insns == cs.data + f1 - 5);
	CHECK_INT(fde.cie_insns_size, ==, 5);
	CHECK_U64(fde.cie_insns_vaddr, ==, VADDR + f1 - 5);
	CHECK(fde.insns == cs.data + f2 - 3);
	CHECK_INT(fde.insns_size, ==, 3);
	CHECK_U64(fde.code_align, ==, 1);
	CHECK_INT(fde.data_align, ==, -8);
	CHECK_U64(fde.ra_column, ==, 16);
	CHECK_INT(fde.addr_enc, ==, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	CHECK_INT(fde.addr_size, ==, 8);
	CHECK(!fde.signal_frame && !fde.pauth_b_key);
	CHECK_U64(w.off[0], ==, f2);
	CHECK_INT(w.err[1], ==, 0);
	CHECK_U64(w.fde[1].pc_begin, ==, 0x2000);
	CHECK_INT(w.fde[1].insns_size, ==, 0);
	/* By offset: an FDE, the CIE, the terminator, outside. */
	CHECK_INT(cfi_section__fde_at(&cs, f2, &fde), ==, 0);
	CHECK_U64(fde.pc_begin, ==, 0x2000);
	CHECK_U64(fde.vaddr, ==, VADDR + f2);
	CHECK_INT(cfi_section__fde_at(&cs, cie, &fde), ==, -ENOENT);
	CHECK_INT(cfi_section__fde_at(&cs, term, &fde), ==, -ENOENT);
	CHECK_INT(cfi_section__fde_at(&cs, cs.size, &fde), ==, -EINVAL);
	CHECK_INT(cfi_section__fde_at(&cs, UINT64_MAX, &fde), ==, -EINVAL);
	sec_close(&cs);
}

/* Every encoding of an FDE's address and size, 64- and 32-bit. */
TEST(cfi_entries_pointer_encodings)
{
	static const struct {
		uint8_t enc, addr_size;
		uint64_t begin;
	} cases[] = {
		{DW_EH_PE_pcrel | DW_EH_PE_sdata4, 8, VADDR - 0x800},
		{DW_EH_PE_pcrel | DW_EH_PE_sdata4, 8, 0x1000},
		{DW_EH_PE_pcrel | DW_EH_PE_sdata8, 8, 0x7fff00001000},
		{DW_EH_PE_pcrel | DW_EH_PE_sdata2, 8, VADDR + 0x1000},
		{DW_EH_PE_pcrel | DW_EH_PE_sleb128, 8, VADDR - 0x123456},
		{DW_EH_PE_absptr, 8, 0xffffffff00001000},
		{DW_EH_PE_udata8, 8, 0x123456789a},
		{DW_EH_PE_udata4, 8, 0xfffff000},
		{DW_EH_PE_udata2, 8, 0xf000},
		{DW_EH_PE_uleb128, 8, 0x123456789},
		{DW_EH_PE_datarel | DW_EH_PE_sdata4, 8, DATA_BASE - 0x1000},
		{DW_EH_PE_datarel | DW_EH_PE_sdata4, 8, DATA_BASE + 0x1000},
		{DW_EH_PE_absptr, 4, 0x80001000},
		{DW_EH_PE_signed, 4, 0x1000},
		{DW_EH_PE_pcrel | DW_EH_PE_sdata4, 4, 0x1000},
		/* pcrel wraps at 32 bits: below the section, from a high one. */
		{DW_EH_PE_pcrel | DW_EH_PE_sdata4, 4, VADDR - 0x300000 + 0x100000000},
	};
	struct cie_spec c = x86_zr;
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t i, cie;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sec_init(&s, CFI_EH_FRAME, false, cases[i].addr_size);
		c.fde_enc = cases[i].enc;
		cie = put_cie(&s, &c);
		put_fde(&s, cie, &c, cases[i].begin, 0x20, "\x41", 1);
		cs = sec_open(&s, s.n);
		walk(&cs, &w);
		if (w.n != 1 || w.err[0])
			test_fail(__FILE__, __LINE__, "case %zu: %zu answers, error %d", i, w.n,
				  w.err[0]);
		if (w.fde[0].pc_begin != cases[i].begin || w.fde[0].pc_range != 0x20)
			test_fail(__FILE__, __LINE__, "case %zu: %llx+%llx", i,
				  (unsigned long long)w.fde[0].pc_begin,
				  (unsigned long long)w.fde[0].pc_range);
		CHECK_INT(w.fde[0].addr_enc, ==, cases[i].enc);
		CHECK_INT(w.fde[0].addr_size, ==, cases[i].addr_size);
		CHECK_INT(w.fde[0].insns_size, ==, 1);
		sec_close(&cs);
	}
}

/* Encodings it cannot read: that FDE fails, the next one is read. */
TEST(cfi_entries_unreadable_encodings)
{
	static const uint8_t bad[] = {
		DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, /* needs the memory */
		0x20 | DW_EH_PE_sdata4,				      /* textrel */
		0x40 | DW_EH_PE_sdata4,				      /* funcrel */
		DW_EH_PE_aligned,
		DW_EH_PE_omit,
		0x07, /* no such format */
	};
	struct cie_spec c = x86_zr, good = x86_zr;
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t i, cie, cie2;

	for (i = 0; i < sizeof(bad); i++) {
		sec_init(&s, CFI_EH_FRAME, false, 8);
		c.fde_enc = bad[i];
		cie = put_cie(&s, &c);
		put_fde(&s, cie, &good, 0x1000, 0x20, "", 0); /* its bytes: pcrel sdata4 */
		cie2 = put_cie(&s, &good);
		put_fde(&s, cie2, &good, 0x2000, 0x20, "", 0);
		cs = sec_open(&s, s.n);
		walk(&cs, &w);
		CHECK_INT(w.n, ==, 2);
		if (w.err[0] != -EOPNOTSUPP)
			test_fail(__FILE__, __LINE__, "encoding 0x%02x: %d", bad[i], w.err[0]);
		CHECK_INT(w.err[1], ==, 0);
		CHECK_U64(w.fde[1].pc_begin, ==, 0x2000);
		sec_close(&cs);
	}
	/* datarel without a data base. */
	sec_init(&s, CFI_EH_FRAME, false, 8);
	c.fde_enc = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	cie = put_cie(&s, &c);
	put_fde(&s, cie, &c, DATA_BASE + 0x10, 0x20, "", 0);
	cs = sec_open(&s, s.n);
	cs.bases.has_data = false;
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 1);
	CHECK_INT(w.err[0], ==, -EOPNOTSUPP);
	sec_close(&cs);
}

/* An FDE's bytes after each CIE augmentation: its instructions must start in the right place. */
TEST(cfi_entries_augmentations)
{
	static const struct {
		const char *aug;
		uint8_t pers_enc;
		bool signal_frame, b_key;
	} cases[] = {
		{"zR", 0, false, false},
		{"zPLR", DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, false, false},
		{"zPLR", DW_EH_PE_udata8, false, false},
		{"zPLR", DW_EH_PE_uleb128, false, false},
		{"zRS", 0, true, false},
		{"zRB", 0, false, true},
		{"zRSBG", 0, true, true},
		{"zRLX", 0, false, false}, /* unknown after what matters: the length skips it */
	};
	struct cie_spec c = x86_zr;
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t i, cie;

	c.lsda_enc = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sec_init(&s, CFI_EH_FRAME, false, 8);
		c.aug = cases[i].aug;
		c.pers_enc = cases[i].pers_enc;
		cie = put_cie(&s, &c);
		put_fde(&s, cie, &c, 0x1000, 0x20, "\x41\x0e\x10", 3);
		cs = sec_open(&s, s.n);
		walk(&cs, &w);
		if (w.n != 1 || w.err[0])
			test_fail(__FILE__, __LINE__, "\"%s\": %zu answers, error %d", cases[i].aug,
				  w.n, w.err[0]);
		CHECK_U64(w.fde[0].pc_begin, ==, 0x1000);
		CHECK_INT(w.fde[0].insns_size, ==, 3);
		CHECK(!memcmp(w.fde[0].insns, "\x41\x0e\x10", 3));
		CHECK_INT(w.fde[0].cie_insns_size, ==, 5);
		CHECK(!memcmp(w.fde[0].cie_insns, x86_zr.insns, 5));
		CHECK(w.fde[0].signal_frame == cases[i].signal_frame);
		CHECK(w.fde[0].pauth_b_key == cases[i].b_key);
		sec_close(&cs);
	}
}

/*
 * Without 'z' the augmentation data follows in place. GNU as writes "S" into
 * the .debug_frame CIE of a signal frame (.cfi_signal_frame); 'R' and 'L'
 * are read there too (libgcc does), the FDE's LSDA pointer then without a
 * length; GCC before 3.0 wrote "eh" and a pointer. An unknown letter
 * leaves no way to find the instructions: that CIE's FDEs fail, the rest is read.
 */
TEST(cfi_entries_augmentations_without_z)
{
	struct cie_spec sig = {.aug = "S", .ra = 16, .insns = "\x0c\x07\x08", .insns_size = 3};
	struct cie_spec rl = {.aug = "RL",
			      .fde_enc = DW_EH_PE_pcrel | DW_EH_PE_sdata4,
			      .lsda_enc = DW_EH_PE_udata8,
			      .ra = 16,
			      .insns = "\x0c\x07\x08",
			      .insns_size = 3};
	struct cie_spec eh = {.aug = "eh", .ra = 16, .insns = "\x0c\x07\x08", .insns_size = 3};
	struct cie_spec unknown = {.aug = "X", .ra = 16, .insns = "\x0c\x07\x08", .insns_size = 3};
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t cie;

	sec_init(&s, CFI_DEBUG_FRAME, false, 8);
	cie = put_cie(&s, &sig);
	put_fde(&s, cie, &sig, 0x1000, 0x20, "\x41", 1);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 1);
	CHECK_INT(w.err[0], ==, 0);
	CHECK(w.fde[0].signal_frame);
	CHECK_U64(w.fde[0].pc_begin, ==, 0x1000);
	CHECK_INT(w.fde[0].insns_size, ==, 1);
	CHECK_INT(w.fde[0].cie_insns_size, ==, 3);
	sec_close(&cs);

	sec_init(&s, CFI_EH_FRAME, false, 8);
	cie = put_cie(&s, &rl);
	put_fde(&s, cie, &rl, 0x1000, 0x20, "\x41", 1);
	cie = put_cie(&s, &eh);
	put_fde(&s, cie, &eh, 0x2000, 0x20, "\x41", 1);
	cie = put_cie(&s, &unknown);
	put_fde(&s, cie, &unknown, 0x3000, 0x20, "\x41", 1);
	cie = put_cie(&s, &x86_zr);
	put_fde(&s, cie, &x86_zr, 0x4000, 0x20, "\x41", 1);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 4);
	CHECK_INT(w.err[0], ==, 0);
	CHECK_U64(w.fde[0].pc_begin, ==, 0x1000);
	CHECK_INT(w.fde[0].addr_enc, ==, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	CHECK_INT(w.fde[0].insns_size, ==, 1);
	CHECK_INT(w.fde[0].cie_insns_size, ==, 3);
	CHECK_INT(w.err[1], ==, 0);
	CHECK_U64(w.fde[1].pc_begin, ==, 0x2000);
	CHECK_INT(w.fde[1].insns_size, ==, 1);
	CHECK_INT(w.fde[1].cie_insns_size, ==, 3);
	CHECK_INT(w.err[2], ==, -EOPNOTSUPP);
	CHECK_INT(w.err[3], ==, 0);
	CHECK_U64(w.fde[3].pc_begin, ==, 0x4000);
	sec_close(&cs);
}

/* 'P' with DW_EH_PE_aligned: its padding depends on where the CIE is loaded. */
TEST(cfi_entries_aligned_personality_refused)
{
	struct cie_spec c = x86_zr;
	struct cfi_section cs;
	struct walk w;
	struct sec s;

	sec_init(&s, CFI_EH_FRAME, false, 8);
	c.aug = "zPR";
	c.pers_enc = DW_EH_PE_aligned;
	put_fde(&s, put_cie(&s, &c), &c, 0x1000, 0x20, "", 0);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 1);
	CHECK_INT(w.err[0], ==, -EOPNOTSUPP);
	sec_close(&cs);
}

/*
 * .debug_frame: CIE versions 1 (a one-byte return-address column), 3 (LEB128)
 * and 4 (address and segment sizes), 32- and 64-bit lengths; an FDE names
 * its CIE by offset (here the second of two), addresses are absolute.
 */
TEST(cfi_entries_debug_frame_versions)
{
	static const struct {
		uint8_t version, addr_size;
		uint64_t ra;
	} cases[] = {{1, 0, 30}, {3, 0, 300}, {4, 8, 16}, {4, 4, 8}};
	struct cie_spec c = {.insns = "\x0c\x1f\x00", .insns_size = 3, .code_align = 4};
	struct cie_spec other = {.ra = 1, .insns = "", .insns_size = 0};
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t i, cie, d64;

	for (d64 = 0; d64 < 2; d64++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			sec_init(&s, CFI_DEBUG_FRAME, d64, 8);
			c.version = cases[i].version;
			c.addr_size = cases[i].addr_size;
			c.ra = cases[i].ra;
			put_cie(&s, &other);
			cie = put_cie(&s, &c);
			put_fde(&s, cie, &c, 0x80001000, 0x20, "\x41\x0e\x10", 3);
			put_u32(&s, 0); /* padding: a zero length in .debug_frame is skipped */
			put_fde(&s, cie, &c, 0x80002000, 0x30, "", 0);
			cs = sec_open(&s, s.n);
			walk(&cs, &w);
			if (w.n != 2 || w.err[0] || w.err[1])
				test_fail(__FILE__, __LINE__, "v%d %s: %zu answers, errors %d %d",
					  cases[i].version, d64 ? "64-bit" : "32-bit", w.n,
					  w.err[0], w.err[1]);
			CHECK_U64(w.fde[0].pc_begin, ==, 0x80001000);
			CHECK_U64(w.fde[0].pc_range, ==, 0x20);
			CHECK_U64(w.fde[0].ra_column, ==, cases[i].ra);
			CHECK_U64(w.fde[0].code_align, ==, 4);
			CHECK_INT(w.fde[0].addr_size, ==,
				  cases[i].addr_size ? cases[i].addr_size : 8);
			CHECK_INT(w.fde[0].insns_size, ==, 3);
			CHECK_INT(w.fde[0].cie_insns_size, ==, 3);
			CHECK_U64(w.fde[1].pc_begin, ==, 0x80002000);
			CHECK_U64(w.fde[1].pc_range, ==, 0x30);
			sec_close(&cs);
		}
	/* What version 4 may say that it cannot read: segments, 2-byte addresses; versions 2 and 5.
	 */
	for (i = 0; i < 4; i++) {
		sec_init(&s, CFI_DEBUG_FRAME, false, 8);
		c.version = i == 2 ? 2 : i == 3 ? 5 : 4;
		c.addr_size = i == 1 ? 2 : 8;
		c.seg_size = i == 0;
		c.ra = 30;
		put_fde(&s, put_cie(&s, &c), &c, 0x1000, 0x20, "", 0);
		cs = sec_open(&s, s.n);
		walk(&cs, &w);
		CHECK_INT(w.n, ==, 1);
		CHECK_INT(w.err[0], ==, -EOPNOTSUPP);
		sec_close(&cs);
	}
}

/* In .eh_frame a 64-bit length keeps a 4-byte ID, still relative. */
TEST(cfi_entries_eh_frame_64bit_lengths)
{
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t cie;

	sec_init(&s, CFI_EH_FRAME, true, 8);
	cie = put_cie(&s, &x86_zr);
	put_fde(&s, cie, &x86_zr, 0x1000, 0x20, "\x41", 1);
	put_fde(&s, cie, &x86_zr, 0x2000, 0x20, "\x41", 1);
	put_u32(&s, 0);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 2);
	CHECK_INT(w.err[0] | w.err[1], ==, 0);
	CHECK_U64(w.fde[1].pc_begin, ==, 0x2000);
	CHECK_INT(w.fde[1].insns_size, ==, 1);
	sec_close(&cs);
}

/* Sets the 4-byte field at off. */
static void poke_u32(struct sec *s, size_t off, uint32_t v)
{
	memcpy(s->b + off, &v, 4);
}

/* A corrupt FDE whose length can be trusted: that FDE fails, iteration goes on past it. */
TEST(cfi_entries_corrupt_fde_skipped)
{
	struct cie_spec v2 = x86_zr;
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t cie, f1, f2, f3, f4, f5, f6, bad_cie;

	sec_init(&s, CFI_EH_FRAME, false, 8);
	cie = put_cie(&s, &x86_zr);
	f1 = put_fde(&s, cie, &x86_zr, 0x1000, 0x20, "", 0);
	f2 = put_fde(&s, cie, &x86_zr, 0x2000, 0x20, "", 0);
	f3 = put_fde(&s, cie, &x86_zr, 0x3000, 0x20, "", 0);
	f4 = put_fde(&s, cie, &x86_zr, 0x4000, 0x20, "", 0);
	v2.version = 2;
	bad_cie = put_cie(&s, &v2);
	f5 = put_fde(&s, bad_cie, &x86_zr, 0x5000, 0x20, "", 0);
	f6 = put_fde(&s, cie, &x86_zr, 0x6000, 0x20, "", 0);
	put_fde(&s, cie, &x86_zr, 0x7000, 0x20, "\x41", 1);
	/*
	 * f1's CIE pointer forward, past its own ID (a CIE comes first); f2's
	 * at f1, an FDE; f3's one byte into the CIE, where a zero length reads.
	 */
	poke_u32(&s, f1 + 4, (uint32_t)(f1 + 4 - f2));
	poke_u32(&s, f2 + 4, (uint32_t)(f2 + 4 - f1));
	poke_u32(&s, f3 + 4, (uint32_t)(f3 + 4 - (cie + 1)));
	/* f4's range wraps past the top of the address space. */
	poke_u32(&s, f4 + 12, 0xffffffff);
	poke_u32(&s, f4 + 8, 0x7fffffff);
	/* f6 cut inside its address: the length says 6 bytes. */
	poke_u32(&s, f6, 6);
	memset(s.b + f6 + 10, 0, s.n - (f6 + 10));
	s.n = f6 + 10;
	put_fde(&s, cie, &x86_zr, 0x7000, 0x20, "\x41", 1);
	cs = sec_open(&s, s.n);
	walk(&cs, &w);
	CHECK_INT(w.n, ==, 7);
	CHECK_INT(w.err[0], ==, -EINVAL);
	CHECK_U64(w.off[0], ==, f2);
	CHECK_INT(w.err[1], ==, -EINVAL);
	CHECK_INT(w.err[2], ==, -EINVAL);
	CHECK_INT(w.err[3], ==, -EINVAL);
	CHECK_INT(w.err[4], ==, -EOPNOTSUPP);
	CHECK_U64(w.off[4], ==, f6);
	CHECK_INT(w.err[5], ==, -EINVAL);
	CHECK_INT(w.err[6], ==, 0);
	CHECK_U64(w.fde[6].pc_begin, ==, 0x7000);
	CHECK_INT(cfi_section__fde_at(&cs, f5, &w.fde[0]), ==, -EOPNOTSUPP);
	sec_close(&cs);
}

/* A length that runs past the section: nothing after it can be trusted, iteration stops. */
TEST(cfi_entries_corrupt_length_stops)
{
	struct cfi_section cs;
	struct walk w;
	struct sec s;
	size_t cie, f2, end;

	for (int d64 = 0; d64 < 2; d64++) {
		sec_init(&s, CFI_EH_FRAME, d64, 8);
		cie = put_cie(&s, &x86_zr);
		put_fde(&s, cie, &x86_zr, 0x1000, 0x20, "", 0);
		f2 = put_fde(&s, cie, &x86_zr, 0x2000, 0x20, "", 0);
		put_fde(&s, cie, &x86_zr, 0x3000, 0x20, "", 0);
		end = s.n;
		if (d64)
			memset(s.b + f2 + 4, 0x7f, 8);
		else
			poke_u32(&s, f2, 0x7fffffff);
		cs = sec_open(&s, end);
		walk(&cs, &w);
		CHECK_INT(w.n, ==, 2);
		CHECK_INT(w.err[0], ==, 0);
		CHECK_INT(w.err[1], ==, -EINVAL);
		CHECK_U64(w.off[1], ==, end);
		sec_close(&cs);
	}
	/* Cut inside a length, and inside a 64-bit length's escape. */
	sec_init(&s, CFI_EH_FRAME, true, 8);
	cie = put_cie(&s, &x86_zr);
	put_fde(&s, cie, &x86_zr, 0x1000, 0x20, "", 0);
	f2 = s.n;
	put_fde(&s, cie, &x86_zr, 0x2000, 0x20, "", 0);
	for (end = f2 + 1; end < f2 + 12; end++) {
		cs = sec_open(&s, end);
		walk(&cs, &w);
		CHECK_INT(w.n, ==, 2);
		CHECK_INT(w.err[1], ==, -EINVAL);
		sec_close(&cs);
	}
}

/* Each section, every byte changed and every prefix: never a crash, every answer sane (walk). */
TEST(cfi_entries_survive_damage)
{
	static const uint8_t vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x0b};
	struct cie_spec plr = x86_zr,
			v4 = {.version = 4, .ra = 30, .insns = "\x0c\x1f\x00", .insns_size = 3};
	static struct sec built[4], s;
	struct cfi_section cs;
	struct walk w;
	size_t k, i, j, cie;

	plr.aug = "zPLR";
	plr.lsda_enc = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
	sec_init(&built[0], CFI_EH_FRAME, false, 8);
	cie = put_cie(&built[0], &x86_zr);
	put_fde(&built[0], cie, &x86_zr, 0x1000, 0x20, "\x41\x0e\x10\x0a\x83\x02\x41\x0b", 8);
	cie = put_cie(&built[0], &plr);
	put_fde(&built[0], cie, &plr, 0x2000, 0x20, "\x01\x10\x20\x00\x00\x00\x00\x00\x00", 9);
	put_u32(&built[0], 0);
	sec_init(&built[1], CFI_EH_FRAME, true, 4);
	cie = put_cie(&built[1], &x86_zr);
	put_fde(&built[1], cie, &x86_zr, 0x1000, 0x20, "\x41\x0f\x02\x77\x08", 5);
	sec_init(&built[2], CFI_DEBUG_FRAME, false, 8);
	cie = put_cie(&built[2], &v4);
	put_fde(&built[2], cie, &v4, 0x1000, 0x20, "\x41\x2d\x10\x03\x01\x30", 6);
	sec_init(&built[3], CFI_DEBUG_FRAME, true, 8);
	cie = put_cie(&built[3], &v4);
	put_fde(&built[3], cie, &v4, 0x1000, 0x20, "\x41\x0e\x10", 3);
	for (k = 0; k < 4; k++) {
		for (i = 0; i < built[k].n; i++)
			for (j = 0; j < sizeof(vals); j++) {
				s = built[k];
				s.b[i] = vals[j];
				cs = sec_open(&s, s.n);
				walk(&cs, &w);
				sec_close(&cs);
			}
		for (i = 0; i <= built[k].n; i++) {
			cs = sec_open(&built[k], i);
			walk(&cs, &w);
			sec_close(&cs);
		}
	}
}
