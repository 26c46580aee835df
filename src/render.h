/* SPDX-License-Identifier: MIT */
/*
 * Drawing a profile already written, instead of profiling: a pprof profile
 * (cprof's, Go's, Parca's, ...) or folded stacks (cprof's, or any
 * stackcollapse script's) read from a file or stdin and written as an SVG
 * flame graph (cprof -i FILE -o NAME.svg). No BPF, no privileges: it runs
 * wherever the file was copied to.
 */
#ifndef CPROF_RENDER_H
#define CPROF_RENDER_H

#include "encode/svg.h"

struct render_opts {
	const char *input;	 /* "-": stdin */
	const char *output;	 /* "-": stdout */
	const char *sample_type; /* a pprof profile's values to draw; NULL: the default */
	const struct svg_style *svg;
};

/* Returns the exit code: 0, or 1 with the reason printed. */
int render__run(const struct render_opts *o);

#endif
