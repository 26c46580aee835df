// SPDX-License-Identifier: MIT
/*
 * An ELF file's symbols as ranges (see elf_symtab.c for the object).
 *
 * The symbol table is turned once into sorted, non-overlapping address ranges
 * so a lookup is a single binary search:
 *  - .symtab is preferred and .dynsym fills in the addresses it does not name
 *    (a stripped file has only .dynsym; a full .symtab already holds every
 *    .dynsym entry, and comparing those duplicates name by name was the
 *    bulk of the load time of large C++ binaries);
 *  - a Go program without a .symtab (built with -ldflags=-s) still has
 *    Go's own function table, .gopclntab (go_pclntab.h), which the runtime
 *    needs for its stack traces: its functions fill in what .dynsym does
 *    not name, named as Go prints them ("main.(*T).m");
 *  - aliases at one address keep one name, chosen as for the kernel
 *    (symbol_rank.h): GLOBAL > WEAK > LOCAL, fewer leading underscores, shorter;
 *  - a sized symbol covers [value, value + size); a size-0 symbol (asm code,
 *    _init, crtstuff) covers up to the next symbol, but never past the end of
 *    its executable PT_LOAD segment, of its section (so _init does not claim
 *    the .plt after it) or of a sized symbol that encloses it;
 *  - a symbol nested in another (asm entry points inside a larger function)
 *    wins over its container for its own extent.
 * Names are then copied into one private arena and the file is closed.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "elf"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "lib/range.h"
#include "lib/u64map.h"
#include "resolve/elf_plt.h"
#include "resolve/elf_symtab.h"
#include "lib/go_pclntab.h"
#include "resolve/symbol_rank.h"
#include "resolve/elf_symtab_internal.h"

/* A candidate from a symbol table; name points into libelf's (mapped) data. */
struct cand {
	uint64_t start;
	uint64_t size;
	const char *name;
	uint32_t shndx;	    /* 0 when unknown (SHN_XINDEX) */
	uint16_t strtab;    /* index in load_ctx.tabs */
	uint8_t bind;	    /* enum symbol_bind */
	uint8_t from_debug; /* shndx is a section of the debug file */
	uint8_t label;	    /* STT_NOTYPE in code: an assembler label, not a function */
};

/* One symbol per address, after alias selection. */
struct usym {
	uint64_t start;
	uint64_t end;
	const char *name;
	uint16_t strtab;
	bool sized;
};

/*
 * The string tables names point into. They are copied whole once the
 * symbols are chosen: one memcpy per table rather than a strlen and a
 * memcpy per name, which was a third of the load time of large tables.
 */
struct strtab_ref {
	const char *str;
	size_t size;
	size_t base; /* offset of the copy in elf_symtab.names */
};

struct load_ctx {
	const struct elf_symtab *of; /* the file whose symbols are loaded (its budget and stop) */
	struct strtab_ref *tabs;
	size_t ntabs;
	size_t bytes;	      /* total size of tabs */
	size_t max_bytes;     /* crafted tables that overlap must not multiply memory */
	struct u64map *index; /* from_debug << 32 | section index -> tabs index */
};

static enum symbol_bind bind_of(unsigned int stb)
{
	switch (stb) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return SYMBOL_GLOBAL;
	case STB_WEAK:
		return SYMBOL_WEAK;
	default:
		return SYMBOL_LOCAL;
	}
}

/* Whether alias x is preferred over alias y (symbol_rank.h). */
static bool better_alias(const struct cand *x, const struct cand *y)
{
	if (x->label != y->label)
		return !x->label;
	return symbol_rank_cmp(x->bind, x->name, strlen(x->name), y->bind, y->name,
			       strlen(y->name)) < 0;
}

/*
 * Stable LSD radix sort by start address, one byte per pass, skipping bytes
 * that are the same in every key (most of them: a file spans a few MiB).
 * Large tables made qsort, and musl's in particular, the bulk of load time.
 */
static int sort_by_start(struct cand *c, size_t n)
{
	size_t count[8][256] = {}, pos[256], i, sum;
	struct cand *tmp, *src = c, *dst;
	int b, d;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			count[b][(c[i].start >> (8 * b)) & 0xff]++;
	for (b = 0; b < 8; b++) {
		struct cand *t;

		for (d = 0; d < 256 && count[b][d] != n; d++)
			;
		if (d < 256)
			continue;
		for (d = 0, sum = 0; d < 256; d++) {
			pos[d] = sum;
			sum += count[b][d];
		}
		for (i = 0; i < n; i++)
			dst[pos[(src[i].start >> (8 * b)) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != c)
		memcpy(c, src, n * sizeof(*c));
	free(tmp);
	return 0;
}

/* The string table a symbol table links to, trimmed so every name in it is terminated. */
static bool get_strtab(struct elf_symtab *e, size_t ndx, const char **str, size_t *size)
{
	Elf_Scn *scn = elf_getscn(e->elf, ndx);
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !range_in_file(e, sh.sh_offset, sh.sh_size))
		return false;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return false;
	n = d->d_size;
	while (n && ((const char *)d->d_buf)[n - 1])
		n--;
	*str = d->d_buf;
	*size = n;
	return true;
}

/* The index of the string table a symbol table links to, registered on first use. */
static int strtab_index(struct elf_symtab *e, bool from_debug, uint32_t link, struct load_ctx *ctx,
			const char **str, size_t *strsz, uint16_t *idx)
{
	uint64_t key = (uint64_t)from_debug << 32 | link, v;
	struct strtab_ref *t;

	if (!get_strtab(e, link, str, strsz)) {
		pr_debug("%s: symbol table links to no usable string table", e->path);
		return -ENOEXEC;
	}
	if (u64map__get(ctx->index, key, &v)) {
		*idx = (uint16_t)v;
		return 0;
	}
	if (ctx->ntabs > UINT16_MAX || *strsz > ctx->max_bytes - ctx->bytes) {
		pr_debug("%s: too many or too large string tables", e->path);
		return -E2BIG;
	}
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){.str = *str, .size = *strsz, .base = ctx->bytes};
	if (u64map__set(ctx->index, key, ctx->ntabs))
		return -ENOMEM;
	ctx->bytes += *strsz;
	*idx = (uint16_t)ctx->ntabs++;
	return 0;
}

/*
 * A label hand-written code puts in an executable section without .type
 * (ld.so's _start and _dl_start_user): named as perf names it, up to the
 * next symbol. Not ARM's mapping symbols ($x, $d), nor data markers.
 */
static bool code_label(const struct elf_symtab *f, const GElf_Sym *sym, const char *str)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (str[sym->st_name] == '$' || sym->st_shndx == SHN_XINDEX)
		return false;
	scn = elf_getscn(f->elf, sym->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int collect(struct elf_symtab *e, bool from_debug, struct load_ctx *ctx, Elf_Scn *scn,
		   const GElf_Shdr *sh, struct cand **cands, size_t *n, size_t *cap)
{
	size_t nsyms, i, strsz, entsize;
	const char *str;
	uint16_t strtab;
	Elf_Data *d;
	int err;

	if (!range_in_file(e, sh->sh_offset, sh->sh_size) || (sh->sh_flags & SHF_COMPRESSED)) {
		pr_debug("%s: symbol table lies outside the file", e->path);
		return -ENOEXEC;
	}
	err = strtab_index(e, from_debug, sh->sh_link, ctx, &str, &strsz, &strtab);
	if (err)
		return err;
	d = elf_getdata(scn, NULL);
	if (!d) {
		pr_debug("%s: symbol table: %s", e->path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	entsize = gelf_getclass(e->elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	nsyms = d->d_size / entsize;
	if (*cap - *n < nsyms) {
		size_t ncap = *n + nsyms;
		struct cand *nc = realloc(*cands, (ncap ? ncap : 1) * sizeof(**cands));

		if (!nc)
			return -ENOMEM;
		*cands = nc;
		*cap = ncap;
	}
	for (i = 0; i < nsyms; i++) {
		unsigned int type;
		GElf_Sym sym;

		if (i % LOAD_CHECK_EVERY == LOAD_CHECK_EVERY - 1 && over_time(ctx->of))
			return -ETIME;
		if (!gelf_getsym(d, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		/* Undefined (imports), absolute and common symbols are not code here. */
		if (sym.st_shndx == SHN_UNDEF ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (!sym.st_value || sym.st_name >= strsz || !str[sym.st_name])
			continue;
		if (type == STT_NOTYPE && !code_label(e, &sym, str))
			continue;
		(*cands)[(*n)++] = (struct cand){
			.start = sym.st_value,
			.size = sym.st_size,
			.name = str + sym.st_name,
			.shndx = sym.st_shndx == SHN_XINDEX ? 0 : sym.st_shndx,
			.strtab = strtab,
			.bind = bind_of(GELF_ST_BIND(sym.st_info)),
			.from_debug = from_debug,
			.label = type == STT_NOTYPE,
		};
	}
	return 0;
}

/* End of the executable segment containing vaddr, or UINT64_MAX if none does. */
static uint64_t exec_segment_end(const struct elf_symtab *e, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct elf_segment *s = &e->segs[i];

		if ((s->flags & PF_X) && vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->memsz > UINT64_MAX - s->vaddr ? UINT64_MAX : s->vaddr + s->memsz;
	}
	return UINT64_MAX;
}

/* End of the allocated section containing vaddr, or UINT64_MAX if unknown. */
static uint64_t section_end(const struct elf_symtab *e, uint32_t shndx, uint64_t vaddr)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!shndx || !(scn = elf_getscn(e->elf, shndx)) || !gelf_getshdr(scn, &sh) ||
	    !(sh.sh_flags & SHF_ALLOC) || vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
		return UINT64_MAX;
	return sh.sh_size > UINT64_MAX - sh.sh_addr ? UINT64_MAX : sh.sh_addr + sh.sh_size;
}

/* Collapses aliases and gives every symbol its end. Returns the number kept. */
static size_t to_usyms(const struct elf_symtab *e, const struct cand *c, size_t n, struct usym *u)
{
	size_t i, j, k = 0, best;
	uint64_t covered = 0; /* end of the sized functions so far */

	for (i = 0; i < n; i = j) {
		uint64_t end = UINT64_MAX;
		bool sized = false;

		for (j = i; j < n && c[j].start == c[i].start && c[j].label;)
			j++;
		/* Labels inside a function with a size are its own jump targets: it keeps its name.
		 */
		if (j > i && (j == n || c[j].start != c[i].start) && c[i].start < covered)
			continue;
		for (j = i, best = i; j < n && c[j].start == c[i].start; j++) {
			uint64_t s_end;

			if (j > i && better_alias(&c[j], &c[best]))
				best = j;
			if (!c[j].size)
				continue;
			s_end = c[j].size > UINT64_MAX - c[j].start ? UINT64_MAX
								    : c[j].start + c[j].size;
			if (!sized || s_end > end)
				end = s_end;
			sized = true;
			if (!c[j].label && s_end > covered)
				covered = s_end;
		}
		if (!sized) {
			uint64_t seg_end = exec_segment_end(e, c[i].start);

			end = section_end(c[best].from_debug ? e->debug : e, c[best].shndx,
					  c[i].start);
			if (seg_end < end)
				end = seg_end;
		}
		u[k++] = (struct usym){
			.start = c[i].start,
			.end = end,
			.name = c[best].name,
			.strtab = c[best].strtab,
			.sized = sized,
		};
	}
	/* Unsized symbols hold their segment/section limit; the next symbol bounds them too. */
	for (i = 0; i < k; i++) {
		uint64_t next;

		if (u[i].sized)
			continue;
		next = i + 1 < k ? u[i + 1].start : UINT64_MAX;
		if (next < u[i].end)
			u[i].end = next;
		/* Last symbol, outside any executable segment: nothing bounds it but itself. */
		if (u[i].end == UINT64_MAX)
			u[i].end = u[i].start + 1;
	}
	return k;
}

static void emit(struct symbol_range *r, size_t *nr, uint64_t start, uint64_t end,
		 const struct usym *s)
{
	if (start >= end)
		return;
	r[(*nr)++] = (struct symbol_range){
		.start = start,
		.end = end,
		.sym_start = s->start,
		.name = s->name,
	};
}

/*
 * Sweeps symbols in address order with a stack of the ones still open, so
 * that nested symbols split their container. Each symbol emits at most one
 * range when it is pushed (the container's part before it) and one when it
 * is popped: at most 2 * n ranges.
 */
static int to_ranges(struct usym *u, size_t n, struct symbol_range *r, size_t *nr)
{
	size_t *stack, depth = 0, i;
	uint64_t cursor = 0;

	stack = malloc((n ? n : 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	*nr = 0;
	/* One pass past the end, at UINT64_MAX, closes whatever is still open. */
	for (i = 0; i <= n; i++) {
		uint64_t at = i < n ? u[i].start : UINT64_MAX;

		while (depth && u[stack[depth - 1]].end <= at) {
			const struct usym *t = &u[stack[--depth]];

			emit(r, nr, cursor, t->end, t);
			if (t->end > cursor)
				cursor = t->end;
		}
		if (i == n)
			break;
		if (depth) {
			const struct usym *top = &u[stack[depth - 1]];

			emit(r, nr, cursor, u[i].start, top);
			/* A label inside a function must not take over the function's tail. */
			if (!u[i].sized && u[i].end > top->end)
				u[i].end = top->end;
		}
		cursor = u[i].start;
		stack[depth++] = i;
	}
	free(stack);
	return 0;
}

/* Copies the string tables into one arena and points the symbols at their copies. */
static int copy_names(struct elf_symtab *e, const struct load_ctx *ctx, struct usym *u, size_t n)
{
	size_t i;

	e->names = malloc(ctx->bytes ? ctx->bytes : 1);
	if (!e->names)
		return -ENOMEM;
	for (i = 0; i < ctx->ntabs; i++)
		memcpy(e->names + ctx->tabs[i].base, ctx->tabs[i].str, ctx->tabs[i].size);
	for (i = 0; i < n; i++) {
		const struct strtab_ref *t = &ctx->tabs[u[i].strtab];

		u[i].name = e->names + t->base + (u[i].name - t->str);
	}
	return 0;
}

/* Appends the candidates of every table of one type; a bad table is skipped. */
static int collect_all(struct elf_symtab *e, bool from_debug, uint32_t type, struct load_ctx *ctx,
		       struct cand **cands, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(e->elf, scn))) {
		/* A table stripped into a debug file is SHT_NOBITS and so never matches. */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		err = collect(e, from_debug, ctx, scn, &sh, cands, n, cap);
		if (err == -ENOMEM || err == -ETIME)
			return err;
	}
	return 0;
}

/* Whether a candidate in c[0..n), sorted by start, starts at addr. */
static bool has_start(const struct cand *c, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].start == addr;
}

/*
 * The PLT stubs no symbol starts at, as candidates named NAME@plt; their
 * names go in as one more string table. c[0..n) is sorted by start.
 */
static int add_plt_stubs(struct elf_symtab *e, struct load_ctx *ctx, struct elf_plt *plt,
			 struct cand **c, size_t *n, size_t *cap)
{
	struct strtab_ref *t;
	size_t i, had = *n;
	struct cand *nc;
	int err = elf_plt__read(e->elf, plt);

	if (err || !plt->n)
		return err;
	if (ctx->ntabs > UINT16_MAX || plt->names_size > ctx->max_bytes - ctx->bytes)
		return 0;
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){plt->names, plt->names_size, ctx->bytes};
	ctx->bytes += plt->names_size;
	if (*cap - *n < plt->n) {
		nc = realloc(*c, (*n + plt->n) * sizeof(**c));
		if (!nc)
			return -ENOMEM;
		*c = nc;
		*cap = *n + plt->n;
	}
	for (i = 0; i < plt->n; i++) {
		if (has_start(*c, had, plt->stubs[i].start))
			continue;
		(*c)[(*n)++] = (struct cand){
			.start = plt->stubs[i].start,
			.size = plt->stubs[i].size,
			.name = plt->names + plt->stubs[i].name,
			.strtab = (uint16_t)ctx->ntabs,
			.bind = SYMBOL_LOCAL,
		};
	}
	ctx->ntabs++;
	return 0;
}

/*
 * A Go program's functions from its .gopclntab, where no symbol of
 * c[0..n) (sorted, from .dynsym) starts; their names go in as one more
 * string table, which *go owns until the names are copied.
 */
static int add_go_functions(struct elf_symtab *e, struct load_ctx *ctx, struct go_pclntab **go,
			    struct cand **c, size_t *n, size_t *cap)
{
	size_t size, i, had = *n, count, names_size;
	struct go_pclntab_info info;
	const char *names;
	struct strtab_ref *t;
	const void *image;
	struct cand *nc;
	int err;

	image = e->image ? e->image : elf_rawfile(e->elf, &size);
	if (e->image)
		size = e->file_size;
	if (!image)
		return 0;
	err = go_pclntab__from_elf(image, size, go);
	if (err) {
		/* Not a Go program, or a table not to be trusted: no names from it. */
		if (err != -ENOENT && err != -ENOEXEC)
			pr_debug("%s: Go function table: %s", e->path, strerror(-err));
		/* Over the cap (load_budget.h): the file is refused whole, and counted. */
		return err == -ENOMEM || err == -EFBIG ? err : 0;
	}
	count = go_pclntab__count(*go);
	names = go_pclntab__names(*go, &names_size);
	if (!count || ctx->ntabs > UINT16_MAX || names_size > ctx->max_bytes - ctx->bytes)
		return 0;
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){names, names_size, ctx->bytes};
	ctx->bytes += names_size;
	if (*cap - *n < count) {
		nc = realloc(*c, (*n + count) * sizeof(**c));
		if (!nc)
			return -ENOMEM;
		*c = nc;
		*cap = *n + count;
	}
	for (i = 0; i < count; i++) {
		uint64_t start, end;
		const char *name;

		if (go_pclntab__func(*go, i, &start, &end, &name) || end <= start ||
		    has_start(*c, had, start))
			continue;
		(*c)[(*n)++] = (struct cand){
			.start = start,
			.size = end - start,
			.name = name,
			.strtab = (uint16_t)ctx->ntabs,
			.bind = SYMBOL_GLOBAL,
		};
	}
	ctx->ntabs++;
	go_pclntab__info(*go, &info);
	e->go_syms = *n - had;
	e->go_where = info.where;
	e->go_layout = info.version;
	return 0;
}

/* Entries and name bytes of e's tables of one type, from their headers alone. */
static void table_sizes(const struct elf_symtab *e, uint32_t type, uint64_t *count, uint64_t *bytes)
{
	size_t entsize =
		gelf_getclass(e->elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	Elf_Scn *scn = NULL, *str;
	GElf_Shdr sh, ssh;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		*count += sh.sh_size / entsize;
		if ((str = elf_getscn(e->elf, sh.sh_link)) && gelf_getshdr(str, &ssh))
			*bytes += ssh.sh_size;
	}
}

/*
 * Whether the tables load_symbols reads hold more than a run loads for one
 * file (load_budget.h). Such a file is refused whole rather than cut: a
 * table read in part would name the code of the missing symbols after the
 * last one read before it.
 */
/* Entries and name bytes of the tables load_symbols reads, from their headers alone. */
void claimed_symbols(const struct elf_symtab *e, uint64_t *count, uint64_t *bytes)
{
	*count = *bytes = 0;
	if (e->debug)
		table_sizes(e->debug, SHT_SYMTAB, count, bytes);
	else if (e->elf)
		table_sizes(e, SHT_SYMTAB, count, bytes);
	if (e->elf)
		table_sizes(e, SHT_DYNSYM, count, bytes);
}

uint64_t elf_symtab__symbols_claimed(const struct elf_symtab *e)
{
	uint64_t count = 0, bytes;

	if (e && !e->loaded)
		claimed_symbols(e, &count, &bytes);
	return count;
}

static bool over_caps(const struct elf_symtab *e)
{
	uint64_t count, bytes;

	claimed_symbols(e, &count, &bytes);
	if (count <= LOAD_MAX_SYMBOLS && bytes <= LOAD_MAX_NAME_BYTES)
		return false;
	pr_debug("%s: %llu symbols with %llu bytes of names: over the cap of %u or %u MiB", e->path,
		 (unsigned long long)count, (unsigned long long)bytes, LOAD_MAX_SYMBOLS,
		 LOAD_MAX_NAME_BYTES >> 20);
	return true;
}

int load_symbols(struct elf_symtab *e)
{
	struct load_ctx ctx = {
		.of = e,
		.max_bytes = 2 * (e->file_size + (e->debug ? e->debug->file_size : 0)),
		.index = u64map__new(),
	};
	struct go_pclntab *go = NULL;
	struct elf_plt plt = {0};
	struct cand *cands = NULL;
	struct usym *u = NULL;
	size_t n = 0, cap = 0, nu, nr, nsymtab, i, kept, sorted;
	int err = 0;

	if (!ctx.index)
		return -ENOMEM;
	if (!e->elf && !e->debug)
		err = -EBADF;
	else if (over_caps(e))
		err = -EFBIG;
	if (err)
		goto cleanup;
	/* A debug file's .symtab describes the same addresses as the stripped file's would. */
	if (e->debug)
		err = collect_all(e->debug, true, SHT_SYMTAB, &ctx, &cands, &n, &cap);
	else
		err = collect_all(e, false, SHT_SYMTAB, &ctx, &cands, &n, &cap);
	if (err)
		goto cleanup;
	err = sort_by_start(cands, n);
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	nsymtab = n;
	/* Closed when a debug file came late (drop_symbols). */
	err = e->elf ? collect_all(e, false, SHT_DYNSYM, &ctx, &cands, &n, &cap) : 0;
	if (err)
		goto cleanup;
	for (i = nsymtab, kept = nsymtab; i < n; i++)
		if (!has_start(cands, nsymtab, cands[i].start))
			cands[kept++] = cands[i];
	/* Sorted again only when something was added: each sort was a tenth of libc's load. */
	n = kept;
	if (n > nsymtab)
		err = sort_by_start(cands, n);
	sorted = n;
	/* A debug file's .symtab would name the Go functions, and more. */
	e->go_syms = 0;
	if (!err && !e->has_symtab && !e->debug) {
		err = add_go_functions(e, &ctx, &go, &cands, &n, &cap);
		if (!err && n > sorted)
			err = sort_by_start(cands, n);
		sorted = n;
	}
	if (!err && e->elf)
		err = add_plt_stubs(e, &ctx, &plt, &cands, &n, &cap);
	if (!err && n > sorted)
		err = sort_by_start(cands, n);
	/* Each step below takes a few tenths of a second for the largest tables. */
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	u = malloc((n ? n : 1) * sizeof(*u));
	if (!u) {
		err = -ENOMEM;
		goto cleanup;
	}
	nu = to_usyms(e, cands, n, u);
	/* Done with: the arrays below would otherwise add to the peak (libLLVM: 1.8 MB). */
	free(cands);
	cands = NULL;
	/* The names still point into the mapped file: copy them before it goes. */
	err = over_time(e);
	if (!err)
		err = copy_names(e, &ctx, u, nu);
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	e->ranges = malloc((2 * nu + 1) * sizeof(*e->ranges));
	if (!e->ranges) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = to_ranges(u, nu, e->ranges, &nr);
	if (err)
		goto cleanup;
	/* Nesting is rare, so most of the 2n worst case is unused. */
	if (nr) {
		struct symbol_range *shrunk = realloc(e->ranges, nr * sizeof(*e->ranges));

		if (shrunk)
			e->ranges = shrunk;
	}
	e->nranges = nr;
	e->nsyms = nu;
cleanup:
	elf_plt__free(&plt);
	go_pclntab__free(go);
	free(cands);
	free(u);
	free(ctx.tabs);
	u64map__free(ctx.index);
	return err;
}
