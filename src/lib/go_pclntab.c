// SPDX-License-Identifier: MIT
/*
 * Go's function table (.gopclntab); see go_pclntab.h. The layouts, as Go's
 * runtime (runtime/symtab.go) and debug/gosym read them:
 *
 *   header   u32 magic, u8 0, u8 0, u8 minLC, u8 ptrSize, then ptrSize-byte words:
 *            1.2    nfunc, and the function table follows at once
 *            1.16   nfunc, nfiles, funcnameOffset, cuOffset, filetabOffset,
 *                   pctabOffset, pclnOffset
 *            1.18+  nfunc, nfiles, textStart, funcnameOffset, cuOffset,
 *                   filetabOffset, pctabOffset, pclnOffset
 *   table    nfunc pairs (entry, funcoff), then one more entry: the end of
 *            the last function. Fields are ptrSize bytes with absolute
 *            entries before 1.18, 4 bytes with entries counted from
 *            textStart since. funcoff locates the function's record from
 *            the table's start (1.2) or from pclnOffset (1.16+, where the
 *            function table itself begins).
 *   record   (_func) entry (ptrSize bytes, a u32 offset from 1.18), then
 *            s32 nameOff: a NUL-terminated name counted from the table's
 *            start (1.2, where 0 means none) or from funcnameOffset (1.16+).
 *
 * Every read is bounded by the table (numbers through read_uint(), names
 * by a memchr over what is left of it), and every offset is added with an
 * overflow check, so no value in the input can send a read outside it.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf_image.h"
#include "lib/load_budget.h"
#include "lib/range.h"
#include "lib/u64map.h"
#include "lib/go_pclntab.h"

#define GO12_MAGIC  0xfffffffbu
#define GO116_MAGIC 0xfffffffau
#define GO118_MAGIC 0xfffffff0u
#define GO120_MAGIC 0xfffffff1u

/* The Go build ID note of every Go program: name "Go", type 4. */
#define GO_NOTE_BUILDID 4
/* A crafted file could hold the magic at every word; real ones hold it once. */
#define MAX_SEARCH_TRIES 16

struct go_func {
	uint64_t start; /* start and end first: range_find */
	uint64_t end;
	uint32_t name; /* offset in go_pclntab.names */
	uint32_t rec;  /* of its record (_func) in the table: its frame tables start there */
};

struct go_pclntab {
	struct go_func *funcs;
	size_t n;
	char *names;
	size_t names_size;
	struct go_pclntab_info info;
	uint64_t pctab;	    /* what a record's pcvalue table offsets count from */
	unsigned int pcsp;  /* where in a record its pcsp offset is */
	unsigned int flags; /* ... and its funcFlag byte (1.17+) */
};

/* The table's bytes, in its byte order and pointer size. */
struct table {
	const uint8_t *p;
	size_t size;
	bool be;
	uint8_t ptr;
};

/* Where each part of one layout is, from the header. */
struct layout {
	uint64_t nfunc;
	uint64_t functab;     /* offset of the function table */
	uint64_t func_base;   /* what funcoff counts from */
	uint64_t name_base;   /* what nameOff counts from */
	uint64_t text;	      /* added to entries (1.18+) */
	uint64_t pctab;	      /* what pcvalue table offsets count from */
	unsigned int field;   /* bytes of a function table field */
	unsigned int entry_w; /* bytes of a record's entry */
};

/* The names, copied into one block; each nameOff once. */
struct names {
	char *p;
	size_t size;
	size_t cap;
	size_t max; /* a real table holds each name once: never more than the table */
	struct u64map *seen;
};

static bool add_overflows(uint64_t a, uint64_t b, uint64_t *sum)
{
	return __builtin_add_overflow(a, b, sum);
}

static bool read_uint(const struct table *t, uint64_t off, unsigned int width, uint64_t *v)
{
	const uint8_t *b;
	uint64_t x = 0;
	unsigned int i;

	if (off > t->size || width > t->size - off)
		return false;
	b = t->p + off;
	for (i = 0; i < width; i++)
		x |= (uint64_t)b[t->be ? width - 1 - i : i] << (8 * i);
	*v = x;
	return true;
}

static int version_of(const uint8_t *p, bool *be)
{
	static const struct {
		uint32_t magic;
		int version;
	} magics[] = {
		{GO12_MAGIC, 12},
		{GO116_MAGIC, 116},
		{GO118_MAGIC, 118},
		{GO120_MAGIC, 120},
	};
	uint32_t le =
		(uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	uint32_t big =
		(uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
	size_t i;

	for (i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		if (le == magics[i].magic || big == magics[i].magic) {
			*be = big == magics[i].magic;
			return magics[i].version;
		}
	}
	return 0;
}

/* The 8 bytes every layout begins with: a magic, two zeros, minLC and ptrSize. */
static bool plausible_header(const uint8_t *p, bool *be, int *version)
{
	*version = version_of(p, be);
	return *version && !p[4] && !p[5] && (p[6] == 1 || p[6] == 2 || p[6] == 4) &&
	       (p[7] == 4 || p[7] == 8);
}

static int read_header(struct table *t, uint64_t text_start, struct layout *l,
		       struct go_pclntab_info *info)
{
	uint64_t w[8];
	unsigned int nwords, i;
	int version;

	/* Go's own reader wants 16 bytes too: the header of the smallest layout. */
	if (!t->p || t->size < 16 || !plausible_header(t->p, &t->be, &version))
		return -EINVAL;
	t->ptr = t->p[7];
	nwords = version == 12 ? 1 : version == 116 ? 7 : 8;
	for (i = 0; i < nwords; i++)
		if (!read_uint(t, 8 + (uint64_t)i * t->ptr, t->ptr, &w[i]))
			return -EINVAL;
	*info = (struct go_pclntab_info){
		.version = version,
		.ptr_size = t->ptr,
		.min_lc = t->p[6],
		.big_endian = t->be,
	};
	l->nfunc = w[0];
	switch (version) {
	case 12:
		l->functab = 8 + t->ptr;
		l->func_base = 0;
		l->name_base = 0;
		l->field = t->ptr;
		l->entry_w = t->ptr;
		break;
	case 116:
		l->name_base = w[2];
		l->pctab = w[5];
		l->functab = l->func_base = w[6];
		l->field = t->ptr;
		l->entry_w = t->ptr;
		break;
	default:
		l->text = w[2] ? w[2] : text_start;
		if (!l->text)
			return -ENODATA;
		l->name_base = w[3];
		l->pctab = w[6];
		l->functab = l->func_base = w[7];
		l->field = 4;
		l->entry_w = 4;
		info->text_start = l->text;
		break;
	}
	if (l->name_base >= t->size || l->functab >= t->size)
		return -EBADMSG;
	return 0;
}

/* An entry as an address: absolute before 1.18, an offset from the text since. */
static bool entry_addr(const struct layout *l, uint64_t raw, uint64_t *addr)
{
	return !add_overflows(l->text, raw, addr);
}

/* The block offset of the NUL-terminated name at off (copied once), or -EBADMSG. */
static int add_name(struct names *n, const struct table *t, uint64_t off, size_t *at)
{
	const uint8_t *s, *nul;
	uint64_t v;
	size_t len;

	if (u64map__get(n->seen, off, &v)) {
		*at = (size_t)v;
		return 0;
	}
	if (off >= t->size)
		return -EBADMSG;
	s = t->p + off;
	nul = memchr(s, 0, t->size - off);
	if (!nul)
		return -EBADMSG;
	len = (size_t)(nul - s);
	if (len + 1 > n->max - n->size)
		return -EBADMSG;
	if (len + 1 > n->cap - n->size) {
		size_t cap = n->cap ? n->cap : 4096;
		char *p;

		while (len + 1 > cap - n->size)
			cap = cap > n->max / 2 ? n->max : 2 * cap;
		p = realloc(n->p, cap);
		if (!p)
			return -ENOMEM;
		n->p = p;
		n->cap = cap;
	}
	memcpy(n->p + n->size, s, len + 1);
	*at = n->size;
	n->size += len + 1;
	return u64map__set(n->seen, off, *at);
}

/*
 * The name of function i, whose table entry is raw: its record must start
 * with the same entry. *named is false for a record without a name.
 */
static int read_record(const struct table *t, const struct layout *l, uint64_t raw,
		       uint64_t funcoff, struct names *n, struct go_func *f, bool *named)
{
	uint64_t rec, entry, name_off, at;
	size_t name = 0;
	int err;

	*named = false;
	if (add_overflows(l->func_base, funcoff, &rec) || !read_uint(t, rec, l->entry_w, &entry) ||
	    !read_uint(t, rec + l->entry_w, 4, &name_off) || entry != raw)
		return -EBADMSG;
	f->rec = (uint32_t)rec; /* below the table's size, which parse held under 4 GiB */
	/* In 1.2 tables offset 0 is the header; since 1.16 it is the first name. */
	if (!name_off && !l->name_base)
		return 0;
	if (add_overflows(l->name_base, name_off, &at) || at >= t->size)
		return -EBADMSG;
	/* An empty name names nothing: skipped, though its entry still ends the one before. */
	if (!t->p[at])
		return 0;
	*named = true;
	err = add_name(n, t, at, &name);
	f->name = (uint32_t)name;
	return err;
}

static int read_functions(struct go_pclntab *g, const struct table *t, const struct layout *l)
{
	struct names n = {.max = t->size, .seen = u64map__new()};
	uint64_t fields, i, raw, funcoff, addr, prev = 0;
	bool named, open = false;
	int err = 0;

	if (!n.seen)
		return -ENOMEM;
	/* nfunc pairs and the end entry must fit after the table's start. */
	fields = (t->size - l->functab) / l->field;
	if (!fields || l->nfunc > (fields - 1) / 2) {
		err = -EBADMSG;
		goto cleanup;
	}
	/* Real, but more than a run loads for one file (load_budget.h). */
	if (l->nfunc > LOAD_MAX_SYMBOLS) {
		err = -EFBIG;
		goto cleanup;
	}
	g->funcs = malloc((l->nfunc ? l->nfunc : 1) * sizeof(*g->funcs));
	if (!g->funcs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i <= l->nfunc; i++) {
		uint64_t at = l->functab + 2 * i * l->field;

		if (!read_uint(t, at, l->field, &raw) || !entry_addr(l, raw, &addr) ||
		    (i && addr < prev)) {
			err = -EBADMSG;
			goto cleanup;
		}
		/* The next entry, named or not, ends the function before it. */
		if (open)
			g->funcs[g->n - 1].end = addr;
		prev = addr;
		open = false;
		if (i == l->nfunc)
			break;
		if (!read_uint(t, at + l->field, l->field, &funcoff)) {
			err = -EBADMSG;
			goto cleanup;
		}
		err = read_record(t, l, raw, funcoff, &n, &g->funcs[g->n], &named);
		if (err)
			goto cleanup;
		if (named) {
			g->funcs[g->n].start = addr;
			g->n++;
			open = true;
		}
	}
	g->names = n.p;
	g->names_size = n.size;
	n.p = NULL;
cleanup:
	free(n.p);
	u64map__free(n.seen);
	return err;
}

/*
 * Where a record's pcsp offset and funcFlag byte are: after the entry come
 * 32-bit fields (nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata,
 * then cuOffset since 1.16 and startLine since 1.20), then the funcID byte
 * and, since 1.17, the flag byte (a zero pad in 1.16).
 */
static void set_frame_layout(struct go_pclntab *g, const struct layout *l)
{
	g->pctab = l->pctab;
	g->pcsp = l->entry_w + 12;
	switch (g->info.version) {
	case 116:
	case 118:
		g->flags = l->entry_w + 33;
		break;
	case 120:
		g->flags = l->entry_w + 37;
		break;
	default:
		g->flags = 0;
		break;
	}
}

int go_pclntab__parse(const void *data, size_t size, uint64_t text_start, struct go_pclntab **out)
{
	struct table t = {.p = data, .size = size};
	struct go_pclntab *g;
	struct layout l = {0};
	int err;

	*out = NULL;
	/* Offsets into it are kept in 32 bits; the largest Go programs' are tens of MB. */
	if (size > UINT32_MAX)
		return -EFBIG;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	err = read_header(&t, text_start, &l, &g->info);
	if (!err)
		err = read_functions(g, &t, &l);
	if (err) {
		go_pclntab__free(g);
		return err;
	}
	g->info.entries = l.nfunc;
	g->info.size = size;
	set_frame_layout(g, &l);
	/* Most tables name every entry; shrink when they did not. */
	if (g->n && g->n < l.nfunc) {
		struct go_func *f = realloc(g->funcs, g->n * sizeof(*g->funcs));

		if (f)
			g->funcs = f;
	}
	*out = g;
	return 0;
}

void go_pclntab__free(struct go_pclntab *t)
{
	if (!t)
		return;
	free(t->funcs);
	free(t->names);
	free(t);
}

void go_pclntab__info(const struct go_pclntab *t, struct go_pclntab_info *info)
{
	*info = t ? t->info : (struct go_pclntab_info){0};
}

size_t go_pclntab__count(const struct go_pclntab *t)
{
	return t ? t->n : 0;
}

int go_pclntab__func(const struct go_pclntab *t, size_t i, uint64_t *start, uint64_t *end,
		     const char **name)
{
	if (!t || i >= t->n)
		return -ERANGE;
	*start = t->funcs[i].start;
	*end = t->funcs[i].end;
	*name = t->names + t->funcs[i].name;
	return 0;
}

const char *go_pclntab__lookup(const struct go_pclntab *t, uint64_t pc, uint64_t *start)
{
	ptrdiff_t i;

	if (!t)
		return NULL;
	i = range_find(t->funcs, t->n, sizeof(*t->funcs), pc);
	if (i < 0)
		return NULL;
	if (start)
		*start = t->funcs[i].start;
	return t->names + t->funcs[i].name;
}

const char *go_pclntab__names(const struct go_pclntab *t, size_t *size)
{
	*size = t ? t->names_size : 0;
	return t ? t->names : NULL;
}

/* --- the frame tables -------------------------------------------------------------------- */

/* A varint of at most 32 bits, as the runtime's readvarint reads it. */
static bool read_varint(const struct table *t, uint64_t *off, uint32_t *v)
{
	uint32_t x = 0;
	unsigned int shift;

	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->size)
			return false;
		b = t->p[(*off)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static bool frame_table(const struct go_pclntab *g, const void *data, size_t size, size_t i,
			struct table *t)
{
	*t = (struct table){.p = data,
			    .size = size,
			    .be = g && g->info.big_endian,
			    .ptr = g ? g->info.ptr_size : 0};
	return g && data && i < g->n && size == g->info.size;
}

unsigned int go_pclntab__flags(const struct go_pclntab *t, const void *data, size_t size, size_t i)
{
	struct table tab;
	uint64_t v;

	if (!frame_table(t, data, size, i, &tab) || !t->flags ||
	    !read_uint(&tab, t->funcs[i].rec + t->flags, 1, &v))
		return 0;
	return (unsigned int)v & (GO_FUNC_TOPFRAME | GO_FUNC_SPWRITE);
}

/*
 * The runtime's pcvalue walk: pairs of (value delta, zigzag varint; PC
 * delta, varint in instruction quanta) from value -1 at the entry, until a
 * value delta of 0 after the first pair.
 */
int go_pclntab__pcsp(const struct go_pclntab *t, const void *data, size_t size, size_t i,
		     uint64_t *budget, int (*fn)(const struct go_pcsp_run *run, void *arg),
		     void *arg)
{
	struct go_pcsp_run run;
	struct table tab;
	uint64_t off, at, pc, end;
	uint32_t uv, pcd;
	uint32_t val = UINT32_MAX; /* -1, in the int32 arithmetic Go's wraps */
	bool first = true;
	int err;

	if (!frame_table(t, data, size, i, &tab))
		return -EINVAL;
	if (!read_uint(&tab, t->funcs[i].rec + t->pcsp, 4, &off))
		return -EBADMSG;
	/* Offset 0: no table (the runtime's value -1). */
	if (!off)
		return 0;
	if (add_overflows(t->pctab, off, &off) || off >= tab.size)
		return -EBADMSG;
	pc = t->funcs[i].start;
	end = t->funcs[i].end;
	while (pc < end) {
		at = off;
		if (off >= tab.size)
			return -EBADMSG;
		/* The end: a zero byte where a value delta would be, after the first pair. */
		if (!tab.p[off] && !first)
			break;
		if (!read_varint(&tab, &off, &uv) || !read_varint(&tab, &off, &pcd))
			return -EBADMSG;
		first = false;
		/* The bytes read across a file's functions, which may share them. */
		if (off - at > *budget)
			return -EFBIG;
		*budget -= off - at;
		val += -(uv & 1) ^ (uv >> 1);
		run = (struct go_pcsp_run){pc, pc + (uint64_t)pcd * t->info.min_lc, (int32_t)val};
		/* A run past the function's end is cut there: what lies beyond is another's. */
		if (run.end > end || run.end < run.begin)
			run.end = end;
		pc = run.end;
		if (run.end > run.begin) {
			err = fn(&run, arg);
			if (err)
				return err;
		}
	}
	return 0;
}

/* --- finding the table in an ELF image --------------------------------------------------- */

/* Whether a PT_NOTE segment holds the Go build ID note ("Go", type 4). */
static bool has_go_note(const struct elf_image *img)
{
	struct elf_segment s;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		const uint8_t *p;
		uint64_t off = 0;

		elf_image__segment(img, i, &s);
		if (s.type != PT_NOTE || !elf_image__contains(img, s.offset, s.filesz))
			continue;
		p = img->p + s.offset;
		while (s.filesz - off >= 12) {
			uint32_t nh[3];
			uint64_t len;

			memcpy(nh, p + off, sizeof(nh));
			len = 12 + (((uint64_t)nh[0] + 3) & ~3ull) +
			      (((uint64_t)nh[1] + 3) & ~3ull);
			if (len > s.filesz - off)
				break;
			/* "Go\0", its size 4 with the padding as Go's linker writes it, or 3. */
			if ((nh[0] == 3 || nh[0] == 4) && nh[2] == GO_NOTE_BUILDID &&
			    !memcmp(p + off + 12, "Go", 3))
				return true;
			off += len;
		}
	}
	return false;
}

/*
 * The magic, at 4-byte steps, in the non-executable segments (read-only
 * data; a position-independent program keeps the table in RELRO data),
 * each plausible header parsed until one gives functions.
 */
static int search_segments(const struct elf_image *img, uint64_t text, struct go_pclntab **out)
{
	struct elf_segment s;
	int tries = 0, err;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		const uint8_t *p;
		uint64_t off;

		elf_image__segment(img, i, &s);
		if (s.type != PT_LOAD || (s.flags & PF_X) ||
		    !elf_image__contains(img, s.offset, s.filesz))
			continue;
		p = img->p + s.offset;
		for (off = 0; s.filesz >= 16 && off <= s.filesz - 16; off += 4) {
			struct go_pclntab *t;
			bool be;
			int version;

			if (!plausible_header(p + off, &be, &version) ||
			    be != (__BYTE_ORDER == __BIG_ENDIAN))
				continue;
			err = go_pclntab__parse(p + off, s.filesz - off, text, &t);
			if (err == -EFBIG)
				return err;
			if (!err) {
				t->info.offset = s.offset + off;
				if (t->n) {
					*out = t;
					return 0;
				}
				go_pclntab__free(t);
			}
			if (++tries >= MAX_SEARCH_TRIES)
				return -ENOENT;
		}
	}
	return -ENOENT;
}

int go_pclntab__from_elf(const void *image, size_t size, struct go_pclntab **out)
{
	static const char *const names[] = {".gopclntab", ".data.rel.ro.gopclntab"};
	struct elf_image img;
	struct elf_section s;
	uint64_t text = 0;
	size_t i;
	int err;

	*out = NULL;
	err = elf_image__open(image, size, &img);
	if (err)
		return err;
	/* runtime.text in an internally linked program, where a 1.26+ header has none. */
	if (elf_image__find_section(&img, ".text", SHT_PROGBITS, &s) && (s.flags & SHF_EXECINSTR))
		text = s.addr;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!elf_image__find_section(&img, names[i], SHT_PROGBITS, &s))
			continue;
		err = go_pclntab__parse(img.p + s.offset, s.size, text, out);
		if (!err) {
			(*out)->info.where = names[i];
			(*out)->info.offset = s.offset;
		}
		return err;
	}
	/* Any stripped file would do, but only Go programs are worth the search. */
	if (img.shnum && !has_go_note(&img))
		return -ENOENT;
	err = search_segments(&img, text, out);
	if (!err)
		(*out)->info.where = "Go's function table, found in the segments";
	return err;
}
