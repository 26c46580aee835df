// SPDX-License-Identifier: MIT
/*
 * Folded-stack encoder; see folded.h. Every sample folds into one line;
 * equal lines (samples that differ only in what the format drops: the pid,
 * or the address within a function) are merged by adding their counts,
 * and the merged lines are sorted.
 *
 * A line is made of pieces, the texts between its ';': the comm, the
 * thread ("name/tid"), each frame's name defused with the kernel's suffix,
 * then the functions inlined at its address (outermost first), each with
 * perf's suffix " (inlined)".
 * A piece has no ';', so two lines are equal text exactly when they are
 * the same sequence of pieces. Each distinct piece is made once and given
 * an id; lines are built, hashed and merged as sequences of ids, and only
 * the distinct lines are written out as text: a C++ profile's lines run to
 * kilobytes (root-first frames of hundreds of bytes each), thousands of
 * them, where its distinct lines are a few hundred. Those are sorted by
 * text, compared eight bytes at a time (musl compares a byte at a time).
 *
 * Names are kept as they are except where they would break the format:
 * ';' separates frames, so it becomes ':'; a line ends at a newline, so
 * control characters (newline, tab, ESC..., as term_text.h says: the file
 * may be read on a terminal) become '_', a '_' a byte. Plain spaces stay:
 * C++ signatures contain them and flamegraph.pl takes only the last
 * space-separated field as the count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "folded"
#include "build/profile.h"
#include "encode/folded.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/sbuf.h"
#include "lib/sort.h"
#include "lib/term_text.h"
#include "lib/u64map.h"

#define UNKNOWN_NAME   "[unknown]"
#define KERNEL_SUFFIX  "_[k]"
#define INLINED_SUFFIX " (inlined)"

/* Appends a name, defused as the comment at the top of this file says. */
static void sbuf_name(struct sbuf *b, const char *name)
{
	size_t i, n, len;
	bool control;

	if (!name || !*name)
		name = UNKNOWN_NAME;
	n = strlen(name);
	sbuf__reserve(b, n);
	if (b->err)
		return;
	for (i = 0; i < n; i += len) {
		len = term_text__char(name + i, n - i, &control);
		if (name[i] == ';')
			b->data[b->len] = ':';
		else if (control)
			memset(b->data + b->len, '_', len);
		else
			memcpy(b->data + b->len, name + i, len);
		b->len += len;
	}
}

/* A line: its pieces (seq[at..at+n)), merged count, and its text once written. */
struct line {
	uint64_t hash;
	size_t at;
	uint32_t n;
	uint64_t count;
	const char *text;
	size_t len;
};

static uint64_t load_be64(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return __builtin_bswap64(w);
}

/* A hash of n bytes, eight at a time. */
static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8)
		h = hash_u64(h ^ load_be64(s + i));
	w = 0;
	memcpy(&w, s + i, n - i);
	return hash_u64(h ^ w);
}

/* strcmp's order (bytes as unsigned, a prefix first), eight bytes at a time. */
static int text_cmp(const struct line *a, const struct line *b)
{
	size_t n = a->len < b->len ? a->len : b->len, i;
	uint64_t x, y;

	for (i = 0; i + 8 <= n; i += 8) {
		x = load_be64(a->text + i);
		y = load_be64(b->text + i);
		if (x != y)
			return x < y ? -1 : 1;
	}
	for (; i < n; i++)
		if (a->text[i] != b->text[i])
			return (unsigned char)a->text[i] < (unsigned char)b->text[i] ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

struct text {
	size_t off; /* in fold_ctx.names */
	size_t len;
};

struct fold_ctx {
	const struct profile *p;
	struct sbuf names;	/* each distinct piece once */
	struct text *texts;	/* by piece id (1-based) */
	uint32_t ntexts, cap;	/* ids given, room */
	struct u64map *by_hash; /* text hash -> piece id; a collision takes the next key */
	uint32_t *frame_ids;	/* by frame index (1-based): its piece, 0 until made */
	uint32_t *seq;		/* the lines' piece ids, one line after another */
	size_t nseq, seq_cap;
	/*
	 * The last sample's comm and thread pieces: labels are interned, so
	 * equal pointers are equal text (a piece made per sample was a fifth
	 * of the encoder's time).
	 */
	const char *comm, *thread;
	uint32_t comm_id, thread_tid, thread_id;
	int err;
};

/* The id of the text made at names[off..]: an earlier piece's if equal (the copy dropped). */
static uint32_t intern(struct fold_ctx *c, size_t off)
{
	size_t len = c->names.len - off;
	const char *t = c->names.data + off;
	uint64_t key = text_hash(t, len), v;
	struct text *tmp;

	for (; u64map__get(c->by_hash, key, &v); key++) {
		if (c->texts[v].len == len && !memcmp(c->names.data + c->texts[v].off, t, len)) {
			c->names.len = off;
			return (uint32_t)v;
		}
	}
	if (c->ntexts + 1 >= c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		tmp = realloc(c->texts, c->cap * sizeof(*tmp));
		if (!tmp)
			goto nomem;
		c->texts = tmp;
	}
	if (u64map__set(c->by_hash, key, c->ntexts + 1))
		goto nomem;
	c->texts[++c->ntexts] = (struct text){off, len};
	return c->ntexts;
nomem:
	c->err = -ENOMEM;
	return 0;
}

static uint32_t name_piece(struct fold_ctx *c, const char *name, const char *suffix)
{
	size_t off = c->names.len;

	sbuf_name(&c->names, name);
	if (suffix)
		sbuf__str(&c->names, suffix);
	if (c->names.err) {
		c->err = c->names.err;
		return 0;
	}
	return intern(c, off);
}

static uint32_t frame_piece(struct fold_ctx *c, uint32_t idx)
{
	const struct profile_frame *f;

	if (idx > profile__frame_count(c->p))
		return name_piece(c, NULL, NULL);
	if (!c->frame_ids[idx]) {
		f = profile__frame(c->p, idx);
		c->frame_ids[idx] =
			name_piece(c, f ? f->name : NULL, f && f->kernel ? KERNEL_SUFFIX : NULL);
	}
	return c->frame_ids[idx];
}

static void seq_add(struct fold_ctx *c, uint32_t id)
{
	uint32_t *tmp;

	if (c->err)
		return;
	if (c->nseq == c->seq_cap) {
		c->seq_cap = c->seq_cap ? 2 * c->seq_cap : 4096;
		tmp = realloc(c->seq, c->seq_cap * sizeof(*tmp));
		if (!tmp) {
			c->err = -ENOMEM;
			return;
		}
		c->seq = tmp;
	}
	c->seq[c->nseq++] = id;
}

/* The functions inlined at frame idx, as pieces after its own: outermost first. */
static void inline_pieces(struct fold_ctx *c, uint32_t idx)
{
	const struct profile_frame *f =
		idx <= profile__frame_count(c->p) ? profile__frame(c->p, idx) : NULL;
	const struct profile_inline *v = f ? profile__inlines(c->p, f) : NULL;
	uint16_t j;

	for (j = v ? f->ninlines : 0; j-- > 0 && !c->err;)
		seq_add(c, name_piece(c, v[j].name, INLINED_SUFFIX));
}

/* The sample's line as pieces: comm[;thread/tid];root;...;leaf. */
static void fold_sample(struct fold_ctx *c, const struct profile_sample *s, struct line *l)
{
	const char *thread = s->labels.thread_name;
	char tid[16];
	uint32_t i;

	l->at = c->nseq;
	l->count = s->count;
	if (!c->comm_id || s->labels.comm != c->comm) {
		c->comm = s->labels.comm;
		c->comm_id = name_piece(c, s->labels.comm, NULL);
	}
	seq_add(c, c->comm_id);
	if (s->labels.tid) {
		thread = thread && *thread ? thread : s->labels.comm;
		if (!c->thread_id || thread != c->thread || s->labels.tid != c->thread_tid) {
			snprintf(tid, sizeof(tid), "/%u", s->labels.tid);
			c->thread = thread;
			c->thread_tid = s->labels.tid;
			c->thread_id = name_piece(c, thread, tid);
		}
		seq_add(c, c->thread_id);
	}
	/* Frames are stored leaf first; the folded format wants the root first. */
	for (i = s->nframes; i-- > 0 && !c->err;) {
		seq_add(c, frame_piece(c, s->frames[i]));
		inline_pieces(c, s->frames[i]);
	}
	l->n = (uint32_t)(c->nseq - l->at);
}

static uint64_t seq_hash(const uint32_t *ids, uint32_t n)
{
	uint64_t h = n;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = hash_u64(h ^ ids[i]);
	return h;
}

/* Equal lines end up side by side: their hashes are equal. seq: the lines' pieces. */
static int cmp_pieces(const void *a, const void *b, void *seq)
{
	const struct line *x = a, *y = b;
	const uint32_t *ids = seq;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(ids + x->at, ids + y->at, x->n * sizeof(*ids));
}

/* Pointers to lines[0..n), sorted by cmp (malloc'd), or NULL when out of memory. */
static struct line **sorted(const struct line *lines, size_t n, sort_cmp_fn cmp, void *ctx)
{
	struct line **order = malloc((n ? n : 1) * sizeof(*order));
	size_t i;

	for (i = 0; order && i < n; i++)
		order[i] = (struct line *)&lines[i];
	if (order && sort__pointers((void **)order, n, cmp, ctx)) {
		free(order);
		return NULL;
	}
	return order;
}

/*
 * Equal lines of lines[0..n) merged, the first of each run taking the
 * others' counts, into *merged (malloc'd); returns their number, or 0 with
 * *merged NULL when out of memory.
 */
static size_t merge_equal(uint32_t *seq, const struct line *lines, size_t n, struct line **merged)
{
	struct line **order = sorted(lines, n, cmp_pieces, seq);
	size_t i, out = 0;

	*merged = malloc((n ? n : 1) * sizeof(**merged));
	if (!order || !*merged) {
		free(*merged);
		*merged = NULL;
		free(order);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (out && !cmp_pieces(&(*merged)[out - 1], order[i], seq))
			(*merged)[out - 1].count += order[i]->count;
		else
			(*merged)[out++] = *order[i];
	}
	free(order);
	return out;
}

/* The lines' texts, NUL-terminated, into arena. */
static void write_lines(const struct fold_ctx *c, struct line *lines, size_t n, struct sbuf *arena)
{
	size_t i, total = 0;
	uint32_t j;
	char *d;

	/* Sized first: one allocation, not a copy at every doubling of a 100 KB arena. */
	for (i = 0; i < n; i++) {
		lines[i].len = lines[i].n ? lines[i].n - 1 : 0;
		for (j = 0; j < lines[i].n; j++)
			lines[i].len += c->texts[c->seq[lines[i].at + j]].len;
		total += lines[i].len + 1;
	}
	if (!n)
		return;
	sbuf__reserve(arena, total);
	if (arena->err)
		return;
	d = arena->data + arena->len;
	for (i = 0; i < n; i++) {
		lines[i].text = d;
		for (j = 0; j < lines[i].n; j++) {
			const struct text *t = &c->texts[c->seq[lines[i].at + j]];

			if (j)
				*d++ = ';';
			memcpy(d, c->names.data + t->off, t->len);
			d += t->len;
		}
		*d++ = '\0';
	}
	arena->len += total;
}

static int cmp_text(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return text_cmp(a, b);
}

/* The lines' text, in strcmp order of it, each with its count. */
static int write_sorted(const struct line *lines, size_t n, struct sbuf *text)
{
	struct line **order = sorted(lines, n, cmp_text, NULL);
	size_t i;

	if (!order)
		return -ENOMEM;
	sbuf__reserve(text, 1);
	for (i = 0; i < n; i++) {
		char num[32];

		snprintf(num, sizeof(num), " %" PRIu64 "\n", order[i]->count);
		sbuf__add(text, order[i]->text, order[i]->len);
		sbuf__str(text, num);
	}
	sbuf__add(text, "", 1);
	free(order);
	return text->err;
}

int folded__encode(const struct profile *p, char **out, size_t *out_len)
{
	size_t i, n = profile__sample_count(p);
	struct sbuf arena = {0}, text = {0};
	struct fold_ctx c = {.p = p};
	struct line *lines = NULL, *merged = NULL;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	lines = calloc(n ? n : 1, sizeof(*lines));
	c.frame_ids = calloc(profile__frame_count(p) + 1, sizeof(*c.frame_ids));
	c.by_hash = u64map__new();
	if (!lines || !c.frame_ids || !c.by_hash) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n && !c.err; i++)
		fold_sample(&c, profile__sample(p, i), &lines[i]);
	err = c.err;
	if (err)
		goto cleanup;
	/* Only now that seq has stopped moving. */
	for (i = 0; i < n; i++)
		lines[i].hash = seq_hash(c.seq + lines[i].at, lines[i].n);
	if (n) {
		n = merge_equal(c.seq, lines, n, &merged);
		if (!merged) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	write_lines(&c, merged, n, &arena);
	err = arena.err;
	if (!err)
		err = write_sorted(merged, n, &text);
	if (err)
		goto cleanup;
	*out = text.data;
	*out_len = text.len - 1;
	text.data = NULL;
cleanup:
	if (err)
		pr_err("encoding: %s", strerror(-err));
	free(text.data);
	free(arena.data);
	free(c.names.data);
	free(c.texts);
	free(c.frame_ids);
	free(c.seq);
	u64map__free(c.by_hash);
	free(lines);
	free(merged);
	return err;
}
