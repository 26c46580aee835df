// SPDX-License-Identifier: MIT
/*
 * The flame graph's call tree; see flame.h. Nodes live in one array, each
 * with its first child and next sibling; a hash map from (parent, piece)
 * finds a child in one lookup, so a profile of 100,000 stacks of 30 frames
 * costs 3 million lookups, not a scan of siblings at each step. A piece is
 * a name's id in a string pool and the kind: (id + 1) << 4 | kind, never 0.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "encode/flame.h"
#include "lib/array.h"
#include "lib/strpool.h"
#include "lib/u64map.h"

#define KIND_BITS 4
#define MAX_NAMES ((1u << (32 - KIND_BITS)) - 2)
#define ROOT_NAME "all"

_Static_assert(FLAME_KINDS <= (1 << KIND_BITS), "a kind fits in a piece's low bits");

struct node {
	uint64_t count;
	uint32_t piece;
	uint32_t first_child; /* node index; 0: none (the root is no one's child) */
	uint32_t next_sibling;
};

struct flame {
	struct strpool *names;
	struct node *nodes; /* [0] is the root */
	uint32_t n, cap;
	struct u64map *children; /* parent << 32 | piece -> child */
};

int flame__new(struct flame **out)
{
	struct flame *f = calloc(1, sizeof(*f));
	uint32_t root;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->names = strpool__new();
	f->children = u64map__new();
	f->cap = 1024;
	f->nodes = calloc(f->cap, sizeof(*f->nodes));
	if (!f->names || !f->children || !f->nodes)
		goto nomem;
	root = flame__piece(f, ROOT_NAME, FLAME_ROOT);
	if (!root)
		goto nomem;
	f->nodes[0] = (struct node){.piece = root};
	f->n = 1;
	*out = f;
	return 0;
nomem:
	flame__free(f);
	return -ENOMEM;
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	strpool__free(f->names);
	u64map__free(f->children);
	free(f->nodes);
	free(f);
}

uint32_t flame__piece(struct flame *f, const char *name, enum flame_kind kind)
{
	long id = strpool__add(f->names, name);

	if (id < 0 || (unsigned long)id > MAX_NAMES || (unsigned)kind >= FLAME_KINDS)
		return 0;
	return (uint32_t)(id + 1) << KIND_BITS | kind;
}

static const char *piece_name(const struct flame *f, uint32_t piece)
{
	return strpool__str(f->names, (piece >> KIND_BITS) - 1);
}

static enum flame_kind piece_kind(uint32_t piece)
{
	return (enum flame_kind)(piece & ((1u << KIND_BITS) - 1));
}

static uint32_t child(struct flame *f, uint32_t parent, uint32_t piece)
{
	uint64_t key = (uint64_t)parent << 32 | piece, v;
	struct node *tmp;

	if (u64map__get(f->children, key, &v))
		return (uint32_t)v;
	if (f->n == UINT32_MAX)
		return 0;
	if (f->n == f->cap) {
		uint32_t cap = f->cap > UINT32_MAX / 2 ? UINT32_MAX : 2 * f->cap;

		tmp = realloc(f->nodes, (size_t)cap * sizeof(*tmp));
		if (!tmp)
			return 0;
		f->nodes = tmp;
		f->cap = cap;
	}
	if (u64map__set(f->children, key, f->n))
		return 0;
	f->nodes[f->n] =
		(struct node){.piece = piece, .next_sibling = f->nodes[parent].first_child};
	f->nodes[parent].first_child = f->n;
	return f->n++;
}

int flame__add(struct flame *f, const uint32_t *pieces, uint32_t n, uint64_t count)
{
	uint32_t node = 0, i;

	if (!count)
		return 0;
	for (i = 0; i < n; i++)
		if (!pieces[i])
			return -EINVAL;
	f->nodes[0].count += count;
	for (i = 0; i < n; i++) {
		node = child(f, node, pieces[i]);
		if (!node)
			return -ENOMEM;
		f->nodes[node].count += count;
	}
	return 0;
}

uint64_t flame__total(const struct flame *f)
{
	return f->nodes[0].count;
}

/* The color family of a profile's frame: its kind, whatever its name says. */
static enum flame_kind frame_kind(const struct profile_frame *fr)
{
	switch (fr->kind) {
	case FRAME_CODE:
		return fr->kernel ? FLAME_KERNEL : FLAME_USER;
	case FRAME_JIT:
		return FLAME_JIT;
	case FRAME_TRUNCATED:
		return FLAME_TRUNCATED;
	case FRAME_LOST:
		return FLAME_LOST;
	default: /* FRAME_UNNAMED, FRAME_WAITING: a stand-in named by module and offset */
		return FLAME_UNNAMED;
	}
}

/* Room for a sample's pieces: its frames, the functions inlined at them, process and thread. */
static uint32_t sample_room(const struct profile *p, const struct profile_sample *s)
{
	uint32_t i, n = s->nframes + 2;

	for (i = 0; i < s->nframes; i++)
		if (s->frames[i] <= profile__frame_count(p))
			n += profile__frame(p, s->frames[i])->ninlines;
	return n;
}

/* The functions inlined at fr, as pieces after its own (outermost first) at out[*k]. */
static void inline_pieces(struct flame *f, const struct profile *p, const struct profile_frame *fr,
			  enum flame_kind kind, uint32_t *out, uint32_t *k)
{
	const struct profile_inline *v = profile__inlines(p, fr);
	char *name;
	uint16_t j;

	for (j = v ? fr->ninlines : 0; j-- > 0;) {
		name = malloc(strlen(v[j].name) + sizeof(" (inlined)"));
		if (name)
			strcpy(stpcpy(name, v[j].name), " (inlined)");
		out[(*k)++] = name ? flame__piece(f, name, kind) : 0;
		free(name);
	}
}

/* A sample's pieces, root first, into out (room for sample_room). */
static int sample_pieces(struct flame *f, const struct profile *p, const struct profile_sample *s,
			 uint32_t *frame_pieces, uint32_t *out, uint32_t *n)
{
	const struct profile_labels *l = &s->labels;
	const char *comm = l->comm && *l->comm ? l->comm : "[unknown]";
	const struct profile_frame *fr;
	char thread[64];
	uint32_t i, k = 0, idx;

	out[k++] = flame__piece(f, comm, FLAME_PROCESS);
	if (l->tid) {
		snprintf(thread, sizeof(thread), "%s/%u",
			 l->thread_name && *l->thread_name ? l->thread_name : comm, l->tid);
		out[k++] = flame__piece(f, thread, FLAME_PROCESS);
	}
	for (i = s->nframes; i-- > 0;) {
		idx = s->frames[i];
		if (idx > profile__frame_count(p)) {
			out[k++] = flame__piece(f, "[unknown]", FLAME_UNNAMED);
			continue;
		}
		fr = profile__frame(p, idx);
		if (!frame_pieces[idx])
			frame_pieces[idx] = flame__piece(f, fr->name, frame_kind(fr));
		out[k++] = frame_pieces[idx];
		inline_pieces(f, p, fr, frame_kind(fr), out, &k);
	}
	*n = k;
	for (i = 0; i < k; i++)
		if (!out[i])
			return -ENOMEM;
	return 0;
}

int flame__add_profile(struct flame *f, const struct profile *p)
{
	size_t i, nsamples = profile__sample_count(p);
	uint32_t *frame_pieces = calloc(profile__frame_count(p) + 1, sizeof(*frame_pieces));
	uint32_t *pieces = NULL, room = 0, n;
	int err = frame_pieces ? 0 : -ENOMEM;

	for (i = 0; i < nsamples && !err; i++) {
		const struct profile_sample *s = profile__sample(p, i);
		uint32_t need = sample_room(p, s);

		if (need > room) {
			uint32_t *tmp = realloc(pieces, need * sizeof(*tmp));

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			pieces = tmp;
			room = need;
		}
		err = sample_pieces(f, p, s, frame_pieces, pieces, &n);
		if (!err)
			err = flame__add(f, pieces, n, s->count);
	}
	free(pieces);
	free(frame_pieces);
	return err;
}

/* Children by name (bytes as unsigned), then kind. ctx: the flame. */
static int cmp_children(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	uint32_t x = f->nodes[*(const uint32_t *)a].piece, y = f->nodes[*(const uint32_t *)b].piece;
	int c = strcmp(piece_name(f, x), piece_name(f, y));

	if (c)
		return c;
	return piece_kind(x) < piece_kind(y) ? -1 : piece_kind(x) > piece_kind(y);
}

/* What is still to be laid out: a node, or (node 0, merged > 0) a merged box. */
struct pending {
	uint32_t node;
	uint32_t depth;
	uint64_t start;
	uint64_t count;	 /* merged boxes only */
	uint32_t merged; /* merged boxes only */
};

struct layout {
	const struct flame *f;
	double min_count;
	struct flame_box *boxes;
	size_t n, cap;
	struct pending *todo;
	size_t ntodo, todo_cap;
	uint32_t *kids;
	size_t kids_cap;
};

static int push(struct layout *l, struct pending p)
{
	if (array__grow((void **)&l->todo, &l->todo_cap, l->ntodo + 1, sizeof(*l->todo)))
		return -ENOMEM;
	l->todo[l->ntodo++] = p;
	return 0;
}

/* The box of p; its children are pushed, the leftmost last so that it comes next. */
static int lay_out(struct layout *l, const struct pending *p)
{
	const struct flame *f = l->f;
	const struct node *nd = &f->nodes[p->node];
	uint64_t start = p->start, narrow = 0;
	uint32_t nkids = 0, nnarrow = 0, c, i;
	size_t first, lo, hi;

	if (array__grow((void **)&l->boxes, &l->cap, l->n + 1, sizeof(*l->boxes)))
		return -ENOMEM;
	if (p->merged) {
		l->boxes[l->n++] = (struct flame_box){.kind = FLAME_MERGED,
						      .depth = p->depth,
						      .start = p->start,
						      .count = p->count,
						      .merged = p->merged};
		return 0;
	}
	l->boxes[l->n++] = (struct flame_box){.name = piece_name(f, nd->piece),
					      .kind = piece_kind(nd->piece),
					      .depth = p->depth,
					      .start = p->start,
					      .count = nd->count};
	for (c = nd->first_child; c; c = f->nodes[c].next_sibling) {
		if (array__grow((void **)&l->kids, &l->kids_cap, nkids + 1, sizeof(*l->kids)))
			return -ENOMEM;
		l->kids[nkids++] = c;
	}
	if (nkids > 1)
		qsort_r(l->kids, nkids, sizeof(*l->kids), cmp_children, (void *)f);
	/* Their boxes in order, then reversed on the stack. */
	first = l->ntodo;
	for (i = 0; i < nkids; i++) {
		const struct node *k = &f->nodes[l->kids[i]];

		if ((double)k->count < l->min_count) {
			narrow += k->count;
			nnarrow++;
			continue;
		}
		if (push(l, (struct pending){
				    .node = l->kids[i], .depth = p->depth + 1, .start = start}))
			return -ENOMEM;
		start += k->count;
	}
	if (nnarrow && (double)narrow >= l->min_count &&
	    push(l, (struct pending){.depth = p->depth + 1,
				     .start = start,
				     .count = narrow,
				     .merged = nnarrow}))
		return -ENOMEM;
	for (lo = first, hi = l->ntodo; hi > lo + 1; lo++) {
		struct pending t = l->todo[lo];

		l->todo[lo] = l->todo[--hi];
		l->todo[hi] = t;
	}
	return 0;
}

int flame__layout(const struct flame *f, double min_share, struct flame_box **out, size_t *n)
{
	struct layout l = {.f = f, .min_count = min_share * (double)flame__total(f)};
	int err;

	*out = NULL;
	*n = 0;
	err = push(&l, (struct pending){.node = 0});
	while (!err && l.ntodo) {
		struct pending p = l.todo[--l.ntodo];

		err = lay_out(&l, &p);
	}
	free(l.todo);
	free(l.kids);
	if (err) {
		free(l.boxes);
		return err;
	}
	*out = l.boxes;
	*n = l.n;
	return 0;
}
