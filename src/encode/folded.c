// SPDX-License-Identifier: MIT
/*
 * Folded-stack encoder; see folded.h. The stack of every sample is folded
 * into one text line in an arena, the lines are sorted, and equal lines
 * (samples that differ only in labels the format drops, such as the pid)
 * are merged by adding their counts.
 *
 * Names are kept as they are except where they would break the format:
 * ';' separates frames, so it becomes ':'; a line ends at a newline, so
 * control characters (newline, tab, ...) become '_'. Plain spaces stay:
 * C++ signatures contain them and flamegraph.pl takes only the last
 * space-separated field as the count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "folded"
#include "build/profile.h"
#include "encode/folded.h"
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

static void fold_sample(struct sbuf *b, const struct profile *p, const struct profile_sample *s)
{
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
		const struct profile_frame *f = profile__frame(p, s->frames[i]);

		sbuf_str(b, ";");
		sbuf_name(b, f ? f->name : NULL);
		if (f && f->kernel)
			sbuf_str(b, KERNEL_SUFFIX);
	}
	sbuf_add(b, "", 1);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int folded__encode(const struct profile *p, char **out, size_t *out_len)
{
	size_t i, j, n = profile__sample_count(p), *offsets = NULL;
	struct sbuf arena = {0}, text = {0};
	struct line *lines = NULL;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	offsets = calloc(n ? n : 1, sizeof(*offsets));
	lines = calloc(n ? n : 1, sizeof(*lines));
	if (!offsets || !lines) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n && !arena.err; i++) {
		offsets[i] = arena.len;
		fold_sample(&arena, p, profile__sample(p, i));
	}
	err = arena.err;
	if (err)
		goto cleanup;
	/* Only now that the arena has stopped moving can lines point into it. */
	for (i = 0; i < n; i++)
		lines[i] = (struct line){arena.data + offsets[i], profile__sample(p, i)->count};
	qsort(lines, n, sizeof(*lines), cmp_line);

	sbuf_reserve(&text, 1);
	for (i = 0; i < n; i = j) {
		uint64_t count = lines[i].count;
		char num[32];

		for (j = i + 1; j < n && strcmp(lines[i].text, lines[j].text) == 0; j++)
			count += lines[j].count;
		snprintf(num, sizeof(num), " %" PRIu64 "\n", count);
		sbuf_str(&text, lines[i].text);
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
	free(lines);
	free(offsets);
	return err;
}
