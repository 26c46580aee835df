// SPDX-License-Identifier: MIT
/*
 * Folded-stack encoder; see folded.h. The stack of every sample is folded
 * into one text line in an arena; equal lines (samples that differ only in
 * what the format drops: the pid, or the address within a function) are
 * merged by adding their counts, and the merged lines are sorted.
 *
 * Lines are long and share long prefixes (a C++ program's root-first
 * frames run to hundreds of bytes), and musl compares strings a byte at a
 * time: sorting every sample's line by text took a quarter of cprof's CPU
 * on a C++ workload. So lines are first grouped by a hash of their text,
 * compared as numbers, and only the distinct lines are sorted by text,
 * compared eight bytes at a time.
 *
 * Names are kept as they are except where they would break the format:
 * ';' separates frames, so it becomes ':'; a line ends at a newline, so
 * control characters (newline, tab, ...) become '_'. Plain spaces stay:
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

#define UNKNOWN_NAME  "[unknown]"
#define KERNEL_SUFFIX "_[k]"

struct sbuf {
	char *data;
	size_t len;
	size_t cap;
	int err;
};

struct line {
	const char *text;
	size_t len;
	uint64_t hash;
	uint64_t count;
};

static void sbuf_reserve(struct sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *d;

	if (b->err || n <= b->cap - b->len)
		return;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return;
		}
		cap *= 2;
	}
	d = realloc(b->data, cap);
	if (!d) {
		b->err = -ENOMEM;
		return;
	}
	b->data = d;
	b->cap = cap;
}

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	sbuf_reserve(b, n);
	if (b->err || !n)
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static void sbuf_str(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

/* Appends a name, defused as the comment at the top of this file says. */
static void sbuf_name(struct sbuf *b, const char *name)
{
	size_t i, n;

	if (!name || !*name)
		name = UNKNOWN_NAME;
	n = strlen(name);
	sbuf_reserve(b, n);
	if (b->err)
		return;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '_';
		b->data[b->len++] = (char)c;
	}
}

/*
 * A frame's text in a line, its name defused and the kernel's suffix added:
 * made once per frame, where a C++ profile's lines repeat each frame's
 * hundred-byte name thousands of times.
 */
struct piece {
	size_t off; /* in fold_ctx.names */
	size_t len;
	bool made;
};

struct fold_ctx {
	const struct profile *p;
	struct sbuf names;
	struct piece *pieces; /* by frame index (1-based) */
};

static const struct piece *frame_piece(struct fold_ctx *c, uint32_t idx)
{
	const struct profile_frame *f = profile__frame(c->p, idx);
	struct piece *pc = &c->pieces[idx];

	if (pc->made)
		return pc;
	pc->off = c->names.len;
	sbuf_name(&c->names, f ? f->name : NULL);
	if (f && f->kernel)
		sbuf_str(&c->names, KERNEL_SUFFIX);
	pc->len = c->names.len - pc->off;
	pc->made = !c->names.err;
	return pc;
}

static void fold_sample(struct sbuf *b, struct fold_ctx *c, const struct profile_sample *s)
{
	const struct piece *pc;
	char tid[16];
	uint32_t i;

	sbuf_name(b, s->labels.comm);
	if (s->labels.tid) {
		sbuf_str(b, ";");
		sbuf_name(b, s->labels.thread_name && *s->labels.thread_name ? s->labels.thread_name
									     : s->labels.comm);
		snprintf(tid, sizeof(tid), "/%u", s->labels.tid);
		sbuf_str(b, tid);
	}
	/* Frames are stored leaf first; the folded format wants the root first. */
	for (i = s->nframes; i-- > 0;) {
		sbuf_str(b, ";");
		if (s->frames[i] > profile__frame_count(c->p)) {
			sbuf_name(b, NULL);
			continue;
		}
		pc = frame_piece(c, s->frames[i]);
		sbuf_add(b, c->names.data + pc->off, pc->len);
	}
	sbuf_add(b, "", 1);
}

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

/* Equal texts end up side by side: their hashes are equal. */
static int cmp_hash(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return text_cmp(x, y);
}

static int cmp_text(const void *a, const void *b)
{
	return text_cmp(a, b);
}

/* Merges runs of equal lines into their first; returns the number left. */
static size_t merge_equal(struct line *lines, size_t n)
{
	size_t i, out = 0;

	qsort(lines, n, sizeof(*lines), cmp_hash);
	for (i = 0; i < n; i++) {
		if (out && lines[out - 1].hash == lines[i].hash &&
		    text_cmp(&lines[out - 1], &lines[i]) == 0)
			lines[out - 1].count += lines[i].count;
		else
			lines[out++] = lines[i];
	}
	return out;
}

int folded__encode(const struct profile *p, char **out, size_t *out_len)
{
	size_t i, n = profile__sample_count(p), *offsets = NULL;
	struct sbuf arena = {0}, text = {0};
	struct fold_ctx c = {.p = p};
	struct line *lines = NULL;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	offsets = calloc(n ? n : 1, sizeof(*offsets));
	lines = calloc(n ? n : 1, sizeof(*lines));
	c.pieces = calloc(profile__frame_count(p) + 1, sizeof(*c.pieces));
	if (!offsets || !lines || !c.pieces) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n && !arena.err && !c.names.err; i++) {
		offsets[i] = arena.len;
		fold_sample(&arena, &c, profile__sample(p, i));
	}
	err = arena.err ? arena.err : c.names.err;
	if (err)
		goto cleanup;
	/* Only now that the arena has stopped moving can lines point into it. */
	for (i = 0; i < n; i++) {
		size_t len = (i + 1 < n ? offsets[i + 1] : arena.len) - offsets[i] - 1;
		const char *t = arena.data + offsets[i];

		lines[i] = (struct line){t, len, text_hash(t, len), profile__sample(p, i)->count};
	}
	n = merge_equal(lines, n);
	qsort(lines, n, sizeof(*lines), cmp_text);

	sbuf_reserve(&text, 1);
	for (i = 0; i < n; i++) {
		char num[32];

		snprintf(num, sizeof(num), " %" PRIu64 "\n", lines[i].count);
		sbuf_add(&text, lines[i].text, lines[i].len);
		sbuf_str(&text, num);
	}
	sbuf_add(&text, "", 1);
	err = text.err;
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
	free(c.pieces);
	free(lines);
	free(offsets);
	return err;
}
