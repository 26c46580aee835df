// SPDX-License-Identifier: MIT
/* The source lines of a profile's frames; see source_lines.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "lines"
#include "lib/clock.h"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "resolve/elf_symtab.h"
#include "resolve/source_lines.h"

struct want {
	struct elf_symtab *elf;
	uint64_t vaddr;
	uint32_t frame;
};

/* The wants of one file: v[first, first + n), and what reading its table costs. */
struct file_wants {
	size_t first, n;
	uint64_t cost;
};

struct source_lines {
	struct want *v;
	size_t n, cap;
	struct file_wants *files;
	size_t nfiles, files_cap;
	bool no_inlines;
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
	free(sl->files);
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

void source_lines__set_inlines(struct source_lines *sl, bool on)
{
	sl->no_inlines = !on;
}

bool source_lines__inlines(const struct source_lines *sl)
{
	return !sl->no_inlines;
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

static int cmp_file(const void *a, const void *b)
{
	const struct file_wants *x = a, *y = b;

	return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* Notes the wants v[first, end) of one file. 0 or -ENOMEM. */
static int add_file(struct source_lines *sl, size_t first, size_t end)
{
	size_t cap = sl->files_cap ? 2 * sl->files_cap : 64;
	struct file_wants *f;
	int err;

	if (sl->nfiles == sl->files_cap) {
		f = reallocarray(sl->files, cap, sizeof(*f));
		if (!f)
			return -ENOMEM;
		sl->files = f;
		sl->files_cap = cap;
	}
	sl->files[sl->nfiles++] = (struct file_wants){
		first, end - first, dwarf_ctx__size(elf_symtab__dwarf(sl->v[first].elf, &err))};
	return 0;
}

static enum symbolizer_line why_none(int err)
{
	switch (err) {
	case -ENOENT:
		return SYM_LINE_NO_DEBUG;
	case -EFBIG:
	case -ENOSPC: /* all files' held LOAD_MAX_HELD_DWARF_BYTES */
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

/*
 * The functions inlined at addrs into out, or none (out NULL'd): a file
 * with lines whose .debug_info is not read is counted. 0 or -ENOMEM.
 */
static int find_inlines(struct dwarf_ctx *dw, const uint64_t *addrs, size_t n,
			struct dwarf_inline_answer **out, struct load_budget *budget,
			struct source_lines_counts *counts, const char *path)
{
	int err;

	*out = malloc(n * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	err = dwarf_ctx__inlines(dw, addrs, n, *out, &counts->inlines, budget);
	if (!err)
		return 0;
	free(*out);
	*out = NULL;
	if (err == -ENOMEM)
		return err;
	counts->inline_files_unread++;
	pr_debug("%s: inlined functions not read: %s", path, strerror(-err));
	return 0;
}

/* The wants v[0..n) of one file, sorted by address. */
static int find_in_file(struct source_lines *sl, struct want *v, size_t n,
			struct load_budget *budget, struct source_lines_counts *counts,
			source_lines_fn answer, void *ctx)
{
	struct dwarf_inline_answer *inl = NULL;
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
			err = dwarf_ctx__lines(dw, addrs, n, out, &counts->lines, budget);
		if (err && err != -ENOMEM)
			pr_debug("%s: line table not read: %s", elf_symtab__path(v[0].elf),
				 strerror(-err));
		if (!err && !sl->no_inlines)
			err = find_inlines(dw, addrs, n, &inl, budget, counts,
					   elf_symtab__path(v[0].elf));
	}
	for (i = 0; i < n && err != -ENOMEM; i++) {
		if (!dw || err)
			answer(ctx, v[i].frame, NULL, 0, why_none(err ? err : -ENOENT), NULL);
		else
			answer(ctx, v[i].frame, out[i].file, out[i].line,
			       out[i].file ? SYM_LINE_FOUND : SYM_LINE_NO_ROW,
			       inl ? &inl[i] : NULL);
	}
	free(addrs);
	free(out);
	free(inl);
	return err == -ENOMEM ? err : 0;
}

/*
 * The time lines may take: until the run's deadline for loads, but at
 * least LOAD_GRACE_MS from now, as they are only read when a profile ends,
 * which may be after that deadline; no deadline without one.
 */
static void lines_budget(const struct load_budget *run, struct load_budget *b)
{
	uint64_t end = load_budget__deadline((struct load_budget *)run),
		 floor = clock__mono_ns() + LOAD_GRACE_MS * 1000000ull;

	*b = (struct load_budget){.stop_requested = run ? run->stop_requested : NULL};
	atomic_store(&b->deadline_ns, end == UINT64_MAX ? 0 : end > floor ? end : floor);
}

int source_lines__find(struct source_lines *sl, struct load_budget *run,
		       struct source_lines_counts *counts, source_lines_fn answer, void *ctx)
{
	struct load_budget budget_, *budget = &budget_;
	size_t i, j;
	int err = 0, e;

	if (!sl->n)
		return 0; /* (and qsort takes no NULL array) */
	lines_budget(run, budget);
	qsort(sl->v, sl->n, sizeof(*sl->v), cmp_want);
	for (i = 0; i < sl->n; i = j) {
		for (j = i + 1; j < sl->n && sl->v[j].elf == sl->v[i].elf; j++)
			;
		e = add_file(sl, i, j);
		if (e && !err)
			err = e;
	}
	/* The smallest tables first: a user's huge one cannot use up the time of everyone's. */
	if (sl->nfiles)
		qsort(sl->files, sl->nfiles, sizeof(*sl->files), cmp_file);
	for (i = 0; i < sl->nfiles; i++) {
		e = find_in_file(sl, sl->v + sl->files[i].first, sl->files[i].n, budget, counts,
				 answer, ctx);
		if (e && !err)
			err = e;
	}
	sl->n = 0;
	sl->nfiles = 0;
	return err;
}
