// SPDX-License-Identifier: MIT
/*
 * eh_frame_hdr against binutils as the oracle: in the system libc, the vDSO
 * and a fixture, every FDE `readelf --debug-dump=frames` lists must be in
 * the table with the same pc_begin and pc_range (and its CIE's alignment
 * factors and return address column), and every address inside a function
 * must find that function, the address past its end must not.
 *
 * Then sections built here, one per pointer encoding the format allows
 * (absolute, pc- and data-relative; 2-, 4- and 8-byte, LEB128; 32- and
 * 64-bit addresses; 64-bit entry lengths; the 'zPLRS' augmentations), and
 * damaged ones: each must fail cleanly or answer sanely, never crash (the
 * ASan build checks every read stays inside the exact-size copies).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/eh_frame_hdr.h"

struct ref_cie {
	unsigned long off;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
};

struct ref_fde {
	uint64_t begin, end;
	unsigned long cie;
};

struct ref_frames {
	struct ref_cie cies[4096];
	size_t ncies;
	struct ref_fde *fdes;
	size_t nfdes, cap;
};

static void need_tool(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd) != 0)
		SKIP("%s not installed", tool);
}

/* The CIEs and FDEs of .eh_frame as `readelf -W --debug-dump=frames` prints them. */
static void readelf_frames(const char *path, struct ref_frames *r)
{
	char cmd[1024], line[1024];
	bool in_eh_frame = false;
	struct ref_cie *cie = NULL;
	unsigned long off, len, id, cie_off;
	unsigned long long begin, end, u;
	long long s;
	FILE *f;

	need_tool("readelf");
	snprintf(cmd, sizeof(cmd), "readelf -W -wN --debug-dump=frames '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Contents of the ", 16)) {
			in_eh_frame = !strncmp(line + 16, ".eh_frame section", 17);
			continue;
		}
		if (!in_eh_frame)
			continue;
		if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%llx..%llx", &off, &len, &id, &cie_off,
			   &begin, &end) == 6) {
			if (r->nfdes == r->cap) {
				r->cap = r->cap ? 2 * r->cap : 256;
				r->fdes = realloc(r->fdes, r->cap * sizeof(*r->fdes));
				CHECK(r->fdes);
			}
			r->fdes[r->nfdes++] = (struct ref_fde){begin, end, cie_off};
		} else if (sscanf(line, "%lx %lx %lx CIE", &off, &len, &id) == 3 &&
			   strstr(line, " CIE")) {
			CHECK_INT(r->ncies, <, 4096);
			cie = &r->cies[r->ncies++];
			*cie = (struct ref_cie){.off = off};
		} else if (cie && sscanf(line, " Code alignment factor: %llu", &u) == 1) {
			cie->code_align = u;
		} else if (cie && sscanf(line, " Data alignment factor: %lld", &s) == 1) {
			cie->data_align = s;
		} else if (cie && sscanf(line, " Return address column: %llu", &u) == 1) {
			cie->ra_column = u;
		}
	}
	CHECK_INT(pclose(f), ==, 0);
}

static const struct ref_cie *ref_cie(const struct ref_frames *r, unsigned long off)
{
	size_t i;

	for (i = 0; i < r->ncies; i++)
		if (r->cies[i].off == off)
			return &r->cies[i];
	return NULL;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct ref_fde *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Every table entry is one of readelf's FDEs, every FDE is in the table, lookups agree. */
static void check_against_readelf(const struct eh_frame_hdr *h, struct ref_frames *r)
{
	struct cfi_fde fde;
	struct ref_fde key, *ref;
	const struct ref_cie *cie;
	size_t i;

	CHECK_INT(r->nfdes, >, 0);
	CHECK_INT(eh_frame_hdr__count(h), ==, r->nfdes);
	qsort(r->fdes, r->nfdes, sizeof(*r->fdes), cmp_ref);
	for (i = 0; i < eh_frame_hdr__count(h); i++) {
		CHECK_INT(eh_frame_hdr__fde(h, i, &fde), ==, 0);
		key.begin = fde.pc_begin;
		ref = bsearch(&key, r->fdes, r->nfdes, sizeof(*r->fdes), cmp_ref);
		if (!ref)
			test_fail(__FILE__, __LINE__, "FDE at 0x%llx: not in readelf's list",
				  (unsigned long long)fde.pc_begin);
		CHECK_U64(fde.pc_begin + fde.pc_range, ==, ref->end);
		cie = ref_cie(r, ref->cie);
		CHECK(cie);
		CHECK_U64(fde.code_align, ==, cie->code_align);
		CHECK_INT(fde.data_align, ==, cie->data_align);
		CHECK_U64(fde.ra_column, ==, cie->ra_column);
		CHECK(fde.insns && fde.cie_insns);
	}
	for (i = 0; i < r->nfdes; i++) {
		ref = &r->fdes[i];
		if (ref->end == ref->begin)
			continue;
		CHECK_INT(eh_frame_hdr__find(h, ref->begin, &fde), ==, 0);
		CHECK_U64(fde.pc_begin, ==, ref->begin);
		CHECK_INT(eh_frame_hdr__find(h, ref->begin + (ref->end - ref->begin) / 2, &fde), ==,
			  0);
		CHECK_U64(fde.pc_begin, ==, ref->begin);
		CHECK_INT(eh_frame_hdr__find(h, ref->end - 1, &fde), ==, 0);
		CHECK_U64(fde.pc_begin, ==, ref->begin);
		/* Past the end: another function that starts right there, or none. */
		if (eh_frame_hdr__find(h, ref->end, &fde) == 0)
			CHECK_U64(fde.pc_begin, ==, ref->end);
	}
	CHECK_INT(eh_frame_hdr__find(h, r->fdes[0].begin - 1, &fde), ==, -ENOENT);
	free(r->fdes);
}

static void check_file(const char *path)
{
	struct eh_frame_hdr *h = NULL;
	static struct ref_frames r;
	uint8_t *image;
	size_t size;

	readelf_frames(path, &r);
	image = test_read_file(path, &size);
	CHECK_INT(eh_frame_hdr__from_elf(image, size, &h), ==, 0);
	check_against_readelf(h, &r);
	eh_frame_hdr__free(h);
	free(image);
}

TEST(eh_frame_hdr_system_libc_matches_readelf)
{
	check_file(test_system_libc());
}

TEST(eh_frame_hdr_fixture_matches_readelf)
{
	check_file(test_build_fixture("known_tree"));
}

TEST(eh_frame_hdr_vdso_matches_readelf)
{
	size_t size;
	const void *image = test_vdso(&size);

	if (!image)
		SKIP("no vDSO on this system");
	check_file(test_write_tmp("vdso.so", image, size));
}

/* ---- sections built here ---------------------------------------------------------- */

#define HDR_VADDR  0x1000
#define EHF_VADDR  0x2000
#define DATA_BASE  0x3000
#define FN1	   0x4000
#define FN1_SIZE   0x100
#define FN2	   0x4200 /* a gap between the two */
#define FN2_SIZE   0x80
#define PERSONALTY 0x5000

struct buf {
	uint8_t b[1024];
	size_t n;
	uint64_t vaddr;
};

struct layout {
	uint8_t addr_size;
	uint8_t ptr_enc, count_enc, table_enc, fde_enc;
	const char *aug; /* "zR", "zPLR", "zRS" or "" (then FDE pointers are absptr) */
	bool dwarf64;	 /* 64-bit entry lengths */
};

static void put(struct buf *b, const void *p, size_t n)
{
	CHECK_INT(b->n + n, <=, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_leb(struct buf *b, uint64_t v, bool is_signed)
{
	for (;;) {
		uint8_t byte = v & 0x7f;
		bool done = is_signed ? ((int64_t)v >> 6 == 0 || (int64_t)v >> 6 == -1) : v < 0x80;

		v = is_signed ? (uint64_t)((int64_t)v >> 7) : v >> 7;
		if (done) {
			put_u8(b, byte);
			return;
		}
		put_u8(b, byte | 0x80);
	}
}

/* A value in the format of enc's low nibble. */
static void put_value(struct buf *b, uint8_t enc, uint8_t addr_size, uint64_t v)
{
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (enc & 0x0f) {
	case 0x00:
	case 0x08:
		if (addr_size == 4)
			put(b, &u32, 4);
		else
			put(b, &v, 8);
		return;
	case 0x01:
		put_leb(b, v, false);
		return;
	case 0x09:
		put_leb(b, v, true);
		return;
	case 0x02:
	case 0x0a:
		put(b, &u16, 2);
		return;
	case 0x03:
	case 0x0b:
		put(b, &u32, 4);
		return;
	}
	put(b, &v, 8);
}

/* A pointer to target, encoded as enc; datarel is relative to data_base. */
static void put_ptr(struct buf *b, uint8_t enc, uint8_t addr_size, uint64_t target,
		    uint64_t data_base)
{
	uint64_t at = b->vaddr + b->n;

	if ((enc & 0x70) == 0x10)
		target -= at;
	else if ((enc & 0x70) == 0x30)
		target -= data_base;
	put_value(b, enc, addr_size, target);
}

/* Reserves an entry's length; end_entry fills it in. */
static size_t begin_entry(struct buf *b, const struct layout *l)
{
	uint32_t esc = 0xffffffff;
	uint64_t zero = 0;
	size_t at;

	if (l->dwarf64)
		put(b, &esc, 4);
	at = b->n;
	put(b, &zero, l->dwarf64 ? 8 : 4);
	return at;
}

static void end_entry(struct buf *b, const struct layout *l, size_t at)
{
	uint64_t len;
	uint32_t len32;

	while ((b->n - at) % l->addr_size)
		put_u8(b, 0); /* DW_CFA_nop */
	len = b->n - at - (l->dwarf64 ? 8 : 4);
	len32 = (uint32_t)len;
	if (l->dwarf64)
		memcpy(b->b + at, &len, 8);
	else
		memcpy(b->b + at, &len32, 4);
}

static void put_cie(struct buf *b, const struct layout *l)
{
	size_t at = begin_entry(b, l), aug_at;
	uint32_t id = 0;
	const char *a;

	put(b, &id, 4);
	put_u8(b, 1);
	put(b, l->aug, strlen(l->aug) + 1);
	put_leb(b, 1, false);		       /* code alignment */
	put_leb(b, (uint64_t)-8, true);	       /* data alignment */
	put_u8(b, l->addr_size == 8 ? 16 : 8); /* return address column */
	if (l->aug[0] == 'z') {
		put_u8(b, 0); /* the augmentation data length, patched below (< 128) */
		aug_at = b->n;
		for (a = l->aug + 1; *a; a++) {
			if (*a == 'P') {
				put_u8(b, 0x9b); /* indirect pcrel sdata4 */
				put_ptr(b, 0x1b, l->addr_size, PERSONALTY, 0);
			} else if (*a == 'L') {
				put_u8(b, 0x1b);
			} else if (*a == 'R') {
				put_u8(b, l->fde_enc);
			}
		}
		b->b[aug_at - 1] = (uint8_t)(b->n - aug_at);
	}
	put(b, "\x0c\x07\x08", 3); /* DW_CFA_def_cfa: r7 ofs 8 */
	end_entry(b, l, at);
}

static void put_fde(struct buf *b, const struct layout *l, uint64_t begin, uint64_t size)
{
	size_t at = begin_entry(b, l);
	/* The CIE is at offset 0: the pointer is the distance back from this field. */
	uint32_t cie_ptr = (uint32_t)b->n;
	uint8_t enc = l->aug[0] == 'z' ? l->fde_enc : 0x00;

	put(b, &cie_ptr, 4);
	put_ptr(b, enc, l->addr_size, begin, DATA_BASE);
	put_value(b, enc, l->addr_size, size);
	if (strchr(l->aug, 'L')) {
		put_u8(b, 4); /* augmentation data: an LSDA pointer, pcrel sdata4 */
		put_ptr(b, 0x1b, l->addr_size, 0x6000, 0);
	} else if (l->aug[0] == 'z') {
		put_u8(b, 0);
	}
	put(b, "\x41\x0e\x10", 3); /* advance_loc 1; def_cfa_offset 16 */
	end_entry(b, l, at);
}

/* .eh_frame with one CIE and two FDEs, whose addresses fde1 and fde2 get. */
static void build_eh_frame(struct buf *b, const struct layout *l, uint64_t *fde1, uint64_t *fde2)
{
	uint32_t zero = 0;

	memset(b, 0, sizeof(*b));
	b->vaddr = EHF_VADDR;
	put_cie(b, l);
	*fde1 = b->vaddr + b->n;
	put_fde(b, l, FN1, FN1_SIZE);
	*fde2 = b->vaddr + b->n;
	put_fde(b, l, FN2, FN2_SIZE);
	put(b, &zero, 4); /* the terminator */
}

static void build_hdr(struct buf *b, const struct layout *l, uint64_t fde1, uint64_t fde2)
{
	memset(b, 0, sizeof(*b));
	b->vaddr = HDR_VADDR;
	put_u8(b, 1);
	put_u8(b, l->ptr_enc);
	put_u8(b, l->count_enc);
	put_u8(b, l->table_enc);
	put_ptr(b, l->ptr_enc, l->addr_size, EHF_VADDR, HDR_VADDR);
	put_value(b, l->count_enc, l->addr_size, 2);
	put_ptr(b, l->table_enc, l->addr_size, FN1, HDR_VADDR);
	put_ptr(b, l->table_enc, l->addr_size, fde1, HDR_VADDR);
	put_ptr(b, l->table_enc, l->addr_size, FN2, HDR_VADDR);
	put_ptr(b, l->table_enc, l->addr_size, fde2, HDR_VADDR);
}

/* Exact-size heap copies, so that ASan sees any read past them. */
struct built {
	uint8_t *hdr, *ehf;
	struct eh_frame_sections sec;
};

static void build(const struct layout *l, struct built *out)
{
	static struct buf hdr, ehf;
	uint64_t fde1, fde2;

	build_eh_frame(&ehf, l, &fde1, &fde2);
	build_hdr(&hdr, l, fde1, fde2);
	out->hdr = malloc(hdr.n);
	out->ehf = malloc(ehf.n);
	CHECK(out->hdr && out->ehf);
	memcpy(out->hdr, hdr.b, hdr.n);
	memcpy(out->ehf, ehf.b, ehf.n);
	out->sec = (struct eh_frame_sections){
		.hdr = out->hdr,
		.hdr_size = hdr.n,
		.hdr_vaddr = HDR_VADDR,
		.eh_frame = out->ehf,
		.eh_frame_size = ehf.n,
		.eh_frame_vaddr = EHF_VADDR,
		.data_base = DATA_BASE,
		.has_data_base = true,
		.addr_size = l->addr_size,
	};
}

static void unbuild(struct built *b)
{
	free(b->hdr);
	free(b->ehf);
}

static void check_lookups(const struct eh_frame_hdr *h, const struct layout *l)
{
	struct cfi_fde fde;

	CHECK_INT(eh_frame_hdr__count(h), ==, 2);
	CHECK_INT(eh_frame_hdr__find(h, FN1 - 1, &fde), ==, -ENOENT);
	CHECK_INT(eh_frame_hdr__find(h, FN1, &fde), ==, 0);
	CHECK_U64(fde.pc_begin, ==, FN1);
	CHECK_U64(fde.pc_range, ==, FN1_SIZE);
	CHECK_INT(eh_frame_hdr__find(h, FN1 + FN1_SIZE - 1, &fde), ==, 0);
	CHECK_U64(fde.pc_begin, ==, FN1);
	/* In the gap: the function below ends before it. */
	CHECK_INT(eh_frame_hdr__find(h, FN1 + FN1_SIZE, &fde), ==, -ENOENT);
	CHECK_INT(eh_frame_hdr__find(h, FN2 - 1, &fde), ==, -ENOENT);
	CHECK_INT(eh_frame_hdr__find(h, FN2, &fde), ==, 0);
	CHECK_U64(fde.pc_begin, ==, FN2);
	CHECK_INT(eh_frame_hdr__find(h, FN2 + FN2_SIZE - 1, &fde), ==, 0);
	CHECK_U64(fde.pc_range, ==, FN2_SIZE);
	CHECK_INT(eh_frame_hdr__find(h, FN2 + FN2_SIZE, &fde), ==, -ENOENT);
	CHECK_INT(eh_frame_hdr__find(h, UINT64_MAX, &fde), ==, -ENOENT);
	CHECK_U64(fde.code_align, ==, 1);
	CHECK_INT(fde.data_align, ==, -8);
	CHECK_U64(fde.ra_column, ==, l->addr_size == 8 ? 16 : 8);
	CHECK(fde.signal_frame == (strchr(l->aug, 'S') != NULL));
	CHECK_INT(fde.cie_insns_size, >=, 3);
	CHECK(!memcmp(fde.cie_insns, "\x0c\x07\x08", 3));
	CHECK_INT(fde.insns_size, >=, 3);
	CHECK(!memcmp(fde.insns, "\x41\x0e\x10", 3));
	CHECK_INT(eh_frame_hdr__fde(h, 2, &fde), ==, -ERANGE);
}

static const struct layout layouts[] = {
	/* What GNU ld writes: pcrel sdata4 pointer, datarel sdata4 table, pcrel sdata4 FDEs. */
	{8, 0x1b, 0x03, 0x3b, 0x1b, "zR", false},
	{8, 0x1b, 0x03, 0x3b, 0x1b, "zPLR", false},
	{8, 0x1b, 0x03, 0x3b, 0x1b, "zRS", true},
	{8, 0x01, 0x09, 0x04, 0x04, "zR", false},   /* uleb, sleb, udata8 absolute */
	{8, 0x09, 0x01, 0x3c, 0x1c, "zR", true},    /* sleb; datarel/pcrel sdata8 */
	{8, 0x1b, 0x0b, 0x1a, 0x3b, "zPLR", false}, /* pcrel sdata2 table; datarel FDEs */
	{8, 0x1b, 0x03, 0x3b, 0x01, "zR", false},   /* uleb FDE pointers */
	{8, 0x1b, 0x03, 0x3b, 0x19, "zR", false},   /* pcrel sleb FDE pointers */
	{8, 0x00, 0x03, 0x00, 0x1b, "", false},	    /* absptr everywhere, no augmentation */
	{4, 0x1b, 0x03, 0x3b, 0x1b, "zR", false},
	{4, 0x00, 0x02, 0x08, 0x00, "zR", false}, /* 32-bit absptr, signed absptr table */
	{4, 0x1b, 0x03, 0x3b, 0x1b, "", true},
};

TEST(eh_frame_hdr_every_encoding)
{
	struct eh_frame_hdr *h = NULL;
	struct built b;
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		build(&layouts[i], &b);
		if (eh_frame_hdr__new(&b.sec, &h))
			test_fail(__FILE__, __LINE__, "layout %zu: not opened", i);
		check_lookups(h, &layouts[i]);
		eh_frame_hdr__free(h);
		unbuild(&b);
	}
}

/* Opens with one field of the good layout changed; returns the error. */
static int open_changed(size_t hdr_at, uint8_t hdr_val, size_t ehf_at, uint8_t ehf_val,
			struct eh_frame_hdr **h)
{
	struct built b;
	int err;

	build(&layouts[0], &b);
	if (hdr_at < b.sec.hdr_size)
		b.hdr[hdr_at] = hdr_val;
	if (ehf_at < b.sec.eh_frame_size)
		b.ehf[ehf_at] = ehf_val;
	err = eh_frame_hdr__new(&b.sec, h);
	/* The bytes are borrowed: a test that keeps h must not use it after this. */
	unbuild(&b);
	return err;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void set_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

TEST(eh_frame_hdr_refuses_what_it_cannot_read)
{
	struct eh_frame_hdr *h = NULL;
	struct cfi_fde fde;
	struct eh_frame_sections sec;
	struct built b;

	CHECK_INT(open_changed(0, 2, SIZE_MAX, 0, &h), ==, -EOPNOTSUPP);    /* version 2 */
	CHECK_INT(open_changed(2, 0xff, SIZE_MAX, 0, &h), ==, -ENOENT);	    /* no table */
	CHECK_INT(open_changed(3, 0xff, SIZE_MAX, 0, &h), ==, -ENOENT);	    /* no table */
	CHECK_INT(open_changed(3, 0x01, SIZE_MAX, 0, &h), ==, -EOPNOTSUPP); /* uleb table */
	CHECK_INT(open_changed(3, 0xbb, SIZE_MAX, 0, &h), ==, -EOPNOTSUPP); /* indirect */
	CHECK_INT(open_changed(3, 0x2b, SIZE_MAX, 0, &h), ==, -EOPNOTSUPP); /* textrel */
	CHECK_INT(open_changed(1, 0xff, SIZE_MAX, 0, &h), ==, -EOPNOTSUPP); /* no eh_frame_ptr */
	CHECK_INT(open_changed(8, 0xff, SIZE_MAX, 0, &h), ==, -EINVAL);	    /* 255 entries */
	/* eh_frame_ptr one byte off: not this .eh_frame. */
	build(&layouts[0], &b);
	b.hdr[4]++;
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, -EINVAL);
	unbuild(&b);
	/* Entries out of order: the second initial_loc below the first. */
	build(&layouts[0], &b);
	set_u32(b.hdr + 20, get_u32(b.hdr + 12) - 1);
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, -EINVAL);
	unbuild(&b);
	/* An FDE address outside .eh_frame. */
	build(&layouts[0], &b);
	b.hdr[17] = 0x40;
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, -EINVAL);
	unbuild(&b);
	/* A bad address size, no bytes. */
	build(&layouts[0], &b);
	sec = b.sec;
	sec.addr_size = 2;
	CHECK_INT(eh_frame_hdr__new(&sec, &h), ==, -EINVAL);
	sec = b.sec;
	sec.hdr = NULL;
	CHECK_INT(eh_frame_hdr__new(&sec, &h), ==, -EINVAL);
	/* datarel FDE pointers without a data base. */
	unbuild(&b);
	build(&layouts[5], &b);
	sec = b.sec;
	sec.has_data_base = false;
	CHECK_INT(eh_frame_hdr__new(&sec, &h), ==, 0);
	CHECK_INT(eh_frame_hdr__fde(h, 0, &fde), ==, -EOPNOTSUPP);
	eh_frame_hdr__free(h);
	unbuild(&b);
	eh_frame_hdr__free(NULL);
	CHECK_INT(eh_frame_hdr__count(NULL), ==, 0);
}

TEST(eh_frame_hdr_table_must_agree_with_fdes)
{
	struct cfi_fde fde;
	struct eh_frame_hdr *h;
	struct built b;

	/* The first entry says 0x4001; its FDE says 0x4000. */
	build(&layouts[0], &b);
	b.hdr[12]++;
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, 0);
	CHECK_INT(eh_frame_hdr__fde(h, 0, &fde), ==, -EINVAL);
	CHECK_INT(eh_frame_hdr__find(h, FN1 + 8, &fde), ==, -EINVAL);
	CHECK_INT(eh_frame_hdr__find(h, FN2, &fde), ==, 0);
	eh_frame_hdr__free(h);
	unbuild(&b);
	/* The first FDE's CIE pointer points at itself: not a CIE. */
	build(&layouts[0], &b);
	b.ehf[0x1c] = 4;
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, 0);
	CHECK_INT(eh_frame_hdr__find(h, FN1, &fde), ==, -EINVAL);
	eh_frame_hdr__free(h);
	unbuild(&b);
	/* Ranges that wrap past the top of the address space, 64- and 32-bit. */
	build(&layouts[3], &b);
	memset(b.ehf + 0x28, 0xff, 8);
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, 0);
	CHECK_INT(eh_frame_hdr__find(h, FN1, &fde), ==, -EINVAL);
	eh_frame_hdr__free(h);
	unbuild(&b);
	build(&layouts[9], &b);
	memset(b.ehf + 0x20, 0xff, 4);
	CHECK_INT(eh_frame_hdr__new(&b.sec, &h), ==, 0);
	CHECK_INT(eh_frame_hdr__find(h, FN1, &fde), ==, -EINVAL);
	eh_frame_hdr__free(h);
	unbuild(&b);
}

/* Opens b and uses every answer: each must be sane when there is one. */
static void poke(const struct built *b)
{
	struct eh_frame_hdr *h = NULL;
	struct cfi_fde fde;
	uint64_t a;
	size_t k;

	if (eh_frame_hdr__new(&b->sec, &h))
		return;
	for (k = 0; k < eh_frame_hdr__count(h); k++)
		eh_frame_hdr__fde(h, k, &fde);
	for (a = FN1 - 16; a < FN2 + FN2_SIZE + 16; a += 7)
		if (eh_frame_hdr__find(h, a, &fde) == 0)
			CHECK_U64(a - fde.pc_begin, <, fde.pc_range);
	eh_frame_hdr__free(h);
}

/* Every byte changed and every prefix, in several layouts: never a crash. */
TEST(eh_frame_hdr_survives_damage)
{
	static const uint8_t vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01};
	static const size_t which[] = {0, 1, 2, 4, 9, 11};
	struct eh_frame_hdr *h = NULL;
	size_t w, i, j, hdr_size, total;
	struct built b;

	for (w = 0; w < sizeof(which) / sizeof(which[0]); w++) {
		build(&layouts[which[w]], &b);
		hdr_size = b.sec.hdr_size;
		total = hdr_size + b.sec.eh_frame_size;
		unbuild(&b);
		for (i = 0; i < total; i++)
			for (j = 0; j < sizeof(vals); j++) {
				build(&layouts[which[w]], &b);
				if (i < hdr_size)
					b.hdr[i] = vals[j];
				else
					b.ehf[i - hdr_size] = vals[j];
				poke(&b);
				unbuild(&b);
			}
		for (i = 0; i <= total; i++) {
			build(&layouts[which[w]], &b);
			if (i < hdr_size)
				b.sec.hdr_size = i;
			else
				b.sec.eh_frame_size = i - hdr_size;
			/* A header cut short loses part of its table. */
			if (i < hdr_size)
				CHECK(eh_frame_hdr__new(&b.sec, &h) != 0);
			poke(&b);
			unbuild(&b);
		}
	}
}

/*
 * An ELF image around built sections: one PT_LOAD from offset 0 at address
 * 0, so file offsets are addresses, and a PT_GNU_EH_FRAME on the header.
 */
static uint8_t *build_elf(const struct layout *l, size_t *size)
{
	struct built b;
	uint8_t *img;
	size_t n;

	build(l, &b);
	n = EHF_VADDR + b.sec.eh_frame_size;
	img = calloc(1, n);
	CHECK(img);
	memcpy(img + HDR_VADDR, b.hdr, b.sec.hdr_size);
	memcpy(img + EHF_VADDR, b.ehf, b.sec.eh_frame_size);
	memcpy(img, ELFMAG, SELFMAG);
	img[EI_DATA] = ELFDATA2LSB;
	img[EI_VERSION] = EV_CURRENT;
	if (l->addr_size == 8) {
		Elf64_Ehdr eh = {.e_type = ET_DYN, .e_phoff = sizeof(eh), .e_phnum = 2};
		Elf64_Phdr ph[2] = {{.p_type = PT_LOAD, .p_filesz = n, .p_memsz = n},
				    {.p_type = PT_GNU_EH_FRAME,
				     .p_offset = HDR_VADDR,
				     .p_vaddr = HDR_VADDR,
				     .p_filesz = b.sec.hdr_size}};

		img[EI_CLASS] = ELFCLASS64;
		memcpy(eh.e_ident, img, EI_NIDENT);
		eh.e_phentsize = sizeof(ph[0]);
		memcpy(img, &eh, sizeof(eh));
		memcpy(img + sizeof(eh), ph, sizeof(ph));
	} else {
		Elf32_Ehdr eh = {.e_type = ET_DYN, .e_phoff = sizeof(eh), .e_phnum = 2};
		Elf32_Phdr ph[2] = {{.p_type = PT_LOAD, .p_filesz = n, .p_memsz = n},
				    {.p_type = PT_GNU_EH_FRAME,
				     .p_offset = HDR_VADDR,
				     .p_vaddr = HDR_VADDR,
				     .p_filesz = b.sec.hdr_size}};

		img[EI_CLASS] = ELFCLASS32;
		memcpy(eh.e_ident, img, EI_NIDENT);
		eh.e_phentsize = sizeof(ph[0]);
		memcpy(img, &eh, sizeof(eh));
		memcpy(img + sizeof(eh), ph, sizeof(ph));
	}
	unbuild(&b);
	*size = n;
	return img;
}

TEST(eh_frame_hdr_from_elf32_and_elf64_images)
{
	static const size_t which[] = {0, 9};
	struct eh_frame_hdr *h = NULL;
	size_t w, size;
	uint8_t *img;

	for (w = 0; w < 2; w++) {
		img = build_elf(&layouts[which[w]], &size);
		CHECK_INT(eh_frame_hdr__from_elf(img, size, &h), ==, 0);
		check_lookups(h, &layouts[which[w]]);
		eh_frame_hdr__free(h);
		/* .eh_frame past the end of the loaded bytes */
		CHECK(eh_frame_hdr__from_elf(img, EHF_VADDR, &h) != 0);
		free(img);
	}
}

/* An ELF image: no PT_GNU_EH_FRAME, a foreign byte order, truncated headers, damage. */
TEST(eh_frame_hdr_from_elf_refuses_bad_images)
{
	struct eh_frame_hdr *h = NULL;
	struct cfi_fde fde;
	const char *path = test_build_fixture("known_tree");
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint8_t *image, *copy;
	size_t size, i, n, cfi_off = 0, cfi_size = 0;

	image = test_read_file(path, &size);
	CHECK_INT(eh_frame_hdr__from_elf(image, 10, &h), ==, -ENOEXEC);
	CHECK_INT(eh_frame_hdr__from_elf(image, sizeof(eh) - 1, &h), ==, -ENOEXEC);
	CHECK_INT(eh_frame_hdr__from_elf(NULL, 0, &h), ==, -ENOEXEC);
	memcpy(&eh, image, sizeof(eh));
	CHECK_INT(eh_frame_hdr__from_elf(image, eh.e_phoff + eh.e_phentsize, &h), ==, -ENOEXEC);
	image[EI_DATA] = image[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	CHECK_INT(eh_frame_hdr__from_elf(image, size, &h), ==, -EOPNOTSUPP);
	image[EI_DATA] = image[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	for (i = 0; i < eh.e_phnum; i++) {
		memcpy(&ph, image + eh.e_phoff + i * eh.e_phentsize, sizeof(ph));
		if (ph.p_type == PT_GNU_EH_FRAME) {
			/* Its header and the .eh_frame that follows. */
			cfi_off = ph.p_offset;
			cfi_size = ph.p_filesz + 0x200 < size - cfi_off ? ph.p_filesz + 0x200
									: size - cfi_off;
			ph.p_type = PT_NULL;
			memcpy(image + eh.e_phoff + i * eh.e_phentsize, &ph, sizeof(ph));
		}
	}
	CHECK_INT(eh_frame_hdr__from_elf(image, size, &h), ==, -ENOENT);
	free(image);

	/* Every byte of the headers and of the CFI changed; every prefix of the file. */
	image = test_read_file(path, &size);
	n = eh.e_phoff + eh.e_phnum * eh.e_phentsize;
	for (i = 0; i < n + cfi_size; i++) {
		copy = malloc(size);
		CHECK(copy);
		memcpy(copy, image, size);
		copy[i < n ? i : cfi_off + i - n] ^= 0xa5;
		if (eh_frame_hdr__from_elf(copy, size, &h) == 0) {
			eh_frame_hdr__find(h, eh.e_entry, &fde);
			eh_frame_hdr__free(h);
		}
		free(copy);
	}
	for (i = 0; i < size; i += 61) {
		copy = malloc(i ? i : 1);
		CHECK(copy);
		memcpy(copy, image, i);
		if (eh_frame_hdr__from_elf(copy, i, &h) == 0) {
			eh_frame_hdr__find(h, eh.e_entry, &fde);
			eh_frame_hdr__free(h);
		}
		free(copy);
	}
	free(image);
}
