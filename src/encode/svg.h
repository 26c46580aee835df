/* SPDX-License-Identifier: MIT */
/*
 * A flame graph as one self-contained SVG file: the frames drawn as
 * flamegraph.pl draws them (a <g> per frame with <title>NAME (N samples,
 * P%)</title>, a <rect> and a <text>; the root at the bottom, children by
 * name), colored by kind, with its script and style inline (hover details,
 * click to zoom, regular-expression search, the view kept in the URL), so
 * that it opens offline from file:// with nothing else. The layout is
 * flame.c's; docs/design.md#the-svg-flame-graph tells the whole design.
 */
#ifndef CPROF_SVG_H
#define CPROF_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct flame;
struct profile;

/* What a frame narrower than this share of all samples (percent) becomes: part of a merged one. */
#define SVG_DEFAULT_MINWIDTH 0.1

/* The user's choices. */
struct svg_style {
	const char *title; /* NULL: the target (svg_meta), else "Flame Graph" */
	double minwidth;   /* percent of all samples */
	bool inverted;	   /* an icicle graph: the root at the top */
};

/* What the graph is of, for its title and subtitle; NULL and 0 are left out. */
struct svg_meta {
	const char *target; /* the command, "PID 1234", "the whole system", a file's name */
	const char *host;
	const char *kernel; /* the kernel's release (uname -r) */
	uint64_t time_ns;   /* the start, ns since the epoch */
	uint64_t duration_ns;
	uint64_t hz;
	bool lost_known; /* lost is said (0 too) */
	uint64_t lost;	 /* samples lost: counted, not in the graph */
};

/*
 * On success *out is a malloc'ed, NUL-terminated document of *len bytes
 * (the NUL not counted) that the caller frees; returns 0 or a negative errno.
 */
int svg__encode(const struct profile *p, const struct svg_style *style, const struct svg_meta *meta,
		char **out, size_t *len);
int svg__encode_flame(const struct flame *f, const struct svg_style *style,
		      const struct svg_meta *meta, char **out, size_t *len);

#endif
