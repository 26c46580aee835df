/* SPDX-License-Identifier: MIT */
/*
 * The call tree of a flame graph and its layout, apart from any drawing:
 * stacks go in root first (from a profile, or from folded text), equal
 * frames under one parent merge, and flame__layout says where each frame is
 * drawn. svg.c draws the boxes; the layout is pure arithmetic on sample
 * counts, so it is tested without a browser or a picture.
 *
 * A frame is a piece: its name and its kind (the color family it is drawn
 * in). Two frames of one name but different kinds (a user and a kernel
 * function both called "main") stay apart.
 */
#ifndef CPROF_FLAME_H
#define CPROF_FLAME_H

#include <stddef.h>
#include <stdint.h>

struct flame;
struct profile;

enum flame_kind {
	FLAME_USER,	 /* user code named by a symbol */
	FLAME_KERNEL,	 /* kernel code */
	FLAME_JIT,	 /* code named by a perf map (JIT), outside any ELF file */
	FLAME_UNNAMED,	 /* no symbol: module+0xOFFSET, [unknown] */
	FLAME_TRUNCATED, /* the root end of a walk that stopped: "[truncated: ...]" */
	FLAME_LOST,	 /* a placeholder for a lost stack: "[user stack lost: ...]" */
	FLAME_PROCESS,	 /* a process (comm) or thread level, not code */
	FLAME_MERGED,	 /* frames narrower than the minimum width, drawn as one */
	FLAME_ROOT,	 /* "all" */
	FLAME_KINDS,
};

int flame__new(struct flame **out);
void flame__free(struct flame *f);

/* The piece for a name (copied) and kind; 0 when out of memory. */
uint32_t flame__piece(struct flame *f, const char *name, enum flame_kind kind);
/* Adds count samples of a stack of pieces, root first (none: the root's own). */
int flame__add(struct flame *f, const uint32_t *pieces, uint32_t n, uint64_t count);
/*
 * Every sample of p as folded.c folds it: the process (comm), with
 * per-thread profiles the thread ("name/tid"), then the frames root first,
 * each of the kind its frame and mapping say.
 */
int flame__add_profile(struct flame *f, const struct profile *p);
uint64_t flame__total(const struct flame *f);

/*
 * The kind a name has in a file read back (-i), where only the name is
 * left (flame_names.c; a profile's own frames carry theirs): the
 * suffixes "_[k]" (kernel) and "_[j]" (JIT) that folded.c and perf's
 * stackcollapse write, cut off (*len is the name's length without them);
 * cprof's placeholders ("[truncated: ...]", "[... lost: ...]", "[no
 * stack]"), and names without a symbol (MODULE+0xHEX, "[unknown]").
 */
enum flame_kind flame__kind_of_name(const char *name, size_t *len);

/* One frame to draw. */
struct flame_box {
	const char *name; /* NULL for FLAME_MERGED */
	enum flame_kind kind;
	uint32_t depth;	 /* 0: the root */
	uint64_t start;	 /* samples left of it (from the root's left edge) */
	uint64_t count;	 /* samples: its width */
	uint32_t merged; /* FLAME_MERGED: how many frames it stands for */
};

/*
 * The frames to draw, each parent before its children, and the children of
 * one parent left to right by name. A child narrower than min_share of all
 * samples (a fraction, 0.001 for 0.1%) is not drawn: a parent's narrow
 * children become one FLAME_MERGED box after its other children, drawn only
 * if that box is not narrow itself. A child starts where its left sibling
 * ends, the first where its parent starts, so no child extends past its
 * parent. *out is malloc'ed (the caller frees it); its names live as long as f.
 */
int flame__layout(const struct flame *f, double min_share, struct flame_box **out, size_t *n);

#endif
