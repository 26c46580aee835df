// SPDX-License-Identifier: MIT
/*
 * DWARF line table reader; see dwarf_line.h. The format: DWARF 5 section
 * 6.2 (and DWARF 2-4's, a subset but for the header's file tables).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/dwarf_line.h"
#include "lib/load_budget.h"
#include "lib/dwarf_cursor.h"

/* Standard, extended opcodes, forms and content types used here (DWARF 5, 7.22 and 7.5.6). */
enum {
	LNS_COPY = 1,
	LNS_ADVANCE_PC,
	LNS_ADVANCE_LINE,
	LNS_SET_FILE,
	LNS_SET_COLUMN,
	LNS_NEGATE_STMT,
	LNS_SET_BASIC_BLOCK,
	LNS_CONST_ADD_PC,
	LNS_FIXED_ADVANCE_PC,
	LNE_END_SEQUENCE = 1,
	LNE_SET_ADDRESS,
	LNE_DEFINE_FILE,
	FORM_BLOCK2 = 0x03,
	FORM_BLOCK4 = 0x04,
	FORM_DATA2 = 0x05,
	FORM_DATA4 = 0x06,
	FORM_DATA8 = 0x07,
	FORM_STRING = 0x08,
	FORM_BLOCK = 0x09,
	FORM_BLOCK1 = 0x0a,
	FORM_DATA1 = 0x0b,
	FORM_STRP = 0x0e,
	FORM_UDATA = 0x0f,
	FORM_DATA16 = 0x1e,
	FORM_LINE_STRP = 0x1f,
	LNCT_PATH = 1,
	LNCT_DIRECTORY_INDEX = 2,
};

#define ELFCOMPRESS_ZLIB_ 1

/* A bounded reader: a read past the end sets bad and yields 0, so callers check once. */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static bool need(struct cursor *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return false;
	}
	return true;
}

static uint64_t read_uint(struct cursor *c, unsigned size)
{
	uint64_t v = 0;

	if (!need(c, size))
		return 0;
	memcpy(&v, c->p, size); /* little-endian hosts only, as the rest of cprof */
	c->p += size;
	return v;
}

/* LEB128, through the CFI reader's bounded cursor. */
static uint64_t read_leb(struct cursor *c, bool is_signed)
{
	struct dwarf_cursor d = {c->p, c->bad ? 0 : (size_t)(c->end - c->p), 0, 0};
	uint64_t v = 0;

	if (dwarf_cursor__leb(&d, is_signed, &v)) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	c->p += d.pos;
	return v;
}

static uint64_t read_uleb(struct cursor *c)
{
	return read_leb(c, false);
}

static int64_t read_sleb(struct cursor *c)
{
	return (int64_t)read_leb(c, true);
}

static const char *read_cstr(struct cursor *c)
{
	const uint8_t *nul;
	const char *s;

	if (c->bad)
		return NULL;
	nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!nul) {
		need(c, (uint64_t)(c->end - c->p) + 1);
		return NULL;
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

static void skip(struct cursor *c, uint64_t n)
{
	if (need(c, n))
		c->p += n;
}

/* A string at off in a string section, or NULL when off or its end is outside it. */
static const char *section_str(const struct dwarf_section_bytes *s, uint64_t off)
{
	const char *base = s->data;

	if (!s->size || off >= s->size || !memchr(base + off, 0, s->size - off))
		return NULL;
	return base + off;
}

/* A unit's header, as far as rows and file names need it. */
struct unit {
	unsigned version;
	unsigned offset_size; /* 4, or 8 in the 64-bit format */
	unsigned addr_size;
	uint8_t min_inst;
	bool default_stmt;
	int8_t line_base;
	uint8_t line_range;
	uint8_t opcode_base;
	const uint8_t *opcode_lengths; /* opcode_base - 1 of them */
	const char **dirs;
	size_t ndirs;
	const char **files;
	uint64_t *file_dir;
	size_t nfiles;
	uint32_t *named; /* arena offset + 1 of each file's full name, 0: not made yet */
};

/* The names made for answers: offsets while the arena grows, pointers at the end. */
struct arena {
	char *p;
	size_t n, cap;
};

struct pass {
	const struct dwarf_section_bytes *secs;
	const uint64_t *addrs;
	size_t n;
	uint32_t *name_of; /* per address: arena offset + 1 of its file's name, 0: none */
	uint32_t *line_of;
	/*
	 * next[i]: an index at or after i whose address may still lack an
	 * answer (path-compressed), so that rows a hostile table repeats over
	 * the same range cost nothing once their addresses are answered.
	 */
	size_t *next;
	struct arena names;
	struct dwarf_line_counts *counts;
	struct load_budget *budget;
	uint64_t steps;
	bool nomem, over;
};

static void unit__free(struct unit *u)
{
	free(u->dirs);
	free(u->files);
	free(u->file_dir);
	free(u->named);
}

/* A string of form f, or NULL (with *unsupported for a form no string of ours takes). */
static const char *form_str(struct pass *ps, struct cursor *c, const struct unit *u, uint64_t form,
			    bool *unsupported)
{
	uint64_t off;

	switch (form) {
	case FORM_STRING:
		return read_cstr(c);
	case FORM_LINE_STRP:
	case FORM_STRP:
		off = read_uint(c, u->offset_size);
		return c->bad ? NULL
			      : section_str(
					&ps->secs[form == FORM_STRP ? DWARF_STR : DWARF_LINE_STR],
					off);
	default:
		*unsupported = true;
		return NULL;
	}
}

/* A value of form f that is a number (a directory index), or skipped; false: unknown form. */
static bool form_value(struct cursor *c, const struct unit *u, uint64_t form, uint64_t *v)
{
	*v = 0;
	switch (form) {
	case FORM_DATA1:
		*v = read_uint(c, 1);
		return true;
	case FORM_DATA2:
		*v = read_uint(c, 2);
		return true;
	case FORM_DATA4:
		*v = read_uint(c, 4);
		return true;
	case FORM_DATA8:
		*v = read_uint(c, 8);
		return true;
	case FORM_UDATA:
		*v = read_uleb(c);
		return true;
	case FORM_DATA16:
		skip(c, 16);
		return true;
	case FORM_BLOCK:
		skip(c, read_uleb(c));
		return true;
	case FORM_BLOCK1:
		skip(c, read_uint(c, 1));
		return true;
	case FORM_BLOCK2:
		skip(c, read_uint(c, 2));
		return true;
	case FORM_BLOCK4:
		skip(c, read_uint(c, 4));
		return true;
	case FORM_STRING:
		read_cstr(c);
		return true;
	case FORM_STRP:
	case FORM_LINE_STRP:
		skip(c, u->offset_size);
		return true;
	default:
		return false;
	}
}

/*
 * DWARF 5's directory or file table: a list of (content type, form), then
 * count entries of them. 0, -EBADMSG, -EOPNOTSUPP or -E2BIG.
 */
static int read_entries_v5(struct pass *ps, struct cursor *c, const struct unit *u,
			   const char ***names, uint64_t **dirs, size_t *count)
{
	uint64_t types[16], forms[16], nfmt = read_uint(c, 1), n, i, j, v;
	bool unsupported = false;
	const char *s;

	if (nfmt > 16)
		return -EOPNOTSUPP;
	for (i = 0; i < nfmt; i++) {
		types[i] = read_uleb(c);
		forms[i] = read_uleb(c);
	}
	n = read_uleb(c);
	if (c->bad)
		return -EBADMSG;
	if (n > DWARF_MAX_UNIT_FILES)
		return -E2BIG;
	*names = calloc(n ? n : 1, sizeof(**names));
	if (dirs)
		*dirs = calloc(n ? n : 1, sizeof(**dirs));
	if (!*names || (dirs && !*dirs))
		return -ENOMEM;
	*count = n;
	for (i = 0; i < n && !c->bad; i++) {
		for (j = 0; j < nfmt && !c->bad; j++) {
			if (types[j] == LNCT_PATH) {
				s = form_str(ps, c, u, forms[j], &unsupported);
				if (unsupported)
					return -EOPNOTSUPP;
				(*names)[i] = s;
			} else if (!form_value(c, u, forms[j], &v)) {
				return -EOPNOTSUPP;
			} else if (types[j] == LNCT_DIRECTORY_INDEX && dirs) {
				(*dirs)[i] = v;
			}
		}
	}
	return c->bad ? -EBADMSG : 0;
}

/* DWARF 2-4's: strings until an empty one (and for files, three numbers each). */
static int read_entries_v4(struct cursor *c, const char ***names, uint64_t **dirs, size_t *count)
{
	size_t n = 0, cap = 0;
	const char **nv;
	uint64_t *dv;
	const char *s;

	while ((s = read_cstr(c)) && *s) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if (cap > DWARF_MAX_UNIT_FILES)
				return -E2BIG;
			nv = reallocarray(*names, cap, sizeof(*nv));
			if (nv)
				*names = nv;
			dv = dirs ? reallocarray(*dirs, cap, sizeof(*dv)) : NULL;
			if (dv)
				*dirs = dv;
			if (!nv || (dirs && !dv))
				return -ENOMEM;
		}
		(*names)[n] = s;
		if (dirs) {
			(*dirs)[n] = read_uleb(c);
			read_uleb(c); /* modification time */
			read_uleb(c); /* size */
		}
		n++;
	}
	*count = n;
	return c->bad ? -EBADMSG : 0;
}

/* The header after unit_length and version, up to the program at *prog. */
static int read_header(struct pass *ps, struct cursor *c, struct unit *u, const uint8_t **prog)
{
	struct cursor h;
	uint64_t hlen;
	int err;

	if (u->version >= 5) {
		u->addr_size = (unsigned)read_uint(c, 1);
		read_uint(c, 1); /* segment selector size */
	}
	hlen = read_uint(c, u->offset_size);
	if (c->bad || hlen > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	*prog = c->p + hlen;
	h = (struct cursor){c->p, *prog, false};
	u->min_inst = (uint8_t)read_uint(&h, 1);
	if (u->version >= 4)
		read_uint(&h, 1); /* maximum operations per instruction: 1 but on VLIW */
	u->default_stmt = read_uint(&h, 1);
	u->line_base = (int8_t)read_uint(&h, 1);
	u->line_range = (uint8_t)read_uint(&h, 1);
	u->opcode_base = (uint8_t)read_uint(&h, 1);
	u->opcode_lengths = h.p;
	skip(&h, u->opcode_base ? u->opcode_base - 1u : 0);
	if (h.bad || !u->line_range || !u->opcode_base)
		return -EBADMSG;
	if (u->version >= 5) {
		err = read_entries_v5(ps, &h, u, &u->dirs, NULL, &u->ndirs);
		if (!err)
			err = read_entries_v5(ps, &h, u, &u->files, &u->file_dir, &u->nfiles);
	} else {
		err = read_entries_v4(&h, &u->dirs, NULL, &u->ndirs);
		if (!err)
			err = read_entries_v4(&h, &u->files, &u->file_dir, &u->nfiles);
	}
	if (err)
		return err;
	u->named = calloc(u->nfiles ? u->nfiles : 1, sizeof(*u->named));
	return u->named ? 0 : -ENOMEM;
}

/* Appends parts[0..n) joined by '/' (empty or NULL ones left out); *off: where, + 1. */
static bool arena__add(struct arena *a, const char *const *parts, int n, uint32_t *off)
{
	size_t need = 1, cap, len;
	char *p;
	int i;

	for (i = 0; i < n; i++)
		need += parts[i] ? strlen(parts[i]) + 1 : 0;
	if (a->n + need > UINT32_MAX - 1)
		return false;
	if (a->n + need > a->cap) {
		cap = a->cap ? 2 * a->cap : 4096;
		while (cap < a->n + need)
			cap *= 2;
		p = realloc(a->p, cap);
		if (!p)
			return false;
		a->p = p;
		a->cap = cap;
	}
	*off = (uint32_t)a->n + 1;
	len = 0;
	for (i = 0; i < n; i++) {
		if (!parts[i] || !parts[i][0])
			continue;
		if (len && a->p[a->n - 1] != '/')
			a->p[a->n++] = '/';
		memcpy(a->p + a->n, parts[i], strlen(parts[i]));
		a->n += strlen(parts[i]);
		len++;
	}
	a->p[a->n++] = '\0';
	return true;
}

/*
 * The name of a unit's file (a row's file register) in the arena, made at
 * its first use: joined to its directory unless absolute, and in DWARF 5
 * a relative directory to directory 0, the compilation directory. DWARF 5
 * counts files from 0, earlier versions from 1; their directory 0 is the
 * compilation directory, which only .debug_info names: left out.
 */
static uint32_t file_name(struct pass *ps, struct unit *u, uint64_t file)
{
	uint64_t i = u->version >= 5 ? file : file - 1, d;
	const char *parts[3] = {NULL, NULL, NULL};

	if (i >= u->nfiles || !u->files[i])
		return 0;
	if (u->named[i])
		return u->named[i];
	parts[2] = u->files[i];
	d = u->file_dir[i];
	if (parts[2][0] != '/') {
		if (u->version >= 5 && d < u->ndirs)
			parts[1] = u->dirs[d];
		else if (u->version < 5 && d >= 1 && d <= u->ndirs)
			parts[1] = u->dirs[d - 1];
		if (u->version >= 5 && d && parts[1] && parts[1][0] != '/' && u->ndirs)
			parts[0] = u->dirs[0];
	}
	if (!arena__add(&ps->names, parts, 3, &u->named[i])) {
		ps->nomem = true;
		return 0;
	}
	return u->named[i];
}

/* The first index at or after i without an answer (n: none). */
static size_t unanswered(struct pass *ps, size_t i)
{
	size_t root = i, up;

	while (ps->next[root] != root)
		root = ps->next[root];
	while (ps->next[i] != root) {
		up = ps->next[i];
		ps->next[i] = root;
		i = up;
	}
	return root;
}

/* The addresses in [lo, hi) take the row's file and line (the first row to cover one wins). */
static void cover(struct pass *ps, struct unit *u, uint64_t lo, uint64_t hi, uint64_t file,
		  uint64_t line)
{
	size_t a = 0, b = ps->n, m;
	uint32_t name = 0;

	while (a < b) {
		m = a + (b - a) / 2;
		if (ps->addrs[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	for (a = unanswered(ps, a); a < ps->n && ps->addrs[a] < hi; a = unanswered(ps, a + 1)) {
		if (!name)
			name = file_name(ps, u, file);
		if (!name)
			return;
		ps->name_of[a] = name;
		ps->line_of[a] = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
		ps->next[a] = a + 1;
	}
}

struct row {
	uint64_t addr, file, line;
	bool live; /* a row of the current sequence was emitted: the next closes its range */
};

/* Emits the registers as a row: the previous row covers up to here. */
static void emit(struct pass *ps, struct unit *u, struct row *prev, const struct row *r, bool end)
{
	if (prev->live) {
		if (r->addr > prev->addr)
			cover(ps, u, prev->addr, r->addr, prev->file, prev->line);
		else if (r->addr < prev->addr)
			ps->counts->backward_rows++;
	}
	*prev = *r;
	prev->live = !end;
}

/* An extended opcode; false for a malformed one. */
static bool extended(struct pass *ps, struct cursor *c, struct unit *u, struct row *r,
		     struct row *prev)
{
	uint64_t len = read_uleb(c);
	struct cursor op;

	if (!len || !need(c, len))
		return false;
	op = (struct cursor){c->p, c->p + len, false};
	c->p += len;
	switch (read_uint(&op, 1)) {
	case LNE_END_SEQUENCE:
		emit(ps, u, prev, r, true);
		*r = (struct row){.file = 1, .line = 1};
		break;
	case LNE_SET_ADDRESS:
		if (len - 1 > 8)
			return false;
		r->addr = read_uint(&op, (unsigned)(len - 1));
		break;
	default: /* define_file (DWARF 2-4, unused by compilers), discriminators, vendors' */
		break;
	}
	return !op.bad;
}

static void advance(const struct unit *u, struct row *r, uint64_t ops)
{
	r->addr += ops * u->min_inst;
}

/* A standard opcode below opcode_base; false for a malformed one. */
static bool standard(struct cursor *c, const struct unit *u, struct row *r, uint8_t op)
{
	uint8_t nargs;

	switch (op) {
	case LNS_ADVANCE_PC:
		advance(u, r, read_uleb(c));
		break;
	case LNS_ADVANCE_LINE:
		r->line += (uint64_t)read_sleb(c);
		break;
	case LNS_SET_FILE:
		r->file = read_uleb(c);
		break;
	case LNS_CONST_ADD_PC:
		advance(u, r, (255u - u->opcode_base) / u->line_range);
		break;
	case LNS_FIXED_ADVANCE_PC:
		r->addr += read_uint(c, 2);
		break;
	case LNS_SET_COLUMN:
	case LNS_NEGATE_STMT:
	case LNS_SET_BASIC_BLOCK:
	default:
		/* Their operands, as many ULEB128s as the header says (the known ones' too). */
		for (nargs = u->opcode_lengths[op - 1]; nargs; nargs--)
			read_uleb(c);
		break;
	}
	return !c->bad;
}

/* Runs one unit's program; false when it ends malformed. */
static bool run_program(struct pass *ps, struct cursor *c, struct unit *u)
{
	struct row r = {.file = 1, .line = 1}, prev = {0};
	uint8_t op, adj;

	while (c->p < c->end) {
		if (++ps->steps % LOAD_CHECK_EVERY == 0 && load_budget__over(ps->budget)) {
			ps->over = true;
			return true;
		}
		op = *c->p++;
		if (op >= u->opcode_base) {
			adj = op - u->opcode_base;
			advance(u, &r, adj / u->line_range);
			r.line += (uint64_t)(int64_t)(u->line_base + adj % u->line_range);
			emit(ps, u, &prev, &r, false);
		} else if (op == 0) {
			if (!extended(ps, c, u, &r, &prev))
				return false;
		} else if (op == LNS_COPY) {
			emit(ps, u, &prev, &r, false);
		} else if (!standard(c, u, &r, op)) {
			return false;
		}
		if (ps->nomem)
			return true;
	}
	return true;
}

/* A unit's length and version: its body (after the length) in *body, c past it; false: none. */
static bool unit_body(struct cursor *c, struct unit *u, struct cursor *body)
{
	uint64_t len = read_uint(c, 4);

	if (len == 0xffffffffu) {
		u->offset_size = 8;
		len = read_uint(c, 8);
	} else if (len >= 0xfffffff0u) {
		c->bad = true;
	}
	if (c->bad || len > (uint64_t)(c->end - c->p))
		return false;
	*body = (struct cursor){c->p, c->p + len, false};
	c->p += len;
	u->version = (unsigned)read_uint(body, 2);
	return true;
}

/* One unit at c (advanced past it); false when the rest of the section cannot be found. */
static bool read_unit(struct pass *ps, struct cursor *c)
{
	struct unit u = {.offset_size = 4, .addr_size = 8};
	struct cursor body, prog;
	const uint8_t *start;
	int err;

	if (!unit_body(c, &u, &body)) {
		ps->counts->bad_units++;
		return false;
	}
	ps->counts->units++;
	if (u.version < 2 || u.version > 5) {
		ps->counts->unsupported++;
		return true;
	}
	err = read_header(ps, &body, &u, &start);
	if (!err) {
		prog = (struct cursor){start, body.end, false};
		if (!run_program(ps, &prog, &u))
			ps->counts->bad_units++;
	} else if (err == -EOPNOTSUPP) {
		ps->counts->unsupported++;
	} else if (err == -E2BIG) {
		ps->counts->capped_units++;
	} else if (err == -ENOMEM) {
		ps->nomem = true;
	} else {
		ps->counts->bad_units++;
	}
	unit__free(&u);
	return true;
}

int dwarf_line__file_name(const struct dwarf_section_bytes secs[DWARF_SECTIONS], uint64_t off,
			  uint64_t file, char **name)
{
	const struct dwarf_section_bytes *l = &secs[DWARF_LINE];
	struct cursor c = {l->data, (const uint8_t *)l->data + l->size, false}, body;
	struct unit u = {.offset_size = 4, .addr_size = 8};
	struct pass ps = {.secs = secs};
	const uint8_t *prog;
	uint32_t at = 0;
	int err = -EBADMSG;

	*name = NULL;
	if (off >= l->size)
		return -EBADMSG;
	c.p += off;
	if (unit_body(&c, &u, &body))
		err = u.version < 2 || u.version > 5 ? -EOPNOTSUPP
						     : read_header(&ps, &body, &u, &prog);
	if (!err)
		at = file_name(&ps, &u, file);
	if (!err && !at)
		err = ps.nomem ? -ENOMEM : -ENOENT;
	if (!err && !(*name = strdup(ps.names.p + at - 1)))
		err = -ENOMEM;
	unit__free(&u);
	free(ps.names.p);
	return err;
}

/*
 * Where the units of .debug_line come from: the section in memory, or its
 * compressed bytes inflated one unit at a time (a unit needs no other), so
 * that a lookup holds the largest unit, not the whole inflated table.
 */
struct line_units {
	struct cursor mem; /* in memory: the units not read yet */
	z_stream *zs;	   /* compressed: the stream; NULL when in memory */
	uint64_t left;	   /* compressed: bytes not inflated yet */
	uint8_t *buf;	   /* compressed: the unit inflated last */
	size_t cap;
	struct cursor one; /* over buf */
	struct load_budget *budget;
	int err; /* why the units ended early: -EBADMSG, -ENOMEM, -ETIME */
};

/* Inflates n more bytes into buf at at: 0, or -errno (also kept in u->err). */
static int inflate_more(struct line_units *u, size_t at, uint64_t n)
{
	uint8_t *b;
	int rc = Z_OK;

	if (n > u->left)
		return u->err = -EBADMSG;
	if (at + n > u->cap) {
		b = realloc(u->buf, at + n);
		if (!b)
			return u->err = -ENOMEM;
		u->buf = b;
		u->cap = at + n;
	}
	u->zs->next_out = u->buf + at;
	u->zs->avail_out = (uInt)n;
	while (u->zs->avail_out && rc == Z_OK) {
		if (load_budget__over(u->budget))
			return u->err = -ETIME;
		rc = inflate(u->zs, Z_SYNC_FLUSH);
	}
	if (u->zs->avail_out)
		return u->err = -EBADMSG;
	u->left -= n;
	return 0;
}

/* The cursor the next unit is read from (in memory: the rest); NULL at the end. */
static struct cursor *next_unit(struct line_units *u, struct dwarf_line_counts *counts)
{
	struct cursor len;
	uint64_t n;
	size_t hdr = 4;

	if (!u->zs)
		return u->mem.p < u->mem.end ? &u->mem : NULL;
	if (!u->left || inflate_more(u, 0, 4))
		return NULL;
	len = (struct cursor){u->buf, u->buf + 4, false};
	n = read_uint(&len, 4);
	if (n == 0xffffffffu) {
		if (inflate_more(u, 4, 8))
			return NULL;
		len = (struct cursor){u->buf + 4, u->buf + 12, false};
		n = read_uint(&len, 8);
		hdr = 12;
	}
	/* What read_unit would refuse, or more than is left: the rest is not found. */
	if ((hdr == 4 && n >= 0xfffffff0u) || n > u->left) {
		counts->bad_units++;
		return NULL;
	}
	if (inflate_more(u, hdr, n))
		return NULL;
	u->one = (struct cursor){u->buf, u->buf + hdr + n, false};
	return &u->one;
}

static int lookup(const struct dwarf_section_bytes secs[DWARF_SECTIONS], struct line_units *units,
		  const uint64_t *addrs, size_t n, struct dwarf_line_answer *out, char **names,
		  struct dwarf_line_counts *counts, struct load_budget *budget)
{
	struct pass ps = {.secs = secs, .addrs = addrs, .n = n, .counts = counts, .budget = budget};
	struct cursor *c;
	size_t i;
	int err = 0;

	*names = NULL;
	memset(out, 0, n * sizeof(*out));
	if (!n)
		return 0;
	ps.name_of = calloc(n, sizeof(*ps.name_of));
	ps.line_of = calloc(n, sizeof(*ps.line_of));
	ps.next = malloc((n + 1) * sizeof(*ps.next));
	if (!ps.name_of || !ps.line_of || !ps.next) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i <= n; i++)
		ps.next[i] = i;
	while (!ps.nomem && !ps.over && (c = next_unit(units, counts)) && read_unit(&ps, c))
		;
	err = ps.nomem ? -ENOMEM : ps.over ? -ETIME : units->err;
	for (i = 0; i < n && !err; i++) {
		out[i].file = ps.name_of[i] ? ps.names.p + ps.name_of[i] - 1 : NULL;
		out[i].line = ps.line_of[i];
	}
	*names = ps.names.p;
	ps.names.p = NULL;
cleanup:
	free(ps.names.p);
	free(ps.name_of);
	free(ps.line_of);
	free(ps.next);
	if (err)
		memset(out, 0, n * sizeof(*out));
	return err;
}

int dwarf_line__lookup(const struct dwarf_section_bytes secs[DWARF_SECTIONS], const uint64_t *addrs,
		       size_t n, struct dwarf_line_answer *out, char **names,
		       struct dwarf_line_counts *counts, struct load_budget *budget)
{
	const uint8_t *p = secs[DWARF_LINE].data;
	struct line_units units = {.mem = {p, p + secs[DWARF_LINE].size, false}};

	return lookup(secs, &units, addrs, n, out, names, counts, budget);
}

struct dwarf_ctx {
	struct dwarf_section_bytes raw[DWARF_SECTIONS]; /* owned copies */
	uint64_t size[DWARF_SECTIONS];			/* uncompressed */
	bool is64;
	char *names;	   /* of the last batch's answers */
	void *answers;	   /* another reader's (dwarf_ctx__answers) */
	bool info_refused; /* a section for inlined calls was over DWARF_MAX_SECTION_BYTES */
};

/* The uncompressed size in a compression header; -EOPNOTSUPP for another than zlib. */
static int chdr_size(const struct dwarf_section_bytes *s, bool is64, uint64_t *size, size_t *hdr)
{
	struct cursor c = {s->data, (const uint8_t *)s->data + s->size, false};
	uint32_t type = (uint32_t)read_uint(&c, 4);

	if (is64) {
		read_uint(&c, 4); /* reserved */
		*size = read_uint(&c, 8);
		read_uint(&c, 8); /* alignment */
	} else {
		*size = read_uint(&c, 4);
		read_uint(&c, 4);
	}
	*hdr = (size_t)(c.p - (const uint8_t *)s->data);
	if (c.bad)
		return -EBADMSG;
	return type == ELFCOMPRESS_ZLIB_ ? 0 : -EOPNOTSUPP;
}

void dwarf_ctx__free(struct dwarf_ctx *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < DWARF_SECTIONS; i++)
		free((void *)c->raw[i].data);
	free(c->names);
	free(c->answers);
	free(c);
}

uint64_t dwarf_ctx__bytes(const struct dwarf_ctx *c)
{
	uint64_t n = 0;
	int i;

	for (i = 0; c && i < DWARF_SECTIONS; i++)
		n += c->raw[i].size;
	return n;
}

uint64_t dwarf_ctx__size(const struct dwarf_ctx *c)
{
	return c ? c->size[DWARF_LINE] + c->size[DWARF_LINE_STR] + c->size[DWARF_STR] : 0;
}

int dwarf_ctx__new(const struct dwarf_section_bytes secs[DWARF_SECTIONS], bool is64,
		   struct dwarf_ctx **out)
{
	struct dwarf_ctx *c;
	size_t hdr;
	void *copy;
	int i, err = 0;

	*out = NULL;
	if (!secs[DWARF_LINE].size)
		return -ENOENT;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->is64 = is64;
	for (i = 0; i < DWARF_SECTIONS && !err; i++) {
		if (!secs[i].size || (i > DWARF_STR && c->info_refused))
			continue;
		c->size[i] = secs[i].size;
		if (secs[i].compressed)
			err = chdr_size(&secs[i], is64, &c->size[i], &hdr);
		if (!err && (c->size[i] > DWARF_MAX_SECTION_BYTES ||
			     secs[i].size > DWARF_MAX_SECTION_BYTES))
			err = -EFBIG;
		/* Inlined calls are refused (said when asked for), the lines kept. */
		if (err && err != -ENOMEM && i > DWARF_STR) {
			c->info_refused = true;
			c->size[i] = 0;
			err = 0;
			continue;
		}
		copy = err ? NULL : malloc(secs[i].size);
		if (!err && !copy)
			err = -ENOMEM;
		if (err)
			break;
		memcpy(copy, secs[i].data, secs[i].size);
		c->raw[i] = (struct dwarf_section_bytes){copy, secs[i].size, secs[i].compressed};
	}
	/* Inflated together when lines are looked up: the cap holds for all of them. */
	if (!err && c->size[DWARF_LINE] + c->size[DWARF_LINE_STR] + c->size[DWARF_STR] >
			    DWARF_MAX_SECTION_BYTES)
		err = -EFBIG;
	if (err) {
		dwarf_ctx__free(c);
		return err;
	}
	*out = c;
	return 0;
}

/* Inflated in steps of this many bytes, the deadline looked at between them. */
#define INFLATE_STEP (16u << 20)

/* Section i, inflated into *buf if compressed (the caller frees *buf); -ETIME past budget's end. */
static int section(const struct dwarf_ctx *c, int i, struct dwarf_section_bytes *s, void **buf,
		   struct load_budget *budget)
{
	z_stream zs = {0};
	size_t hdr;
	uint64_t size;
	int err, rc = Z_OK;

	*buf = NULL;
	*s = c->raw[i];
	if (!s->compressed || !s->size)
		return 0;
	err = chdr_size(&c->raw[i], c->is64, &size, &hdr);
	if (err)
		return err;
	*buf = malloc(size ? size : 1);
	if (!*buf)
		return -ENOMEM;
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)c->raw[i].data + hdr;
	zs.avail_in = (uInt)(c->raw[i].size - hdr);
	zs.next_out = *buf;
	while (rc == Z_OK && zs.total_out < size && !load_budget__over(budget)) {
		zs.avail_out = (uInt)(size - zs.total_out < INFLATE_STEP ? size - zs.total_out
									 : INFLATE_STEP);
		rc = inflate(&zs, Z_SYNC_FLUSH);
	}
	if (rc == Z_OK && zs.total_out == size) /* all out: the stream must end here */
		rc = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (rc == Z_OK && zs.total_out < size)
		return -ETIME;
	if (rc != Z_STREAM_END || zs.total_out != size)
		return -EBADMSG;
	*s = (struct dwarf_section_bytes){*buf, size, false};
	return 0;
}

/* c's compressed .debug_line as units inflated one at a time: 0, or -errno. */
static int stream_units(const struct dwarf_ctx *c, z_stream *zs, struct line_units *u)
{
	size_t hdr;
	int err = chdr_size(&c->raw[DWARF_LINE], c->is64, &u->left, &hdr);

	if (err)
		return err;
	if (inflateInit(zs) != Z_OK)
		return -ENOMEM;
	zs->next_in = (Bytef *)c->raw[DWARF_LINE].data + hdr;
	zs->avail_in = (uInt)(c->raw[DWARF_LINE].size - hdr);
	u->zs = zs;
	return 0;
}

int dwarf_ctx__lines(struct dwarf_ctx *c, const uint64_t *addrs, size_t n,
		     struct dwarf_line_answer *out, struct dwarf_line_counts *counts,
		     struct load_budget *budget)
{
	struct dwarf_section_bytes secs[DWARF_SECTIONS] = {0};
	void *bufs[DWARF_SECTIONS] = {0};
	struct line_units units = {.budget = budget};
	z_stream zs = {0};
	int i, err = 0;

	memset(out, 0, n * sizeof(*out));
	free(c->names);
	c->names = NULL;
	/* The strings are reached at random, so inflated whole; the units one at a time. */
	for (i = 0; i <= DWARF_STR && !err; i++)
		if (i != DWARF_LINE || !c->raw[i].compressed)
			err = section(c, i, &secs[i], &bufs[i], budget);
	if (!err && c->raw[DWARF_LINE].compressed)
		err = stream_units(c, &zs, &units);
	else if (!err)
		units.mem = (struct cursor){
			secs[DWARF_LINE].data,
			(const uint8_t *)secs[DWARF_LINE].data + secs[DWARF_LINE].size, false};
	if (!err)
		err = lookup(secs, &units, addrs, n, out, &c->names, counts, budget);
	if (units.zs)
		inflateEnd(&zs);
	free(units.buf);
	for (i = 0; i < DWARF_SECTIONS; i++)
		free(bufs[i]);
	return err;
}

int dwarf_ctx__inflate(const struct dwarf_ctx *c, unsigned mask,
		       struct dwarf_section_bytes secs[DWARF_SECTIONS], void *bufs[DWARF_SECTIONS],
		       struct load_budget *budget)
{
	uint64_t total = 0;
	int i, err = 0;

	for (i = 0; i < DWARF_SECTIONS; i++) {
		secs[i] = (struct dwarf_section_bytes){0};
		bufs[i] = NULL;
		total += mask & 1u << i ? c->size[i] : 0;
	}
	/* Inflated together: the cap holds for all of them. */
	if (total > DWARF_MAX_SECTION_BYTES || (mask >> (DWARF_STR + 1) && c->info_refused))
		return -EFBIG;
	for (i = 0; i < DWARF_SECTIONS && !err; i++)
		if (mask & 1u << i)
			err = section(c, i, &secs[i], &bufs[i], budget);
	return err;
}

void **dwarf_ctx__answers(struct dwarf_ctx *c)
{
	return &c->answers;
}
