// SPDX-License-Identifier: MIT
/*
 * The file image of an unwind table; see table_file.h. A header, then the
 * page index (npages + 1 entries), the rows (their rule numbers the file's
 * own: 0 is "no CFI", k the k-th rule that follows) and the rules, all
 * in the host's byte order: a store is one host's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "store/kept_image.h"
#include "unwind/table_file.h"

#define MAGIC "cprofut\n"
/* Past these no file's table goes: 4 GiB of code, and more rows than it has bytes. */
#define MAX_PAGES (1u << 16)
#define MAX_ROWS  (1u << 30)

_Static_assert(TABLE_FILE_VERSION_LEN == KEPT_IMAGE_VERSION_LEN, "describe copies it whole");

struct header {
	struct kept_head head;
	uint32_t npages;
	struct kept_source file;
	uint64_t base;
	uint32_t nrows;
	uint32_t nrules; /* after "no CFI", which is not stored */
	struct unwind_table_stats stats;
	uint64_t checksum; /* of the whole image, with this field 0 */
};

_Static_assert(offsetof(struct header, checksum) % 8 == 0,
	       "image_checksum() skips it word by word");

static uint64_t checksum(const void *buf, size_t n)
{
	return image_checksum(buf, n, offsetof(struct header, checksum));
}

void table_file__seal(void *buf, size_t len)
{
	image_seal(buf, len, sizeof(struct header), offsetof(struct header, checksum));
}

int table_file__describe(const void *buf, size_t len, struct table_file_id *id,
			 char version[TABLE_FILE_VERSION_LEN])
{
	struct header h;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	memset(id, 0, sizeof(*id));
	if (kept_head__describe(&h.head, id->build_id, &id->build_id_len, version))
		return -EINVAL;
	id->file = h.file;
	return 0;
}

static size_t body_size(uint32_t npages, uint32_t nrows, uint32_t nrules)
{
	return ((size_t)npages + 1) * sizeof(uint32_t) + (size_t)nrows * sizeof(uint32_t) +
	       (size_t)nrules * sizeof(struct cprof_unwind_rule);
}

static void fill_header(struct header *h, const struct unwind_table *t,
			const struct unwind_table_stats *stats, const struct table_file_id *id,
			const char *version, uint32_t nrules)
{
	memset(h, 0, sizeof(*h));
	kept_head__fill(&h->head, MAGIC, sizeof(*h), version, id->build_id, id->build_id_len);
	h->file = id->file;
	h->base = t->base;
	h->npages = t->npages;
	h->nrows = t->nrows;
	h->nrules = nrules;
	h->stats = *stats;
}

/* The file's rule numbers of the run's ids in t's rows, into local[]; how many rules. */
static uint32_t number_rules(const struct unwind_table *t, uint32_t *local, uint32_t *global)
{
	uint32_t i, id, n = 0;

	for (i = 0; i < t->nrows; i++) {
		id = t->rows[i] >> CPROF_UNWIND_PAGE_SHIFT;
		if (id != CPROF_RULE_NO_CFI && !local[id]) {
			global[n] = id;
			local[id] = ++n;
		}
	}
	return n;
}

int table_file__encode(const struct unwind_table *t, const struct unwind_rules *rules,
		       const struct unwind_table_stats *stats, const struct table_file_id *id,
		       const char *version, void **out, size_t *len)
{
	const struct cprof_unwind_rule *all = unwind_rules__all(rules);
	uint32_t *local, *global, nrules, i, *p;
	struct cprof_unwind_rule *r;
	struct header *h;
	size_t size;
	int err = -ENOMEM;

	*out = NULL;
	*len = 0;
	local = calloc(unwind_rules__count(rules), sizeof(*local));
	global = malloc(unwind_rules__count(rules) * sizeof(*global));
	if (!local || !global)
		goto cleanup;
	nrules = number_rules(t, local, global);
	size = sizeof(*h) + body_size(t->npages, t->nrows, nrules);
	h = malloc(size);
	if (!h)
		goto cleanup;
	fill_header(h, t, stats, id, version, nrules);
	p = (uint32_t *)(h + 1);
	memcpy(p, t->pages, ((size_t)t->npages + 1) * sizeof(*p));
	p += t->npages + 1;
	for (i = 0; i < t->nrows; i++)
		p[i] = cprof_unwind_row(t->rows[i], local[t->rows[i] >> CPROF_UNWIND_PAGE_SHIFT]);
	r = (struct cprof_unwind_rule *)(p + t->nrows);
	for (i = 0; i < nrules; i++)
		r[i] = all[global[i]];
	table_file__seal(h, size);
	*out = h;
	*len = size;
	err = 0;
cleanup:
	free(local);
	free(global);
	return err;
}

/* The header is this build's, of the file id names, and its sizes add up to len (the checksum
 * is the caller's). */
static bool header_ok(const struct header *h, size_t len, const struct table_file_id *id,
		      const char *version)
{
	if (!kept_head__is(&h->head, MAGIC, sizeof(*h), version, id->build_id, id->build_id_len) ||
	    !kept_source__same(&h->file, &id->file))
		return false;
	if (!h->npages || h->npages > MAX_PAGES || h->nrows > MAX_ROWS ||
	    h->nrules >= CPROF_UNWIND_MAX_RULES)
		return false;
	return len - sizeof(*h) == body_size(h->npages, h->nrows, h->nrules);
}

/* Pages that cover the rows in order, rows in order within a page, each naming a rule. */
static bool rows_ok(const struct header *h, const uint32_t *pages, const uint32_t *rows)
{
	uint32_t p, i;

	if (pages[0] != 0 || pages[h->npages] != h->nrows)
		return false;
	/* All of them first: so no page reaches past the rows. */
	for (p = 0; p < h->npages; p++)
		if (pages[p] > pages[p + 1])
			return false;
	for (p = 0; p < h->npages; p++) {
		for (i = pages[p]; i < pages[p + 1]; i++) {
			if ((rows[i] >> CPROF_UNWIND_PAGE_SHIFT) > h->nrules)
				return false;
			if (i > pages[p] && (rows[i] & CPROF_UNWIND_PAGE_MASK) <
						    (rows[i - 1] & CPROF_UNWIND_PAGE_MASK))
				return false;
		}
	}
	return true;
}

/* A rule the unwinder can run: every kind one it knows, a register it keeps. */
static bool rule_ok(const struct cprof_unwind_rule *r)
{
	if (r->cfa_kind > CPROF_CFA_REG_DEREF || r->ra_kind > CPROF_RA_IN_LR ||
	    r->fp_kind > CPROF_FP_LOST)
		return false;
	if (r->cfa_kind == CPROF_CFA_REG || r->cfa_kind == CPROF_CFA_REG_DEREF)
		return r->cfa_reg < CPROF_GREGS;
	return r->stop < CPROF_STOP_MAX;
}

static bool rules_ok(const struct cprof_unwind_rule *r, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!rule_ok(&r[i]))
			return false;
	return true;
}

static struct unwind_table *copy_table(const struct header *h, const uint32_t *pages,
				       const uint32_t *rows, const uint32_t *ids)
{
	struct unwind_table *t = calloc(1, sizeof(*t));
	uint32_t i;

	if (!t)
		return NULL;
	t->pages = malloc(((size_t)h->npages + 1) * sizeof(*t->pages));
	t->rows = malloc((h->nrows ? h->nrows : 1) * sizeof(*t->rows));
	if (!t->pages || !t->rows) {
		unwind_table__free(t);
		return NULL;
	}
	t->base = h->base;
	t->npages = h->npages;
	t->nrows = h->nrows;
	memcpy(t->pages, pages, ((size_t)h->npages + 1) * sizeof(*t->pages));
	for (i = 0; i < h->nrows; i++)
		t->rows[i] = cprof_unwind_row(rows[i], ids[rows[i] >> CPROF_UNWIND_PAGE_SHIFT]);
	return t;
}

int table_file__decode(const void *buf, size_t len, const struct table_file_id *id,
		       const char *version, struct unwind_rules *rules, struct unwind_table **out,
		       struct unwind_table_stats *stats)
{
	const struct cprof_unwind_rule *r;
	const uint32_t *pages, *rows;
	struct header h;
	uint32_t *ids, i;
	int err = 0;

	*out = NULL;
	if (len < sizeof(h))
		return -EINVAL;
	/* Copied out: buf need not be aligned. The body is read in place once checked. */
	memcpy(&h, buf, sizeof(h));
	if (!header_ok(&h, len, id, version) || ((uintptr_t)buf & 7))
		return -EINVAL;
	if (h.checksum != checksum(buf, len))
		return -EINVAL;
	pages = (const uint32_t *)((const struct header *)buf + 1);
	rows = pages + h.npages + 1;
	r = (const struct cprof_unwind_rule *)(rows + h.nrows);
	if (!rows_ok(&h, pages, rows) || !rules_ok(r, h.nrules))
		return -EINVAL;
	ids = malloc(((size_t)h.nrules + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	ids[0] = CPROF_RULE_NO_CFI;
	for (i = 0; i < h.nrules && !err; i++)
		err = unwind_rules__id(rules, &r[i], &ids[i + 1]);
	if (!err) {
		*out = copy_table(&h, pages, rows, ids);
		err = *out ? 0 : -ENOMEM;
	}
	if (!err)
		*stats = h.stats;
	free(ids);
	return err;
}
