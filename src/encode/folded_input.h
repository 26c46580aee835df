/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks read back, to draw a profile cprof or another tool wrote
 * (cprof --format folded, perf script | stackcollapse-perf.pl, ...): one
 * stack per line, "root;...;leaf COUNT". The text is outside input, so
 * every line is bounds-checked; a line that is not a stack is skipped and
 * counted, never guessed at. Fuzzed: tests/fuzz/fuzz_folded.c.
 */
#ifndef CPROF_FOLDED_INPUT_H
#define CPROF_FOLDED_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct flame;

/* Frames of one line beyond this are not a stack any profiler takes: the line is skipped. */
#define FOLDED_INPUT_MAX_DEPTH 4096

struct folded_input_stats {
	uint64_t stacks;    /* lines taken */
	uint64_t bad_lines; /* lines skipped: no count, a count out of range, NUL bytes, too deep */
	uint64_t first_bad; /* the first skipped line's number (from 1), 0: none */
};

/*
 * Adds the stacks of text[0..len) to f, each frame of the kind its name
 * says (flame__kind_of_name). Blank lines are ignored. 0, or -ENOMEM.
 */
int folded_input__parse(const char *text, size_t len, struct flame *f,
			struct folded_input_stats *st);

#endif
