// SPDX-License-Identifier: MIT
/*
 * The folded-stack reader; see folded_input.h. As flamegraph.pl reads a
 * line: the count is the last field (after the last space or tab), the
 * stack all before it, frames split at ';'. Unlike flamegraph.pl it takes
 * only whole numbers (no profiler writes fractions of a sample), skips
 * empty frames (";;"), and refuses a count that would overflow the total.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "encode/flame.h"
#include "encode/folded_input.h"

/* A count: decimal digits only, at most 2^62 (room to add many without overflow). */
static bool parse_count(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > (1ull << 62))
			return false;
	}
	*out = v;
	return true;
}

struct reader {
	struct flame *f;
	char *name; /* one frame's name, NUL-terminated */
	size_t name_cap;
	uint32_t *pieces; /* the line's frames */
};

/* The frame s[0..n) as a piece; 0 when out of memory. */
static uint32_t frame_piece(struct reader *r, const char *s, size_t n)
{
	enum flame_kind kind;
	size_t len;
	char *tmp;

	if (n + 1 > r->name_cap) {
		tmp = realloc(r->name, n + 1);
		if (!tmp)
			return 0;
		r->name = tmp;
		r->name_cap = n + 1;
	}
	memcpy(r->name, s, n);
	r->name[n] = '\0';
	kind = flame__kind_of_name(r->name, &len);
	r->name[len] = '\0';
	return flame__piece(r->f, r->name, kind);
}

static bool blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

/* One line without its newline: 1 taken, 0 skipped, or -ENOMEM. */
static int parse_line(struct reader *r, const char *line, size_t n)
{
	const char *end = line + n, *sep, *p, *q;
	uint64_t count;
	uint32_t depth = 0;

	if (memchr(line, '\0', n))
		return 0;
	for (sep = end; sep > line && sep[-1] != ' ' && sep[-1] != '\t'; sep--)
		;
	if (sep == line || !parse_count(sep, (size_t)(end - sep), &count))
		return 0;
	end = sep - 1;
	if (count > UINT64_MAX / 2 - flame__total(r->f))
		return 0;
	for (p = line; p < end; p = q + 1) {
		q = memchr(p, ';', (size_t)(end - p));
		if (!q)
			q = end;
		if (q == p)
			continue;
		if (depth == FOLDED_INPUT_MAX_DEPTH)
			return 0;
		r->pieces[depth] = frame_piece(r, p, (size_t)(q - p));
		if (!r->pieces[depth])
			return -ENOMEM;
		depth++;
	}
	return flame__add(r->f, r->pieces, depth, count) ? -ENOMEM : 1;
}

int folded_input__parse(const char *text, size_t len, struct flame *f,
			struct folded_input_stats *st)
{
	struct reader r = {.f = f};
	const char *p = text, *end = text + len, *nl;
	uint64_t lineno = 0;
	size_t n;
	int err = 0, taken;

	*st = (struct folded_input_stats){0};
	r.pieces = malloc(FOLDED_INPUT_MAX_DEPTH * sizeof(*r.pieces));
	if (!r.pieces)
		return -ENOMEM;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		n = (size_t)(nl - p);
		lineno++;
		if (n && p[n - 1] == '\r')
			n--;
		if (blank(p, n))
			continue;
		taken = parse_line(&r, p, n);
		if (taken < 0) {
			err = taken;
			break;
		}
		if (taken) {
			st->stacks++;
		} else {
			st->bad_lines++;
			if (!st->first_bad)
				st->first_bad = lineno;
		}
	}
	free(r.pieces);
	free(r.name);
	return err;
}
