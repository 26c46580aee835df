// SPDX-License-Identifier: MIT
/* The source lines of a profile's frames; see source_lines.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "lines"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "resolve/elf_symtab.h"
#include "resolve/source_lines.h"

struct want {
	struct elf_symtab *elf;
	uint64_t vaddr;
	uint32_t frame;
};

struct source_lines {
	struct want *v;
	size_t n, cap;
};

int source_lines__new(struct source_lines **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void source_lines__free(struct source_lines *sl)
{
	if (!sl)
		return;
	free(sl->v);
	free(sl);
}

int source_lines__want(struct source_lines *sl, struct elf_symtab *elf, uint64_t vaddr,
		       uint32_t frame)
{
	size_t cap = sl->cap ? 2 * sl->cap : 256;
	struct want *v;

	if (sl->n == sl->cap) {
		v = reallocarray(sl->v, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		sl->v = v;
		sl->cap = cap;
	}
	sl->v[sl->n++] = (struct want){elf, vaddr, frame};
	return 0;
}

size_t source_lines__count(const struct source_lines *sl)
{
	return sl->n;
}

/* By file, then address. */
static int cmp_want(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	if (x->elf != y->elf)
		return (uintptr_t)x->elf < (uintptr_t)y->elf ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static enum symbolizer_line why_none(int err)
{
	switch (err) {
	case -ENOENT:
		return SYM_LINE_NO_DEBUG;
	case -EFBIG:
		return SYM_LINE_REFUSED;
	case -EOPNOTSUPP:
		return SYM_LINE_UNSUPPORTED;
	case -ETIME:
	case -EAGAIN: /* its symbols (and sections) are to be loaded again: not in this profile */
		return SYM_LINE_CUT_OFF;
	default:
		return SYM_LINE_UNREADABLE;
	}
}

/* The wants v[0..n) of one file, sorted by address. */
static int find_in_file(struct want *v, size_t n, struct load_budget *budget,
			struct dwarf_line_counts *counts, source_lines_fn answer, void *ctx)
{
	struct dwarf_line_answer *out = NULL;
	struct dwarf_ctx *dw;
	uint64_t *addrs = NULL;
	size_t i;
	int err;

	dw = elf_symtab__dwarf(v[0].elf, &err);
	if (dw && load_budget__over(budget))
		err = -ETIME;
	else if (dw) {
		addrs = malloc(n * sizeof(*addrs));
		out = malloc(n * sizeof(*out));
		err = addrs && out ? 0 : -ENOMEM;
		for (i = 0; i < n && !err; i++)
			addrs[i] = v[i].vaddr;
		if (!err)
			err = dwarf_ctx__lines(dw, addrs, n, out, counts, budget);
		if (err && err != -ENOMEM)
			pr_debug("%s: line table not read: %s", elf_symtab__path(v[0].elf),
				 strerror(-err));
	}
	for (i = 0; i < n && err != -ENOMEM; i++) {
		if (!dw || err)
			answer(ctx, v[i].frame, NULL, 0, why_none(err ? err : -ENOENT));
		else
			answer(ctx, v[i].frame, out[i].file, out[i].line,
			       out[i].file ? SYM_LINE_FOUND : SYM_LINE_NO_ROW);
	}
	free(addrs);
	free(out);
	return err == -ENOMEM ? err : 0;
}

int source_lines__find(struct source_lines *sl, struct load_budget *budget,
		       struct dwarf_line_counts *counts, source_lines_fn answer, void *ctx)
{
	size_t i, j;
	int err = 0, e;

	qsort(sl->v, sl->n, sizeof(*sl->v), cmp_want);
	for (i = 0; i < sl->n; i = j) {
		for (j = i + 1; j < sl->n && sl->v[j].elf == sl->v[i].elf; j++)
			;
		e = find_in_file(sl->v + i, j - i, budget, counts, answer, ctx);
		if (e && !err)
			err = e;
	}
	sl->n = 0;
	return err;
}
