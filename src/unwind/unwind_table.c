// SPDX-License-Identifier: MIT
/*
 * Builds a file's compact unwind table; see unwind_table.h. FDEs are
 * sorted first (only their ranges: 32 bytes each), then their programs
 * run in address order and stream rows straight into the table, so a
 * large library never holds its CFI rows in memory twice. Consecutive
 * rows with the same rule are one row: most CFI rows differ only in
 * callee-saved registers the unwinder does not need. The alignment padding
 * between functions gets no row of its own when the caller can show it is
 * padding: no code runs there, so the row before may as well cover it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/load_budget.h"
#include "unwind/go_pcsp.h"
#include "unwind/unwind_rule.h"
#include "unwind/unwind_table.h"

struct fde_ref {
	uint64_t begin;
	uint64_t end;
	uint64_t off;	  /* in its section; a Go function's index */
	uint32_t section; /* index in unwind_sources (GO_SOURCE last): an earlier one wins a tie */
};

/* The section index of Go's functions: after both sections. */
#define GO_SOURCE 2

struct fde_list {
	struct fde_ref *v;
	size_t n, cap;
};

struct builder {
	struct unwind_table *t;
	struct unwind_rules *rules;
	struct unwind_table_stats *stats;
	struct unwind_rule_ctx ctx;
	size_t rows_cap, pages_cap;
	uint64_t last_addr; /* of the last row */
	uint32_t last_rule;
	uint64_t clip;	/* rows before this address are an earlier FDE's */
	uint64_t end;	/* the end of what the rows cover */
	uint64_t go_pc; /* the end of a Go function's last rule so far */
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? 2 * *cap : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static int add_ref(struct fde_list *l, const struct fde_ref *ref)
{
	if (l->n >= LOAD_MAX_CFI_FDES)
		return -EFBIG;
	if (grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = *ref;
	return 0;
}

/* Go's functions, as if each had an FDE of the source after the sections. */
static int collect_go(const struct unwind_sources *src, struct fde_list *l)
{
	size_t i, n = go_pcsp__count(src->go);
	struct fde_ref ref = {.section = GO_SOURCE};
	int err;

	for (i = 0; i < n; i++) {
		if (i % LOAD_CHECK_EVERY == LOAD_CHECK_EVERY - 1 && load_budget__over(src->budget))
			return -ETIME;
		go_pcsp__range(src->go, i, &ref.begin, &ref.end);
		ref.off = i;
		if (ref.begin < ref.end && (err = add_ref(l, &ref)))
			return err;
	}
	return 0;
}

static int collect(const struct unwind_sources *src, struct fde_list *l,
		   struct unwind_table_stats *stats)
{
	const struct cfi_section *s;
	struct cfi_fde fde;
	uint64_t off;
	uint32_t i;
	int err;

	for (i = 0; i < src->nsections; i++) {
		s = src->sections[i];
		for (off = 0;;) {
			err = cfi_section__next(s, &off, &fde);
			if (err == -ENOENT)
				break;
			if (stats->fdes % LOAD_CHECK_EVERY == LOAD_CHECK_EVERY - 1 &&
			    load_budget__over(src->budget))
				return -ETIME;
			if (err) {
				stats->bad_entries++;
				continue;
			}
			stats->fdes++;
			if (!fde.pc_range)
				continue;
			err = add_ref(l,
				      &(struct fde_ref){fde.pc_begin, fde.pc_begin + fde.pc_range,
							fde.vaddr - s->vaddr, i});
			if (err)
				return err;
		}
	}
	return src->go ? collect_go(src, l) : 0;
}

/* Whether x goes before y: by address, an earlier section first, then as they came. */
static bool before(const struct fde_ref *x, const struct fde_ref *y)
{
	if (x->begin != y->begin)
		return x->begin < y->begin;
	if (x->section != y->section)
		return x->section < y->section;
	return x->off < y->off;
}

/*
 * A merge sort, not qsort: FDEs come nearly in address order (the linker
 * lays them out as it lays out the code), and a run already in order is
 * neither compared past its ends nor moved. musl's qsort moved 32-byte
 * entries through memcpy a third of the time a table took to build.
 */
static void sort_fdes(struct fde_ref *v, struct fde_ref *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	sort_fdes(v, tmp, mid);
	sort_fdes(v + mid, tmp, n - mid);
	if (!before(&v[mid], &v[mid - 1]))
		return;
	while (i < mid && j < n)
		tmp[k++] = before(&v[j], &v[i]) ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof(*v));
}

/* Page index entries up to and including addr's page point at row n. */
static int fill_pages(struct builder *b, uint64_t addr)
{
	struct unwind_table *t = b->t;
	uint64_t page = (addr - t->base) >> CPROF_UNWIND_PAGE_SHIFT;

	if (page >= UINT32_MAX)
		return -E2BIG;
	while (t->npages <= page) {
		if (grow((void **)&t->pages, &b->pages_cap, t->npages + 1, sizeof(*t->pages)))
			return -ENOMEM;
		t->pages[t->npages++] = t->nrows;
	}
	return 0;
}

static int push_row(struct builder *b, uint64_t addr, uint32_t rule)
{
	struct unwind_table *t = b->t;
	int err;

	if (t->nrows && rule == b->last_rule)
		return 0;
	/* An empty row is replaced by the one that starts where it did. */
	if (t->nrows && addr == b->last_addr) {
		t->rows[t->nrows - 1] = cprof_unwind_row((uint32_t)addr, rule);
		b->last_rule = rule;
		return 0;
	}
	if (!t->nrows)
		t->base = addr & ~(uint64_t)CPROF_UNWIND_PAGE_MASK;
	/* More than any real file's (load_budget.h): refused whole, not cut. */
	if (t->nrows >= LOAD_MAX_CFI_ROWS)
		return -EFBIG;
	err = fill_pages(b, addr);
	if (!err)
		err = grow((void **)&t->rows, &b->rows_cap, t->nrows, sizeof(*t->rows));
	if (err)
		return err;
	t->rows[t->nrows++] = cprof_unwind_row((uint32_t)addr, rule);
	b->last_addr = addr;
	b->last_rule = rule;
	return 0;
}

/* A rule over [begin, end), but for what an earlier FDE covered. */
static int add_rule(struct builder *b, uint64_t begin, uint64_t end, struct cprof_unwind_rule rule)
{
	uint32_t id;
	int err;

	if (end <= b->clip)
		return 0;
	if (begin < b->clip)
		begin = b->clip;
	err = unwind_rules__id(b->rules, &rule, &id);
	if (err == -ENOSPC) {
		rule = unwind_rule_stop(CPROF_STOP_NO_RULE_ROOM);
		err = unwind_rules__id(b->rules, &rule, &id);
	}
	if (err)
		return err;
	if (rule.cfa_kind == CPROF_CFA_STOP)
		b->stats->stops[rule.stop]++;
	b->stats->cfa_in_reg +=
		rule.cfa_kind == CPROF_CFA_REG || rule.cfa_kind == CPROF_CFA_REG_DEREF;
	return push_row(b, begin, id);
}

static int on_row(const struct cfi_row *row, void *arg)
{
	struct builder *b = arg;

	b->stats->cfi_rows++;
	if (row->end <= b->clip)
		return 0;
	return add_rule(b, row->begin, row->end, unwind_rule_from_cfi(&b->ctx, row));
}

static int on_go_rule(uint64_t begin, uint64_t end, const struct cprof_unwind_rule *rule, void *arg)
{
	struct builder *b = arg;

	b->go_pc = end;
	return add_rule(b, begin, end, *rule);
}

/*
 * A Go function's rules from its pcsp table. What the table leaves
 * uncovered (none, a corrupt one, one that ends early) has no CFI.
 */
static int add_go(struct builder *b, const struct unwind_sources *src, const struct fde_ref *ref)
{
	int err;

	b->go_pc = ref->begin;
	err = go_pcsp__rules(src->go, ref->off, on_go_rule, b);
	if (err == -EBADMSG) {
		b->stats->bad_entries++;
		err = 0;
	}
	b->stats->go_funcs++;
	if (b->go_pc < b->clip)
		b->go_pc = b->clip;
	if (err || b->go_pc >= ref->end)
		return err;
	/* Go's table ends a function where the next begins: the padding between has no row. */
	if (src->is_padding && src->is_padding(src->padding_arg, b->go_pc, ref->end)) {
		b->stats->padding_gaps++;
		return 0;
	}
	return push_row(b, b->go_pc, CPROF_RULE_NO_CFI);
}

static int add_fde(struct builder *b, const struct unwind_sources *src, struct cfi_program *prog,
		   const struct fde_ref *ref)
{
	struct cfi_fde fde;
	int err = 0;

	if (ref->end <= b->end) {
		b->stats->overlaps++;
		return 0;
	}
	if (ref->begin < b->end) {
		b->stats->overlaps++;
	} else if (b->t->nrows && ref->begin > b->end) {
		if (src->is_padding && src->is_padding(src->padding_arg, b->end, ref->begin))
			b->stats->padding_gaps++;
		else
			err = push_row(b, b->end, CPROF_RULE_NO_CFI);
		if (err)
			return err;
	}
	b->clip = b->end > ref->begin ? b->end : 0;
	if (ref->section == GO_SOURCE) {
		err = add_go(b, src, ref);
		b->end = ref->end;
		return err;
	}
	err = cfi_section__fde_at(src->sections[ref->section], ref->off, &fde);
	if (err) {
		b->stats->bad_entries++;
		return 0;
	}
	b->ctx.ra_column = fde.ra_column;
	b->ctx.signal_frame = fde.signal_frame;
	err = cfi_program__run(prog, &fde, on_row, b);
	b->end = ref->end;
	return err;
}

static int build(struct builder *b, const struct unwind_sources *src, struct fde_list *l)
{
	struct cfi_program *prog;
	size_t i;
	int err = cfi_program__new(src->arch, &prog);

	for (i = 0; !err && i < l->n; i++) {
		if (i % LOAD_CHECK_EVERY == LOAD_CHECK_EVERY - 1 && load_budget__over(src->budget))
			err = -ETIME;
		else
			err = add_fde(b, src, prog, &l->v[i]);
	}
	/* The end of the last function: no CFI from there on. */
	if (!err)
		err = push_row(b, b->end, CPROF_RULE_NO_CFI);
	if (!err)
		err = fill_pages(b, b->last_addr);
	if (!err)
		err = grow((void **)&b->t->pages, &b->pages_cap, b->t->npages + 1,
			   sizeof(*b->t->pages));
	if (!err)
		b->t->pages[b->t->npages] = b->t->nrows;
	cfi_program__free(prog);
	return err;
}

int unwind_table__build(const struct unwind_sources *src, struct unwind_rules *rules,
			struct unwind_table **out, struct unwind_table_stats *stats)
{
	struct builder b = {.rules = rules, .stats = stats, .ctx = {.arch = src->arch}};
	struct fde_list l = {0};
	struct fde_ref *tmp = NULL;
	int err;

	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t)
		return -ENOMEM;
	err = collect(src, &l, stats);
	if (!err && !l.n)
		err = -ENOENT;
	if (!err) {
		tmp = malloc(l.n * sizeof(*tmp));
		err = tmp ? 0 : -ENOMEM;
	}
	if (!err) {
		sort_fdes(l.v, tmp, l.n);
		err = build(&b, src, &l);
	}
	free(tmp);
	free(l.v);
	if (err) {
		unwind_table__free(b.t);
		return err;
	}
	*out = b.t;
	return 0;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->pages);
	free(t->rows);
	free(t);
}

uint32_t unwind_table__lookup(const struct unwind_table *t, uint64_t vaddr)
{
	uint32_t lo, hi, mid, low = (uint32_t)vaddr & CPROF_UNWIND_PAGE_MASK;
	uint64_t page;

	if (!t->nrows || vaddr < t->base)
		return CPROF_RULE_NO_CFI;
	page = (vaddr - t->base) >> CPROF_UNWIND_PAGE_SHIFT;
	if (page >= t->npages)
		return CPROF_RULE_NO_CFI;
	lo = t->pages[page];
	hi = t->pages[page + 1];
	/* The last row of the page at or below vaddr; else the row before the page. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((t->rows[mid] & CPROF_UNWIND_PAGE_MASK) <= low)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return CPROF_RULE_NO_CFI;
	return t->rows[lo - 1] >> CPROF_UNWIND_PAGE_SHIFT;
}

size_t unwind_table__bytes(const struct unwind_table *t)
{
	return t ? t->nrows * sizeof(*t->rows) + (t->npages + 1) * sizeof(*t->pages) : 0;
}
