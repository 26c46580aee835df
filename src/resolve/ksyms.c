// SPDX-License-Identifier: MIT
/*
 * Kernel symbolization from /proc/kallsyms, streamed (see ksyms.h for why).
 * The load and the name pass read the text in KSYMS_CHUNK reads (lines.h),
 * and classify lines with one parser, so the name pass sees exactly the
 * symbols the load kept.
 *
 * Only text symbols are kept: types t/T (functions, local and global) and
 * w/W (weak symbols, which in the kernel are almost always weak function
 * definitions). Data symbols can never be an instruction pointer.
 *
 * kallsyms has no sizes, so each symbol is given a plausible extent:
 *  - kernel image symbols end at the next symbol, and never beyond _etext
 *    (or _einittext for init code); the _etext/_einittext markers themselves
 *    are not kept, so an address past the end of text finds nothing;
 *  - module, BPF and trampoline symbols, and every symbol when the markers
 *    are missing, end at the next symbol and at most KSYM_MAX_EXTENT past
 *    their start, so an address in unlisted code is not blamed on whatever
 *    happens to be listed last.
 * Aliases (several names at one address) keep one name, chosen as for ELF
 * (symbol_rank.h): global > weak > local, fewer leading underscores, shorter.
 * The load keeps one module per address without reading names in full: that
 * of the preferred alias by binding, underscores and length (then module
 * order, which only matters if two modules listed one address, as no real
 * kallsyms does). The name pass then picks the preferred alias among the
 * lines of that address and module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "ksyms"
#include "lib/lines.h"
#include "lib/log.h"
#include "lib/range.h"
#include "lib/strpool.h"
#include "lib/textscan.h"
#include "lib/u64map.h"
#include "resolve/ksyms.h"
#include "resolve/symbol_rank.h"

/* Far larger than any kernel function (the largest in vmlinux are ~20 KiB). */
#define KSYM_MAX_EXTENT (256 * 1024)

/* A known name; the names map holds 0 instead for a symbol found gone. */
struct kname {
	uint32_t mod;
	uint8_t bind;
	size_t len;
	char name[];
};

struct text_marks {
	uint64_t etext, sinittext, einittext;
	bool have_etext, have_sinit, have_einit, have_init;
};

struct ksyms {
	uint64_t *addrs; /* sorted, distinct */
	uint64_t *ends;	 /* exclusive ends, in a table of some symbols only; NULL: computed */
	size_t count;
	/* Runs of consecutive symbols in one module: first address, module (0: the image). */
	uint64_t *run_addrs;
	uint32_t *run_mods;
	size_t nruns;
	struct strpool *mods; /* module names; module id = strpool id + 1 */
	struct text_marks tm;
	bool hidden;
	char *path;	       /* re-read by the name pass; NULL for parsed text */
	struct u64map *names;  /* address -> struct kname *, or 0 when gone */
	struct u64map *wanted; /* address -> index, for the next name pass */
};

/* One line of kallsyms, pointing into the reader's buffer. */
struct kline {
	uint64_t addr;
	const char *name;
	size_t name_len;
	const char *mod; /* NULL: the kernel image */
	size_t mod_len;
	enum symbol_bind bind;
};

enum line_kind {
	LINE_JUNK,	 /* not "ADDRESS ..." */
	LINE_SYMBOL,	 /* an address, but not a text symbol */
	LINE_TEXT,	 /* a text symbol */
	LINE_END_MARKER, /* _etext or _einittext of the image: bounds, not a symbol */
};

static bool name_is(const struct kline *l, const char *s)
{
	size_t n = strlen(s);

	return l->name_len == n && !memcmp(l->name, s, n);
}

static enum line_kind parse_line(const char *s, const char *end, struct kline *l)
{
	const char *close;
	char type;

	if (!textscan__hex(&s, end, &l->addr) || s >= end || *s != ' ')
		return LINE_JUNK;
	s++;
	if (end - s < 2 || s[1] != ' ')
		return LINE_SYMBOL;
	type = s[0];
	s += 2;
	l->name = s;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\r' && *s)
		s++;
	l->name_len = s - l->name;
	if (!l->name_len)
		return LINE_SYMBOL;
	switch (type) {
	case 'T':
		l->bind = SYMBOL_GLOBAL;
		break;
	case 'W':
	case 'w':
		l->bind = SYMBOL_WEAK;
		break;
	case 't':
		l->bind = SYMBOL_LOCAL;
		break;
	default:
		return LINE_SYMBOL;
	}
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	l->mod = NULL;
	l->mod_len = 0;
	if (s < end && *s == '[') {
		close = memchr(s, ']', end - s);
		/* A cut-off module name would attribute the symbol to the kernel image. */
		if (!close)
			return LINE_SYMBOL;
		l->mod = s + 1;
		l->mod_len = close - l->mod;
		/* Module names are kept as C strings: one with a NUL is no module's. */
		if (memchr(l->mod, '\0', l->mod_len))
			return LINE_SYMBOL;
		return LINE_TEXT;
	}
	if (name_is(l, "_etext") || name_is(l, "_einittext"))
		return LINE_END_MARKER;
	return LINE_TEXT;
}

/* The text a pass reads: a file, or memory (parsed text: tests, fuzzing). */
struct input {
	int fd; /* -1: text */
	const char *text;
	size_t len;
	size_t chunk;
};

static int read_input(const struct input *in, lines_fn fn, void *ctx)
{
	if (in->fd >= 0)
		return lines__read_fd(in->fd, in->chunk, fn, ctx);
	return lines__read_mem(in->text, in->len, in->chunk, fn, ctx);
}

/* The load's order of the symbols at one address (see build_table), lower first. */
static uint64_t entry_key(int bind, const char *name, size_t len, uint32_t mod)
{
	return (uint64_t)symbol_rank_key(bind, name, len) << 32 | mod;
}

/* Trampolines and BPF programs come and go; kernel and module code stays. */
static bool short_lived_module(const char *mod, size_t len)
{
	return (len == 3 && !memcmp(mod, "bpf", 3)) ||
	       (len >= 11 && !memcmp(mod, "__builtin__", 11));
}

/* How many of the sorted a[0..n) are at or below v. */
static size_t count_up_to(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t module_of(const struct ksyms *k, uint32_t idx)
{
	size_t run = count_up_to(k->run_addrs, k->nruns, k->addrs[idx]);

	return run ? k->run_mods[run - 1] : 0;
}

static bool module_matches(const struct ksyms *k, uint32_t mod, const struct kline *l)
{
	const char *name;

	if (!mod || !l->mod)
		return !mod && !l->mod;
	name = strpool__str(k->mods, mod - 1);
	return name && strlen(name) == l->mod_len && !memcmp(name, l->mod, l->mod_len);
}

/* The module id of a line, adding its name when new. */
static int module_id(struct ksyms *k, const struct kline *l, uint32_t last, uint32_t *id)
{
	char small[64], *copy = small;
	long r;

	if (!l->mod) {
		*id = 0;
		return 0;
	}
	/* Lines of one module are consecutive: most lines are the previous line's module. */
	if (last && module_matches(k, last, l)) {
		*id = last;
		return 0;
	}
	if (l->mod_len >= sizeof(small)) {
		copy = malloc(l->mod_len + 1);
		if (!copy)
			return -ENOMEM;
	}
	memcpy(copy, l->mod, l->mod_len);
	copy[l->mod_len] = '\0';
	r = strpool__add(k->mods, copy);
	if (copy != small)
		free(copy);
	if (r < 0)
		return (int)r;
	if ((unsigned long)r >= UINT32_MAX - 1)
		return -E2BIG;
	*id = (uint32_t)r + 1;
	return 0;
}

static void free_name(uint64_t v)
{
	free((struct kname *)(uintptr_t)v);
}

/* Names addr after l unless a preferred alias of the same module already did. */
static int offer_name(struct ksyms *k, const struct kline *l, uint32_t mod)
{
	struct kname *cur = NULL, *n;
	uint64_t v;
	int err;

	if (u64map__get(k->names, l->addr, &v))
		cur = (struct kname *)(uintptr_t)v;
	if (cur && cur->mod == mod &&
	    symbol_rank_cmp(cur->bind, cur->name, cur->len, l->bind, l->name, l->name_len) <= 0)
		return 0;
	/* Another module at this address: keep the one the address will be given. */
	if (cur && cur->mod != mod &&
	    entry_key(cur->bind, cur->name, cur->len, cur->mod) <=
		    entry_key(l->bind, l->name, l->name_len, mod))
		return 0;
	n = malloc(sizeof(*n) + l->name_len + 1);
	if (!n)
		return -ENOMEM;
	n->mod = mod;
	n->bind = l->bind;
	n->len = l->name_len;
	memcpy(n->name, l->name, l->name_len);
	n->name[l->name_len] = '\0';
	err = u64map__set(k->names, l->addr, (uintptr_t)n);
	if (err) {
		free(n);
		return err;
	}
	free(cur);
	return 0;
}

/* The preferred alias of one module at one address, in a buffer reused line after line. */
struct alias {
	uint32_t mod;
	uint8_t bind;
	size_t len;
	size_t cap;
	char *name;
};

/*
 * Gap j of the addresses named at load: the text lines with
 * p[j - 1] < address <= p[j] (gap n: above p[n - 1]). The symbol holding
 * p[j] is the highest of them, or when there is none, that of p[j - 1]; the
 * lowest address of the next gap that has any is where that symbol ends. A
 * gap keeps both, and the preferred alias at its highest address of each
 * module there (one, in practice).
 */
struct gap {
	uint64_t top;
	uint64_t low; /* the lowest address: the end of the symbol before the gap */
	bool any;
	struct alias *aliases;
	size_t naliases;
	size_t cap; /* aliases allocated, their buffers kept for reuse */
};

/* Addresses whose symbols the load names in the same read (ksyms__load_for). */
struct early {
	uint64_t *p; /* sorted, distinct */
	size_t n;
	struct gap *gaps;
};

static void early_free(struct early *e)
{
	size_t j, i;

	for (j = 0; e->gaps && j <= e->n; j++) {
		for (i = 0; i < e->gaps[j].cap; i++)
			free(e->gaps[j].aliases[i].name);
		free(e->gaps[j].aliases);
	}
	free(e->gaps);
	free(e->p);
}

static int early_init(struct early *e, const uint64_t *addrs, size_t n)
{
	size_t i, j = 0;

	memset(e, 0, sizeof(*e));
	if (!n)
		return 0;
	e->p = malloc(n * sizeof(*e->p));
	if (!e->p)
		return -ENOMEM;
	memcpy(e->p, addrs, n * sizeof(*e->p));
	qsort(e->p, n, sizeof(*e->p), range_cmp_u64);
	for (i = 0; i < n; i++)
		if (!j || e->p[i] != e->p[j - 1])
			e->p[j++] = e->p[i];
	e->n = j;
	e->gaps = calloc(j + 1, sizeof(*e->gaps));
	return e->gaps ? 0 : -ENOMEM;
}

static int set_alias(struct alias *a, const struct kline *l, uint32_t mod)
{
	char *name;

	if (a->cap <= l->name_len) {
		name = realloc(a->name, l->name_len + 1);
		if (!name)
			return -ENOMEM;
		a->name = name;
		a->cap = l->name_len + 1;
	}
	memcpy(a->name, l->name, l->name_len);
	a->name[l->name_len] = '\0';
	a->len = l->name_len;
	a->bind = l->bind;
	a->mod = mod;
	return 0;
}

static int early_line(struct early *e, const struct kline *l, uint32_t mod)
{
	size_t j = l->addr ? count_up_to(e->p, e->n, l->addr - 1) : 0, i;
	struct alias *a;
	struct gap *g;

	g = &e->gaps[j];
	if (!g->any || l->addr < g->low)
		g->low = l->addr;
	if (g->any && l->addr < g->top)
		return 0;
	if (!g->any || l->addr > g->top) {
		g->any = true;
		g->top = l->addr;
		g->naliases = 0;
	}
	/* Above every address: only where the last symbol ends matters. */
	if (j == e->n)
		return 0;
	for (i = 0; i < g->naliases && g->aliases[i].mod != mod; i++)
		;
	if (i < g->naliases) {
		a = &g->aliases[i];
		if (symbol_rank_cmp(a->bind, a->name, a->len, l->bind, l->name, l->name_len) <= 0)
			return 0;
		return set_alias(a, l, mod);
	}
	if (g->naliases == g->cap) {
		a = reallocarray(g->aliases, g->cap + 1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		g->aliases = a;
		memset(&a[g->cap++], 0, sizeof(*a));
	}
	return set_alias(&g->aliases[g->naliases++], l, mod);
}

/* The load: every text symbol as (address, alias rank << 32 | module), sorted later. */
struct load {
	struct ksyms *k;
	uint64_t *ents; /* two words per symbol */
	size_t n;
	size_t cap;
	uint32_t last_mod;
	bool any_line, any_addr;
	struct early *early;
	bool only; /* keep only the symbols holding the early addresses */
};

static int add_entry(struct load *ld, const struct kline *l, uint32_t mod)
{
	uint64_t *ne;

	if (ld->n == ld->cap) {
		size_t ncap = ld->cap ? ld->cap * 2 : 16384;

		ne = ncap < SIZE_MAX / 16 ? realloc(ld->ents, ncap * 16) : NULL;
		if (!ne)
			return -ENOMEM;
		ld->ents = ne;
		ld->cap = ncap;
	}
	ld->ents[2 * ld->n] = l->addr;
	ld->ents[2 * ld->n + 1] = entry_key(l->bind, l->name, l->name_len, mod);
	ld->n++;
	return 0;
}

static int load_line(void *ctx, const char *s, const char *end)
{
	struct load *ld = ctx;
	struct text_marks *tm = &ld->k->tm;
	enum line_kind kind;
	struct kline l;
	uint32_t mod = 0;
	int err;

	kind = parse_line(s, end, &l);
	if (kind == LINE_JUNK)
		return 0;
	/* Every "ADDRESS " line, text or not, tells whether addresses are hidden. */
	ld->any_line = true;
	ld->any_addr |= l.addr != 0;
	if (kind == LINE_SYMBOL)
		return 0;
	if (kind == LINE_END_MARKER) {
		if (name_is(&l, "_etext")) {
			tm->etext = l.addr;
			tm->have_etext = true;
		} else {
			tm->einittext = l.addr;
			tm->have_einit = true;
		}
		return 0;
	}
	if (!l.mod && name_is(&l, "_sinittext")) {
		tm->sinittext = l.addr;
		tm->have_sinit = true;
	}
	err = module_id(ld->k, &l, ld->last_mod, &mod);
	if (err)
		return err;
	ld->last_mod = mod;
	if (!ld->only) {
		err = add_entry(ld, &l, mod);
		if (err)
			return err;
	}
	if (ld->early) {
		err = early_line(ld->early, &l, mod);
		if (err)
			return err;
	}
	if (l.mod && short_lived_module(l.mod, l.mod_len))
		return offer_name(ld->k, &l, mod);
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The index of exactly addr, or -1. */
static long index_of(const struct ksyms *k, uint64_t addr)
{
	size_t n = count_up_to(k->addrs, k->count, addr);

	return n && k->addrs[n - 1] == addr ? (long)(n - 1) : -1;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t bounded_end(uint64_t addr, uint64_t next)
{
	uint64_t cap = addr > UINT64_MAX - KSYM_MAX_EXTENT ? UINT64_MAX : addr + KSYM_MAX_EXTENT;

	return min_u64(next, cap);
}

/* Where the symbol at addr ends, given where the next symbol starts (see the top). */
static uint64_t extent_end(const struct text_marks *tm, uint64_t addr, bool in_module,
			   uint64_t next)
{
	if (in_module || !tm->have_etext)
		return bounded_end(addr, next);
	if (addr < tm->etext)
		return min_u64(next, tm->etext);
	if (tm->have_init && addr >= tm->sinittext && addr < tm->einittext)
		return min_u64(next, tm->einittext);
	return bounded_end(addr, next);
}

/* Names kept at load time that are not those of the module the address was given. */
static int drop_mismatched_names(struct ksyms *k)
{
	uint64_t key, v, *drop;
	size_t pos = 0, n = 0, i;
	long idx;

	drop = calloc(u64map__count(k->names) + 1, sizeof(*drop));
	if (!drop)
		return -ENOMEM;
	while (u64map__next(k->names, &pos, &key, &v)) {
		idx = index_of(k, key);
		if (idx < 0 || module_of(k, (uint32_t)idx) != ((struct kname *)(uintptr_t)v)->mod)
			drop[n++] = key;
	}
	for (i = 0; i < n; i++) {
		if (u64map__get(k->names, drop[i], &v))
			free_name(v);
		u64map__delete(k->names, drop[i]);
	}
	free(drop);
	return 0;
}

static int grow_runs(struct ksyms *k, size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 16;
	uint64_t *addrs = reallocarray(k->run_addrs, n, sizeof(*addrs));
	uint32_t *mods;

	if (!addrs)
		return -ENOMEM;
	k->run_addrs = addrs;
	mods = reallocarray(k->run_mods, n, sizeof(*mods));
	if (!mods)
		return -ENOMEM;
	k->run_mods = mods;
	*cap = n;
	return 0;
}

/*
 * Sorts the entries, keeps the first (preferred) of each address, and turns
 * the entry array into the address array in place: the peak stays the entry
 * array, 16 bytes per symbol, for a moment.
 */
static int build_table(struct ksyms *k, struct load *ld)
{
	size_t i, j = 0, runs_cap = 0;
	uint64_t *shrunk;
	uint32_t mod;

	if (k->hidden)
		ld->n = 0;
	if (ld->n > UINT32_MAX - 1)
		return -E2BIG;
	if (ld->n)
		qsort(ld->ents, ld->n, 2 * sizeof(*ld->ents), cmp_ent);
	for (i = 0; i < ld->n; i++) {
		uint64_t addr = ld->ents[2 * i];

		if (j && addr == ld->ents[j - 1])
			continue;
		mod = (uint32_t)ld->ents[2 * i + 1];
		if (!k->nruns || k->run_mods[k->nruns - 1] != mod) {
			if (k->nruns == runs_cap && grow_runs(k, &runs_cap))
				return -ENOMEM;
			k->run_addrs[k->nruns] = addr;
			k->run_mods[k->nruns++] = mod;
		}
		/* Word j is at or before entry i, already read: safe to overwrite. */
		ld->ents[j++] = addr;
	}
	k->count = j;
	shrunk = realloc(ld->ents, (j ? j : 1) * sizeof(*shrunk));
	k->addrs = shrunk ? shrunk : ld->ents;
	ld->ents = NULL;
	/* Hidden: no symbols, so every name kept is dropped. */
	return drop_mismatched_names(k);
}

/* Names the symbol at the top of each gap, in the module the table gave its address. */
static int name_from_gaps(struct ksyms *k, const struct early *e)
{
	struct kline l = {};
	size_t j, i;
	uint32_t mod;
	long idx;
	int err;

	for (j = 0; j < e->n; j++) {
		const struct gap *g = &e->gaps[j];

		idx = g->any ? index_of(k, g->top) : -1;
		if (idx < 0)
			continue;
		mod = module_of(k, (uint32_t)idx);
		for (i = 0; i < g->naliases && g->aliases[i].mod != mod; i++)
			;
		/* Not there only if the table chose by the alias rank alone (see the top). */
		if (i == g->naliases)
			continue;
		l.addr = g->top;
		l.name = g->aliases[i].name;
		l.name_len = g->aliases[i].len;
		l.bind = g->aliases[i].bind;
		err = offer_name(k, &l, mod);
		if (err)
			return err;
	}
	return 0;
}

/* The module of the alias the table would keep at a gap's top: the lowest entry key. */
static const struct alias *kept_alias(const struct gap *g)
{
	const struct alias *best = NULL;
	size_t i;

	for (i = 0; i < g->naliases; i++) {
		const struct alias *a = &g->aliases[i];

		if (!best || entry_key(a->bind, a->name, a->len, a->mod) <
				     entry_key(best->bind, best->name, best->len, best->mod))
			best = a;
	}
	return best;
}

/*
 * A table of only the symbols that hold the early addresses, with their
 * ends, named: the tops of the gaps. Any other address finds nothing.
 */
static int build_partial(struct ksyms *k, const struct early *e)
{
	uint64_t next = UINT64_MAX;
	const struct alias *a;
	struct kline l = {};
	size_t j, n = 0, runs_cap = 0;
	int err;

	k->addrs = calloc(e->n + 1, sizeof(*k->addrs));
	k->ends = calloc(e->n + 1, sizeof(*k->ends));
	if (!k->addrs || !k->ends)
		return -ENOMEM;
	if (k->hidden)
		return 0;
	for (j = 0; j < e->n; j++)
		n += e->gaps[j].any;
	/* Backwards, so each symbol knows where the next gap's lowest symbol starts. */
	k->count = n;
	for (j = e->n + 1; j-- > 0;) {
		const struct gap *g = &e->gaps[j];

		if (!g->any)
			continue;
		if (j < e->n) {
			a = kept_alias(g);
			n--;
			k->addrs[n] = g->top;
			k->ends[n] = extent_end(&k->tm, g->top, a->mod != 0, next);
		}
		next = g->low;
	}
	/* Forwards: module runs and names. */
	for (j = 0; j < e->n; j++) {
		const struct gap *g = &e->gaps[j];

		if (!g->any)
			continue;
		a = kept_alias(g);
		if (!k->nruns || k->run_mods[k->nruns - 1] != a->mod) {
			if (k->nruns == runs_cap && grow_runs(k, &runs_cap))
				return -ENOMEM;
			k->run_addrs[k->nruns] = g->top;
			k->run_mods[k->nruns++] = a->mod;
		}
		l.addr = g->top;
		l.name = a->name;
		l.name_len = a->len;
		l.bind = a->bind;
		err = offer_name(k, &l, a->mod);
		if (err)
			return err;
	}
	return drop_mismatched_names(k);
}

static int ksyms_new(const char *path, struct ksyms **out)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	*out = NULL;
	if (!k)
		return -ENOMEM;
	k->mods = strpool__new();
	k->names = u64map__new();
	k->wanted = u64map__new();
	k->path = path ? strdup(path) : NULL;
	if (!k->mods || !k->names || !k->wanted || (path && !k->path)) {
		ksyms__free(k);
		return -ENOMEM;
	}
	*out = k;
	return 0;
}

static int load_from(const struct input *in, const char *path, const uint64_t *addrs, size_t naddrs,
		     bool only, struct ksyms **out)
{
	struct load ld = {.only = only};
	struct early early;
	struct ksyms *k = NULL;
	int err;

	*out = NULL;
	err = early_init(&early, addrs, naddrs);
	if (!err)
		err = ksyms_new(path, &k);
	if (err)
		goto cleanup;
	ld.k = k;
	ld.early = early.n ? &early : NULL;
	err = read_input(in, load_line, &ld);
	if (err)
		goto cleanup;
	k->tm.have_init = k->tm.have_sinit && k->tm.have_einit && k->tm.einittext > k->tm.sinittext;
	/* kptr_restrict: every address reads as 0. */
	k->hidden = ld.any_line && !ld.any_addr;
	if (only)
		err = build_partial(k, &early);
	else
		err = build_table(k, &ld);
	if (!err && !only && !k->hidden && ld.early)
		err = name_from_gaps(k, &early);
	if (err)
		goto cleanup;
	*out = k;
	k = NULL;
cleanup:
	free(ld.ents);
	early_free(&early);
	ksyms__free(k);
	return err;
}

int ksyms__parse_for(const char *text, size_t len, size_t chunk, const uint64_t *addrs,
		     size_t naddrs, bool only, struct ksyms **out)
{
	struct input in = {.fd = -1, .text = text, .len = len, .chunk = chunk};

	*out = NULL;
	if ((!text && len) || !chunk || (!addrs && naddrs))
		return -EINVAL;
	return load_from(&in, NULL, addrs, naddrs, only, out);
}

int ksyms__parse(const char *text, size_t len, struct ksyms **out)
{
	return ksyms__parse_for(text, len, KSYMS_CHUNK, NULL, 0, false, out);
}

int ksyms__load_for(const char *path, const uint64_t *addrs, size_t naddrs, bool only,
		    struct ksyms **out)
{
	struct input in = {.chunk = KSYMS_CHUNK};
	int err;

	*out = NULL;
	if (!addrs && naddrs)
		return -EINVAL;
	if (!path)
		path = "/proc/kallsyms";
	in.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in.fd < 0) {
		err = -errno;
		pr_warn("open %s: %s", path, strerror(-err));
		return err;
	}
	err = load_from(&in, path, addrs, naddrs, only, out);
	close(in.fd);
	if (err)
		pr_warn("read %s: %s", path, strerror(-err));
	else
		pr_debug("%s: %zu text symbols%s%s", path, (*out)->count, only ? " kept" : "",
			 (*out)->hidden ? " (addresses hidden)" : "");
	return err;
}

int ksyms__load(const char *path, struct ksyms **out)
{
	return ksyms__load_for(path, NULL, 0, false, out);
}

void ksyms__free(struct ksyms *k)
{
	uint64_t key, v;
	size_t pos = 0;

	if (!k)
		return;
	if (k->names)
		while (u64map__next(k->names, &pos, &key, &v))
			free_name(v);
	u64map__free(k->names);
	u64map__free(k->wanted);
	strpool__free(k->mods);
	free(k->addrs);
	free(k->ends);
	free(k->run_addrs);
	free(k->run_mods);
	free(k->path);
	free(k);
}

bool ksyms__hidden(const struct ksyms *k)
{
	return k && k->hidden;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->count : 0;
}

/* Exclusive end of symbol idx. */
static uint64_t symbol_end(const struct ksyms *k, uint32_t idx)
{
	if (k->ends)
		return k->ends[idx];
	return extent_end(&k->tm, k->addrs[idx], module_of(k, idx) != 0,
			  idx + 1 < k->count ? k->addrs[idx + 1] : UINT64_MAX);
}

int ksyms__find(const struct ksyms *k, uint64_t addr, uint32_t *idx)
{
	size_t n;

	if (!k || k->hidden)
		return -ENOENT;
	n = count_up_to(k->addrs, k->count, addr);
	if (!n || addr >= symbol_end(k, (uint32_t)(n - 1)))
		return -ENOENT;
	*idx = (uint32_t)(n - 1);
	return 0;
}

uint64_t ksyms__addr(const struct ksyms *k, uint32_t idx)
{
	return idx < k->count ? k->addrs[idx] : 0;
}

const char *ksyms__module(const struct ksyms *k, uint32_t idx)
{
	uint32_t mod = idx < k->count ? module_of(k, idx) : 0;

	return mod ? strpool__str(k->mods, mod - 1) : NULL;
}

int ksyms__name(const struct ksyms *k, uint32_t idx, const char **name)
{
	uint64_t v;

	if (idx >= k->count || !u64map__get(k->names, k->addrs[idx], &v))
		return -EAGAIN;
	if (!v)
		return -ENOENT;
	*name = ((struct kname *)(uintptr_t)v)->name;
	return 0;
}

int ksyms__want_name(struct ksyms *k, uint32_t idx)
{
	uint64_t v;

	if (idx >= k->count)
		return -EINVAL;
	if (u64map__get(k->names, k->addrs[idx], &v))
		return 0;
	return u64map__set(k->wanted, k->addrs[idx], idx);
}

size_t ksyms__wanted(const struct ksyms *k)
{
	return k ? u64map__count(k->wanted) : 0;
}

static int name_line(void *ctx, const char *s, const char *end)
{
	struct ksyms *k = ctx;
	const char *p = s;
	struct kline l;
	uint64_t v;
	uint32_t mod;

	/* Few lines are wanted: the address decides before the rest is parsed. */
	if (!textscan__hex(&p, end, &l.addr) || !u64map__get(k->wanted, l.addr, &v) ||
	    parse_line(s, end, &l) != LINE_TEXT)
		return 0;
	mod = module_of(k, (uint32_t)v);
	if (!module_matches(k, mod, &l))
		return 0;
	return offer_name(k, &l, mod);
}

/* After a pass: the wanted symbols it did not name are gone, or (failed) unnamed again. */
static int settle_wanted(struct ksyms *k, bool failed)
{
	struct u64map *fresh = u64map__new();
	uint64_t key, v, named;
	size_t pos = 0;
	int err = 0;

	if (!fresh)
		return -ENOMEM;
	while (u64map__next(k->wanted, &pos, &key, &v)) {
		bool has = u64map__get(k->names, key, &named);

		if (failed) {
			if (has)
				free_name(named);
			u64map__delete(k->names, key);
			if (!err)
				err = u64map__set(fresh, key, v);
		} else if (!has && !err) {
			err = u64map__set(k->names, key, 0);
		}
	}
	if (err) {
		u64map__free(fresh);
		return err;
	}
	u64map__free(k->wanted);
	k->wanted = fresh;
	return 0;
}

static int name_pass(struct ksyms *k, const struct input *in)
{
	int err;

	if (!u64map__count(k->wanted))
		return 0;
	err = read_input(in, name_line, k);
	if (err) {
		settle_wanted(k, true);
		return err;
	}
	return settle_wanted(k, false);
}

int ksyms__name_pass_text(struct ksyms *k, const char *text, size_t len, size_t chunk)
{
	struct input in = {.fd = -1, .text = text, .len = len, .chunk = chunk};

	if ((!text && len) || !chunk)
		return -EINVAL;
	return name_pass(k, &in);
}

int ksyms__name_pass(struct ksyms *k)
{
	struct input in = {.chunk = KSYMS_CHUNK};
	int err;

	if (!u64map__count(k->wanted))
		return 0;
	if (!k->path)
		return -EINVAL;
	in.fd = open(k->path, O_RDONLY | O_CLOEXEC);
	if (in.fd < 0) {
		err = -errno;
		pr_warn("open %s: %s", k->path, strerror(-err));
		return err;
	}
	err = name_pass(k, &in);
	close(in.fd);
	if (err)
		pr_warn("read %s: %s", k->path, strerror(-err));
	return err;
}
