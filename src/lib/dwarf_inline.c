// SPDX-License-Identifier: MIT
/*
 * Inlined calls from .debug_info; see dwarf_inline.h. The format: DWARF 5
 * sections 7.5 (units, abbreviations, forms) and 2.17 (code addresses and
 * ranges), and DWARF 4's.
 *
 * A batch reads each unit whose own ranges cover an address asked for,
 * DIE by DIE, and notes each subprogram or inlined call whose ranges
 * cover one (in the order of the tree, so an address's notes go from the
 * outside in); then it builds each address's chain from its notes and
 * names the calls, following references, once the walk is over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dwarf_cursor.h"
#include "lib/dwarf_inline.h"
#include "lib/load_budget.h"

enum {
	TAG_INLINED = 0x1d,
	TAG_SUBPROGRAM = 0x2e,
	AT_NAME = 0x03,
	AT_STMT_LIST = 0x10,
	AT_LOW_PC = 0x11,
	AT_HIGH_PC = 0x12,
	AT_ORIGIN = 0x31,
	AT_SPECIFICATION = 0x47,
	AT_RANGES = 0x55,
	AT_CALL_FILE = 0x58,
	AT_CALL_LINE = 0x59,
	AT_LINKAGE_NAME = 0x6e,
	AT_STR_OFFSETS_BASE = 0x72,
	AT_ADDR_BASE = 0x73,
	AT_RNGLISTS_BASE = 0x74,
	AT_MIPS_LINKAGE_NAME = 0x2007,
	FORM_ADDR = 0x01,
	FORM_BLOCK2 = 0x03,
	FORM_BLOCK4,
	FORM_DATA2,
	FORM_DATA4,
	FORM_DATA8,
	FORM_STRING,
	FORM_BLOCK,
	FORM_BLOCK1,
	FORM_DATA1,
	FORM_FLAG,
	FORM_SDATA,
	FORM_STRP,
	FORM_UDATA,
	FORM_REF_ADDR,
	FORM_REF1,
	FORM_REF2,
	FORM_REF4,
	FORM_REF8,
	FORM_REF_UDATA,
	FORM_INDIRECT,
	FORM_SEC_OFFSET,
	FORM_EXPRLOC,
	FORM_FLAG_PRESENT,
	FORM_STRX,
	FORM_ADDRX,
	FORM_REF_SUP4,
	FORM_STRP_SUP,
	FORM_DATA16,
	FORM_LINE_STRP,
	FORM_REF_SIG8,
	FORM_IMPLICIT_CONST,
	FORM_LOCLISTX,
	FORM_RNGLISTX,
	FORM_REF_SUP8,
	FORM_STRX1,
	FORM_STRX2,
	FORM_STRX3,
	FORM_STRX4,
	FORM_ADDRX1,
	FORM_ADDRX2,
	FORM_ADDRX3,
	FORM_ADDRX4,
	FORM_GNU_ADDR_INDEX = 0x1f01,
	FORM_GNU_STR_INDEX,
	FORM_GNU_REF_ALT = 0x1f20,
	FORM_GNU_STRP_ALT,
};

/* Notes kept per batch (an address covered by a scope), past which the rest are capped. */
#define MAX_NOTES (1u << 20)

/* A bounded reader over dwarf_cursor: a failed read sets bad and yields 0. */
struct rd {
	struct dwarf_cursor c;
	bool bad;
};

static uint64_t rd_uint(struct rd *r, size_t n)
{
	uint64_t v = 0, hi = 0;

	if (n == 3) { /* strx3, addrx3 */
		v = rd_uint(r, 2);
		hi = rd_uint(r, 1);
		return v | hi << 16;
	}
	if (!r->bad && dwarf_cursor__int(&r->c, n, false, &v))
		r->bad = true;
	return r->bad ? 0 : v;
}

static uint64_t rd_leb(struct rd *r, bool is_signed)
{
	uint64_t v = 0;

	if (!r->bad && dwarf_cursor__leb(&r->c, is_signed, &v))
		r->bad = true;
	return r->bad ? 0 : v;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	const uint8_t *p;

	if (!r->bad && (n > SIZE_MAX || dwarf_cursor__take(&r->c, (size_t)n, &p)))
		r->bad = true;
}

static struct rd rd_at(const struct dwarf_section_bytes *s, uint64_t off)
{
	struct rd r = {{s->data, s->size, (size_t)off, 0}, off > s->size};

	return r;
}

struct attr_spec {
	uint32_t name;
	uint16_t form;
	int64_t implicit;
};

struct abbrev {
	uint64_t code;
	uint32_t tag, first, n; /* its specs: specs[first, first + n) */
	bool children;
};

/* One abbreviation table, sorted by code. */
struct abbrevs {
	uint64_t off;
	bool valid;
	struct abbrev *v;
	size_t n, cap;
	struct attr_spec *specs;
	size_t nspecs, specs_cap;
};

struct unit {
	uint64_t off, dies, end; /* in .debug_info: the header, the first DIE, the end */
	unsigned version, offset_size, addr_size;
	uint64_t abbrev_off, str_offsets_base, addr_base, rnglists_base, low_pc, stmt_list;
	bool has_stmt;
};

/* The attributes of one DIE this reader uses; have: bits 1 << slot. */
enum slot {
	S_NAME,
	S_LINKAGE,
	S_LOW,
	S_HIGH,
	S_RANGES,
	S_ORIGIN,
	S_SPEC,
	S_CALL_FILE,
	S_CALL_LINE,
	S_STMT,
	S_STR_OFFSETS,
	S_ADDR_BASE,
	S_RNGLISTS,
	S_SLOTS,
};

struct die {
	const struct abbrev *ab;
	uint64_t off;
	unsigned have;
	uint64_t v[S_SLOTS];
	uint16_t form[S_SLOTS];
};

/* An address covered by a scope: its index, the scope's DIE and depth, its unit. */
struct note {
	uint32_t addr, unit;
	uint16_t depth;
	bool inlined;
	uint32_t call_line;
	uint64_t die, call_file;
	size_t seq;
};

struct arena {
	char *p;
	size_t n, cap;
};

struct pass {
	const struct dwarf_section_bytes *secs;
	const uint64_t *addrs;
	size_t n;
	struct abbrevs ab;
	struct unit *units;
	size_t nunits, units_cap;
	struct note *notes;
	size_t nnotes, notes_cap;
	struct arena names;
	struct dwarf_inline_counts *counts;
	struct load_budget *budget;
	uint64_t dies;
	bool nomem, over, capped, unsupported;
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	q = reallocarray(p, c, size);
	if (q)
		*cap = c;
	return q;
}

/* --- abbreviations ------------------------------------------------------------------------ */

static int cmp_abbrev(const void *x, const void *y)
{
	const struct abbrev *a = x, *b = y;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* One abbreviation's attribute specs; false when malformed, capped or out of memory. */
static bool read_specs(struct pass *ps, struct rd *r, struct abbrev *a)
{
	struct abbrevs *t = &ps->ab;
	uint64_t name, form;
	void *p;

	a->first = (uint32_t)t->nspecs;
	for (;;) {
		name = rd_leb(r, false);
		form = rd_leb(r, false);
		if (r->bad || (!name && !form))
			return !r->bad;
		if (a->n == DWARF_MAX_ABBREV_ATTRS || form > 0xffff || name > UINT32_MAX) {
			ps->capped = true;
			return false;
		}
		p = grow(t->specs, &t->specs_cap, t->nspecs + 1, sizeof(*t->specs));
		if (!p) {
			ps->nomem = true;
			return false;
		}
		t->specs = p;
		t->specs[t->nspecs++] = (struct attr_spec){
			(uint32_t)name, (uint16_t)form,
			form == FORM_IMPLICIT_CONST ? (int64_t)rd_leb(r, true) : 0};
		a->n++;
	}
}

/* The table at off into ps->ab (kept while units share it); false when it cannot be read. */
static bool load_abbrevs(struct pass *ps, uint64_t off)
{
	struct abbrevs *t = &ps->ab;
	struct rd r = rd_at(&ps->secs[DWARF_ABBREV], off);
	struct abbrev a;
	void *p;

	if (t->valid && t->off == off)
		return true;
	t->valid = false;
	t->n = t->nspecs = 0;
	while ((a = (struct abbrev){.code = rd_leb(&r, false)}).code && !r.bad) {
		a.tag = (uint32_t)rd_leb(&r, false);
		a.children = rd_uint(&r, 1) != 0;
		if (t->n == DWARF_MAX_ABBREVS) {
			ps->capped = true;
			return false;
		}
		if (!read_specs(ps, &r, &a))
			return false;
		p = grow(t->v, &t->cap, t->n + 1, sizeof(*t->v));
		if (!p) {
			ps->nomem = true;
			return false;
		}
		t->v = p;
		t->v[t->n++] = a;
	}
	if (r.bad)
		return false;
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_abbrev);
	t->off = off;
	t->valid = true;
	return true;
}

static const struct abbrev *find_abbrev(const struct abbrevs *t, uint64_t code)
{
	size_t a = 0, b = t->n, m;

	if (code && code <= t->n && t->v[code - 1].code == code)
		return &t->v[code - 1];
	while (a < b) {
		m = a + (b - a) / 2;
		if (t->v[m].code < code)
			a = m + 1;
		else if (t->v[m].code > code)
			b = m;
		else
			return &t->v[m];
	}
	return NULL;
}

/* --- forms and DIEs ----------------------------------------------------------------------- */

/*
 * A value of form: numbers as they are, references as .debug_info offsets,
 * in-line strings as the offset of their first byte; blocks skipped.
 * false for a form this reader does not know (or an indirect one's loop).
 */
static bool read_form(struct rd *r, const struct unit *u, unsigned form, int64_t implicit,
		      uint64_t *v, uint16_t *final)
{
	static const uint8_t fixed[] = {
		[FORM_DATA1] = 1,  [FORM_REF1] = 1,	[FORM_FLAG] = 1,     [FORM_STRX1] = 1,
		[FORM_ADDRX1] = 1, [FORM_DATA2] = 2,	[FORM_REF2] = 2,     [FORM_STRX2] = 2,
		[FORM_ADDRX2] = 2, [FORM_STRX3] = 3,	[FORM_ADDRX3] = 3,   [FORM_DATA4] = 4,
		[FORM_REF4] = 4,   [FORM_REF_SUP4] = 4, [FORM_STRX4] = 4,    [FORM_ADDRX4] = 4,
		[FORM_DATA8] = 8,  [FORM_REF8] = 8,	[FORM_REF_SIG8] = 8, [FORM_REF_SUP8] = 8,
	};
	uint64_t start = r->c.pos;

	*final = (uint16_t)form;
	if (form == FORM_INDIRECT) {
		form = (unsigned)rd_leb(r, false);
		if (form == FORM_INDIRECT || form == FORM_IMPLICIT_CONST) /* a loop, or no value */
			return false;
		return read_form(r, u, form, 0, v, final);
	}
	*v = 0;
	if (form < sizeof(fixed) && fixed[form]) {
		*v = rd_uint(r, fixed[form]);
		if (form >= FORM_REF1 && form <= FORM_REF8)
			*v += u->off;
		return true;
	}
	switch (form) {
	case FORM_ADDR:
		*v = rd_uint(r, u->addr_size);
		return true;
	case FORM_REF_ADDR:
		*v = rd_uint(r, u->version <= 2 ? u->addr_size : u->offset_size);
		return true;
	case FORM_STRP:
	case FORM_LINE_STRP:
	case FORM_SEC_OFFSET:
	case FORM_STRP_SUP:
	case FORM_GNU_REF_ALT:
	case FORM_GNU_STRP_ALT:
		*v = rd_uint(r, u->offset_size);
		return true;
	case FORM_SDATA:
		*v = rd_leb(r, true);
		return true;
	case FORM_REF_UDATA:
		*v = rd_leb(r, false) + u->off;
		return true;
	case FORM_UDATA:
	case FORM_STRX:
	case FORM_ADDRX:
	case FORM_LOCLISTX:
	case FORM_RNGLISTX:
	case FORM_GNU_ADDR_INDEX:
	case FORM_GNU_STR_INDEX:
		*v = rd_leb(r, false);
		return true;
	case FORM_STRING:
		*v = start;
		while (rd_uint(r, 1))
			;
		return true;
	case FORM_BLOCK1:
	case FORM_BLOCK2:
	case FORM_BLOCK4:
		rd_skip(r, rd_uint(r, form == FORM_BLOCK1 ? 1 : form == FORM_BLOCK2 ? 2 : 4));
		return true;
	case FORM_BLOCK:
	case FORM_EXPRLOC:
		rd_skip(r, rd_leb(r, false));
		return true;
	case FORM_DATA16:
		rd_skip(r, 16);
		return true;
	case FORM_FLAG_PRESENT:
		*v = 1;
		return true;
	case FORM_IMPLICIT_CONST:
		*v = (uint64_t)implicit;
		return true;
	}
	return false;
}

static int slot_of(uint32_t at)
{
	switch (at) {
	case AT_NAME:
		return S_NAME;
	case AT_LINKAGE_NAME:
	case AT_MIPS_LINKAGE_NAME:
		return S_LINKAGE;
	case AT_LOW_PC:
		return S_LOW;
	case AT_HIGH_PC:
		return S_HIGH;
	case AT_RANGES:
		return S_RANGES;
	case AT_ORIGIN:
		return S_ORIGIN;
	case AT_SPECIFICATION:
		return S_SPEC;
	case AT_CALL_FILE:
		return S_CALL_FILE;
	case AT_CALL_LINE:
		return S_CALL_LINE;
	case AT_STMT_LIST:
		return S_STMT;
	case AT_STR_OFFSETS_BASE:
		return S_STR_OFFSETS;
	case AT_ADDR_BASE:
		return S_ADDR_BASE;
	case AT_RNGLISTS_BASE:
		return S_RNGLISTS;
	}
	return -1;
}

/*
 * The DIE at r into d (d->ab NULL: a null entry ending siblings). false
 * when malformed (bad_units) or of an unknown form (unsupported).
 */
static bool read_die(struct pass *ps, struct rd *r, const struct unit *u, struct die *d)
{
	const struct attr_spec *s;
	uint64_t code, v;
	uint16_t form;
	uint32_t i;
	int slot;

	d->off = r->c.pos;
	d->have = 0;
	code = rd_leb(r, false);
	d->ab = code ? find_abbrev(&ps->ab, code) : NULL;
	if (r->bad || (code && !d->ab))
		return false;
	for (i = 0; d->ab && i < d->ab->n; i++) {
		s = &ps->ab.specs[d->ab->first + i];
		if (!read_form(r, u, s->form, s->implicit, &v, &form)) {
			ps->unsupported = true;
			return false;
		}
		slot = slot_of(s->name);
		if (slot >= 0) {
			d->have |= 1u << slot;
			d->v[slot] = v;
			d->form[slot] = form;
		}
	}
	return !r->bad;
}

static bool has(const struct die *d, enum slot s)
{
	return d->have & 1u << s;
}

/* Entry idx of an index section (.debug_addr, .debug_str_offsets) at base: false if outside. */
static bool indexed(const struct dwarf_section_bytes *s, uint64_t base, uint64_t idx, unsigned size,
		    uint64_t *v)
{
	struct rd r;

	if (idx > s->size / size)
		return false;
	r = rd_at(s, base + idx * size);
	*v = rd_uint(&r, size);
	return !r.bad;
}

/* The address of a DW_AT_low_pc (or a range list's entry) of form; false: none. */
static bool address(struct pass *ps, const struct unit *u, uint16_t form, uint64_t v, uint64_t *a)
{
	if (form == FORM_ADDR) {
		*a = v;
		return true;
	}
	if (form == FORM_ADDRX || form == FORM_GNU_ADDR_INDEX ||
	    (form >= FORM_ADDRX1 && form <= FORM_ADDRX4))
		return indexed(&ps->secs[DWARF_ADDR], u->addr_base, v, u->addr_size, a);
	return false;
}

/* --- ranges and notes --------------------------------------------------------------------- */

/* The first index of an address at or above lo. */
static size_t first_at(const struct pass *ps, uint64_t lo)
{
	size_t a = 0, b = ps->n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (ps->addrs[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* What a covered range does: a unit's only asks whether, a scope's notes its addresses. */
struct cover {
	const struct die *d;
	uint32_t unit;
	uint16_t depth;
	bool any;
};

static void cover(struct pass *ps, struct cover *cv, uint64_t lo, uint64_t hi)
{
	size_t i = first_at(ps, lo);
	struct note *n;

	for (; i < ps->n && ps->addrs[i] < hi; i++) {
		cv->any = true;
		if (!cv->d)
			return;
		if (ps->nnotes == MAX_NOTES) {
			ps->capped = true;
			return;
		}
		n = grow(ps->notes, &ps->notes_cap, ps->nnotes + 1, sizeof(*n));
		if (!n) {
			ps->nomem = true;
			return;
		}
		ps->notes = n;
		ps->notes[ps->nnotes] = (struct note){
			.addr = (uint32_t)i,
			.unit = cv->unit,
			.depth = cv->depth,
			.inlined = cv->d->ab->tag == TAG_INLINED,
			.call_line = (uint32_t)cv->d->v[S_CALL_LINE],
			.die = cv->d->off,
			.call_file = has(cv->d, S_CALL_FILE) ? cv->d->v[S_CALL_FILE] : UINT64_MAX,
			.seq = ps->nnotes,
		};
		ps->nnotes++;
	}
}

/* DWARF 4's .debug_ranges list at off: pairs of addresses, base selections, (0, 0) last. */
static void ranges_v4(struct pass *ps, const struct unit *u, uint64_t off, struct cover *cv)
{
	struct rd r = rd_at(&ps->secs[DWARF_RANGES], off);
	uint64_t base = u->low_pc, lo, hi, max = u->addr_size == 4 ? UINT32_MAX : UINT64_MAX;

	while (!r.bad && !ps->nomem) {
		lo = rd_uint(&r, u->addr_size);
		hi = rd_uint(&r, u->addr_size);
		if (r.bad || (!lo && !hi))
			return;
		if (lo == max)
			base = hi;
		else
			cover(ps, cv, base + lo, base + hi);
	}
}

/* DWARF 5's .debug_rnglists list at off (DW_RLE_* entries, 0 last). */
static void ranges_v5(struct pass *ps, const struct unit *u, uint64_t off, struct cover *cv)
{
	struct rd r = rd_at(&ps->secs[DWARF_RNGLISTS], off);
	uint64_t base = u->low_pc, a, b;
	uint8_t kind;
	bool ok;

	while (!r.bad && !ps->nomem && (kind = (uint8_t)rd_uint(&r, 1))) {
		ok = true;
		a = kind == 5 || kind == 6 || kind == 7 ? rd_uint(&r, u->addr_size)
							: rd_leb(&r, false);
		b = kind == 1 || kind == 5 ? 0
		    : kind == 6		   ? rd_uint(&r, u->addr_size)
					   : rd_leb(&r, false);
		if (kind <= 3)
			ok = address(ps, u, FORM_ADDRX, a, &a);
		if (kind == 2)
			ok = ok && address(ps, u, FORM_ADDRX, b, &b);
		if (!ok || kind > 7)
			return;
		if (kind == 1 || kind == 5)
			base = a;
		else if (kind == 4)
			cover(ps, cv, base + a, base + b);
		else if (kind == 3 || kind == 7)
			cover(ps, cv, a, a + b);
		else
			cover(ps, cv, a, b);
	}
}

/* Runs cv over the code ranges of d (none: nothing). */
static void covered(struct pass *ps, const struct unit *u, const struct die *d, struct cover *cv)
{
	uint64_t lo, hi, off;

	if (has(d, S_RANGES)) {
		off = d->v[S_RANGES];
		if (u->version < 5) {
			ranges_v4(ps, u, off, cv);
			return;
		}
		if (d->form[S_RANGES] == FORM_RNGLISTX &&
		    !(indexed(&ps->secs[DWARF_RNGLISTS], u->rnglists_base, off, u->offset_size,
			      &off) &&
		      (off += u->rnglists_base, true)))
			return;
		ranges_v5(ps, u, off, cv);
	} else if (has(d, S_LOW) && has(d, S_HIGH) &&
		   address(ps, u, d->form[S_LOW], d->v[S_LOW], &lo)) {
		hi = d->v[S_HIGH];
		if (address(ps, u, d->form[S_HIGH], hi, &hi) || d->form[S_HIGH] == FORM_ADDR)
			cover(ps, cv, lo, hi);
		else
			cover(ps, cv, lo, lo + hi);
	}
}

/* --- units -------------------------------------------------------------------------------- */

/* The header of the unit at *off into u, *off past the unit; false when the rest cannot be found.
 */
static bool read_header(struct pass *ps, uint64_t *off, struct unit *u)
{
	struct rd r = rd_at(&ps->secs[DWARF_INFO], *off);
	uint64_t len = rd_uint(&r, 4);
	uint8_t type = 1;

	*u = (struct unit){.off = *off, .offset_size = 4};
	if (len == 0xffffffffu) {
		u->offset_size = 8;
		len = rd_uint(&r, 8);
	} else if (len >= 0xfffffff0u) {
		r.bad = true;
	}
	if (r.bad || len > r.c.size - r.c.pos)
		return false;
	u->end = r.c.pos + len;
	*off = u->end;
	r.c.size = (size_t)u->end;
	u->version = (unsigned)rd_uint(&r, 2);
	if (u->version >= 5) {
		type = (uint8_t)rd_uint(&r, 1);
		u->addr_size = (unsigned)rd_uint(&r, 1);
	}
	u->abbrev_off = rd_uint(&r, u->offset_size);
	if (u->version < 5)
		u->addr_size = (unsigned)rd_uint(&r, 1);
	if (type == 4 || type == 5) /* skeleton, split compile: the DWO's id */
		rd_uint(&r, 8);
	u->dies = r.c.pos;
	if (u->version < 2 || u->version > 5 || (type != 1 && type != 3 && type != 4) ||
	    (u->addr_size != 4 && u->addr_size != 8))
		u->version = 0; /* known length, unknown content: skipped */
	return !r.bad;
}

/* A unit's bases, from its first DIE. */
static void unit_bases(struct pass *ps, struct unit *u, const struct die *d)
{
	u->str_offsets_base = has(d, S_STR_OFFSETS) ? d->v[S_STR_OFFSETS] : 8;
	u->addr_base = has(d, S_ADDR_BASE) ? d->v[S_ADDR_BASE] : 8;
	u->rnglists_base = has(d, S_RNGLISTS) ? d->v[S_RNGLISTS] : 12;
	u->has_stmt = has(d, S_STMT);
	u->stmt_list = d->v[S_STMT];
	if (!has(d, S_LOW) || !address(ps, u, d->form[S_LOW], d->v[S_LOW], &u->low_pc))
		u->low_pc = 0;
}

/* Whether the DIEs are over a cap or the run's time (then ps says why). */
static bool stop_walk(struct pass *ps, unsigned depth)
{
	if (++ps->dies > DWARF_MAX_DIES || depth >= DWARF_MAX_DEPTH)
		ps->capped = true;
	else if (ps->dies % LOAD_CHECK_EVERY == 0 && load_budget__over(ps->budget))
		ps->over = true;
	return ps->capped || ps->over || ps->nomem;
}

/* The DIEs of unit ui below its first, d: the scopes that cover addresses noted. */
static bool walk_dies(struct pass *ps, uint32_t ui, struct rd *r, struct die *d)
{
	const struct unit *u = &ps->units[ui];
	unsigned depth = d->ab->children ? 1 : 0;
	struct cover cv;

	while (depth && r->c.pos < r->c.size) {
		if (stop_walk(ps, depth))
			return true;
		if (!read_die(ps, r, u, d))
			return false;
		if (!d->ab) {
			depth--;
			continue;
		}
		if (d->ab->tag == TAG_SUBPROGRAM || d->ab->tag == TAG_INLINED) {
			cv = (struct cover){d, ui, (uint16_t)depth, false};
			covered(ps, u, d, &cv);
		}
		depth += d->ab->children;
	}
	return true;
}

/* One unit: its header noted, its DIEs walked if its ranges cover an address. */
static bool read_unit(struct pass *ps, uint64_t *off)
{
	struct unit u, *v;
	struct cover cv = {0};
	struct die d;
	struct rd r;
	bool ok;

	if (!read_header(ps, off, &u)) {
		ps->counts->bad_units++;
		return false;
	}
	ps->counts->units++;
	if (!u.version) {
		ps->counts->unsupported++;
		return true;
	}
	r = rd_at(&ps->secs[DWARF_INFO], u.dies);
	r.c.size = (size_t)u.end;
	ps->unsupported = false;
	ok = load_abbrevs(ps, u.abbrev_off) && read_die(ps, &r, &u, &d) && d.ab;
	if (ok)
		unit_bases(ps, &u, &d);
	v = grow(ps->units, &ps->units_cap, ps->nunits + 1, sizeof(*v));
	if (!v) {
		ps->nomem = true;
		return false;
	}
	ps->units = v;
	ps->units[ps->nunits++] = u;
	if (ok) {
		covered(ps, &u, &d, &cv);
		if (cv.any || !(has(&d, S_RANGES) || has(&d, S_LOW)))
			ok = walk_dies(ps, (uint32_t)ps->nunits - 1, &r, &d);
	}
	if (!ok && !ps->nomem && !ps->capped)
		ps->unsupported ? ps->counts->unsupported++ : ps->counts->bad_units++;
	if (ps->capped)
		ps->counts->capped++;
	ps->capped = false;
	return true;
}

/* --- names -------------------------------------------------------------------------------- */

/* Appends s (len bytes) and a NUL to the arena; its offset + 1, or 0 without memory. */
static uint32_t arena_add(struct pass *ps, const char *s, size_t len)
{
	struct arena *a = &ps->names;
	char *p = grow(a->p, &a->cap, a->n + len + 1, 1);

	if (!p || a->n + len + 1 > UINT32_MAX - 1) {
		ps->nomem = !p;
		return 0;
	}
	a->p = p;
	memcpy(a->p + a->n, s, len);
	a->p[a->n + len] = '\0';
	a->n += len + 1;
	return (uint32_t)(a->n - len);
}

/* A string of form at v in unit u; NULL when outside its section or of another form. */
static const char *string(struct pass *ps, const struct unit *u, uint16_t form, uint64_t v)
{
	const struct dwarf_section_bytes *s = &ps->secs[DWARF_STR];

	if (form == FORM_STRING)
		s = &ps->secs[DWARF_INFO];
	else if (form == FORM_LINE_STRP)
		s = &ps->secs[DWARF_LINE_STR];
	else if (form == FORM_STRX || form == FORM_GNU_STR_INDEX ||
		 (form >= FORM_STRX1 && form <= FORM_STRX4)) {
		if (!indexed(&ps->secs[DWARF_STR_OFFSETS], u->str_offsets_base, v, u->offset_size,
			     &v))
			return NULL;
	} else if (form != FORM_STRP) {
		return NULL;
	}
	if (v >= s->size || !memchr((const char *)s->data + v, 0, s->size - v))
		return NULL;
	return (const char *)s->data + v;
}

/* The unit whose DIEs hold off (units are in section order). */
static const struct unit *unit_of(const struct pass *ps, uint64_t off)
{
	size_t a = 0, b = ps->nunits, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (ps->units[m].end <= off)
			a = m + 1;
		else
			b = m;
	}
	return a < ps->nunits && ps->units[a].off <= off && ps->units[a].version ? &ps->units[a]
										 : NULL;
}

/* A reference within this file's .debug_info (not a type signature's, nor another file's). */
static bool is_ref(uint16_t form)
{
	return form == FORM_REF_ADDR || form == FORM_REF_UDATA ||
	       (form >= FORM_REF1 && form <= FORM_REF8);
}

/*
 * The name of the DIE at off: a linkage name anywhere along its
 * references (abstract origin, then specification) before a plain one.
 * Its arena offset + 1, or 0: none.
 */
static uint32_t die_name(struct pass *ps, uint64_t off)
{
	const char *name = NULL, *linkage = NULL;
	const struct unit *u;
	unsigned hop;
	enum slot slot;
	struct die d;
	struct rd r;

	for (hop = 0; hop <= DWARF_MAX_REF_HOPS && !linkage; hop++) {
		u = unit_of(ps, off);
		if (!u || !load_abbrevs(ps, u->abbrev_off))
			break;
		r = rd_at(&ps->secs[DWARF_INFO], off);
		r.c.size = (size_t)u->end;
		if (!read_die(ps, &r, u, &d) || !d.ab)
			break;
		if (has(&d, S_LINKAGE))
			linkage = string(ps, u, d.form[S_LINKAGE], d.v[S_LINKAGE]);
		if (!name && has(&d, S_NAME))
			name = string(ps, u, d.form[S_NAME], d.v[S_NAME]);
		slot = has(&d, S_ORIGIN) ? S_ORIGIN : S_SPEC;
		if (!has(&d, slot) || !is_ref(d.form[slot]))
			break;
		off = d.v[slot];
		if (hop == DWARF_MAX_REF_HOPS)
			ps->counts
				->capped++; /* a loop of references, or a chain no compiler makes */
	}
	if (linkage)
		name = linkage;
	return name ? arena_add(ps, name, strlen(name)) : 0;
}

/* The last call file named, for the notes of one unit that repeat it. */
struct file_cache {
	uint64_t stmt, file;
	uint32_t at;
};

/* The name of a note's call file, through its unit's line table; 0: none. */
static uint32_t call_file(struct pass *ps, const struct note *n, struct file_cache *fc)
{
	const struct unit *u = &ps->units[n->unit];
	char *name = NULL;

	if (n->call_file == UINT64_MAX || !u->has_stmt)
		return 0;
	if (fc->at && fc->stmt == u->stmt_list && fc->file == n->call_file)
		return fc->at;
	if (dwarf_line__file_name(ps->secs, u->stmt_list, n->call_file, &name))
		return 0;
	*fc = (struct file_cache){u->stmt_list, n->call_file, arena_add(ps, name, strlen(name))};
	free(name);
	return fc->at;
}

/* --- chains ------------------------------------------------------------------------------- */

static int cmp_note(const void *x, const void *y)
{
	const struct note *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * The scopes of the address of notes[0, n) into chain (outermost first):
 * a subprogram starts it anew, an inlined call replaces the scopes at its
 * depth and below. Returns the count.
 */
static size_t chain_of(struct pass *ps, const struct note *notes, size_t n,
		       const struct note **chain)
{
	size_t k = 0, i;

	for (i = 0; i < n; i++) {
		if (!notes[i].inlined)
			k = 0;
		while (k && chain[k - 1]->depth >= notes[i].depth)
			k--;
		if (k == DWARF_MAX_INLINE_DEPTH + 1) {
			ps->counts->capped++;
			continue;
		}
		chain[k++] = &notes[i];
	}
	return k;
}

/* Offsets (+ 1) in the arena while it grows; made pointers at the end. */
struct slot_frame {
	uint32_t name, file, line;
};

struct answer_slots {
	uint32_t first, n, subprogram;
};

static int build_answers(struct pass *ps, struct dwarf_inline_answer *out, void **mem)
{
	const struct note *chain[DWARF_MAX_INLINE_DEPTH + 1];
	struct answer_slots *as = calloc(ps->n, sizeof(*as));
	struct slot_frame *sf = NULL;
	size_t i, j, k, m, nsf = 0, sf_cap = 0, top;
	struct file_cache fc = {0};
	void *p;
	char *base;

	if (!as)
		return -ENOMEM;
	if (ps->nnotes)
		qsort(ps->notes, ps->nnotes, sizeof(*ps->notes), cmp_note);
	for (i = 0; i < ps->nnotes && !ps->nomem; i = j) {
		for (j = i + 1; j < ps->nnotes && ps->notes[j].addr == ps->notes[i].addr; j++)
			;
		k = chain_of(ps, ps->notes + i, j - i, chain);
		top = k && !chain[0]->inlined;
		as[ps->notes[i].addr] = (struct answer_slots){
			(uint32_t)nsf, (uint32_t)(k - top), top ? die_name(ps, chain[0]->die) : 0};
		if (!(p = grow(sf, &sf_cap, nsf + k + 1, sizeof(*sf)))) {
			ps->nomem = true;
			break;
		}
		sf = p;
		for (m = k; m > top; m--) /* innermost first */
			sf[nsf++] = (struct slot_frame){die_name(ps, chain[m - 1]->die),
							call_file(ps, chain[m - 1], &fc),
							chain[m - 1]->call_line};
	}
	*mem = ps->nomem ? NULL : malloc(nsf * sizeof(struct dwarf_inline_frame) + ps->names.n + 1);
	if (*mem) {
		struct dwarf_inline_frame *f = *mem;

		base = (char *)(f + nsf);
		memcpy(base, ps->names.p ? ps->names.p : "", ps->names.n);
		for (i = 0; i < nsf; i++)
			f[i] = (struct dwarf_inline_frame){
				sf[i].name ? base + sf[i].name - 1 : NULL,
				sf[i].file ? base + sf[i].file - 1 : NULL, sf[i].line};
		for (i = 0; i < ps->n; i++)
			out[i] = (struct dwarf_inline_answer){
				f + as[i].first, as[i].n,
				as[i].subprogram ? base + as[i].subprogram - 1 : NULL};
	}
	free(sf);
	free(as);
	return *mem ? 0 : -ENOMEM;
}

int dwarf_inline__lookup(const struct dwarf_section_bytes secs[DWARF_SECTIONS],
			 const uint64_t *addrs, size_t n, struct dwarf_inline_answer *out,
			 void **mem, struct dwarf_inline_counts *counts, struct load_budget *budget)
{
	struct pass ps = {.secs = secs, .addrs = addrs, .n = n, .counts = counts, .budget = budget};
	uint64_t off = 0;
	int err;

	*mem = NULL;
	memset(out, 0, n * sizeof(*out));
	if (!secs[DWARF_INFO].size)
		return -ENOENT;
	if (!n)
		return 0;
	while (off < secs[DWARF_INFO].size && !ps.nomem && !ps.over && ps.dies <= DWARF_MAX_DIES &&
	       read_unit(&ps, &off))
		;
	err = ps.nomem ? -ENOMEM : ps.over ? -ETIME : build_answers(&ps, out, mem);
	free(ps.ab.v);
	free(ps.ab.specs);
	free(ps.units);
	free(ps.notes);
	free(ps.names.p);
	if (err)
		memset(out, 0, n * sizeof(*out));
	return err;
}

int dwarf_ctx__inlines(struct dwarf_ctx *c, const uint64_t *addrs, size_t n,
		       struct dwarf_inline_answer *out, struct dwarf_inline_counts *counts,
		       struct load_budget *budget)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS];
	void *bufs[DWARF_SECTIONS], **mem = dwarf_ctx__answers(c);
	unsigned mask = 1u << DWARF_LINE | 1u << DWARF_LINE_STR | 1u << DWARF_STR |
			1u << DWARF_INFO | 1u << DWARF_ABBREV | 1u << DWARF_STR_OFFSETS |
			1u << DWARF_ADDR | 1u << DWARF_RANGES | 1u << DWARF_RNGLISTS;
	int i, err;

	memset(out, 0, n * sizeof(*out));
	free(*mem);
	*mem = NULL;
	err = dwarf_ctx__inflate(c, mask, secs, bufs, budget);
	if (!err)
		err = dwarf_inline__lookup(secs, addrs, n, out, mem, counts, budget);
	for (i = 0; i < DWARF_SECTIONS; i++)
		free(bufs[i]);
	return err;
}
