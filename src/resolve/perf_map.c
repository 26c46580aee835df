// SPDX-License-Identifier: MIT
/*
 * Perf map parser. The file is written by the profiled process, so it is
 * as untrusted as its memory map: a line that is not "START SIZE NAME" is
 * counted and skipped, sizes that run past the address space are refused,
 * and the file is read no further than its real size.
 *
 * Runtimes append a line whenever they place code, and reuse the memory of
 * code they freed, so two lines may cover the same address: the later line
 * describes what is there now. The lines are therefore turned once into
 * sorted, non-overlapping ranges, each owned by the latest line covering
 * it, by a sweep over all range boundaries with a heap of the open lines
 * ordered by line number. A lookup is then one binary search.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "perfmap"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/range.h"
#include "lib/textscan.h"
#include "resolve/perf_map.h"

struct pm_line {
	uint64_t start;
	uint64_t end; /* exclusive */
	size_t name_off;
	size_t line; /* order in the file: later lines win */
};

struct pm_range {
	uint64_t start; /* start and end first: range_find */
	uint64_t end;
	const char *name;
};

struct perf_map {
	struct pm_range *ranges;
	size_t nranges;
	size_t count;
	size_t bad_lines;
	char *names;
};

/* "START SIZE NAME", START and SIZE hex with an optional 0x. */
static bool parse_line(const char *s, const char *end, struct pm_line *l, const char **name,
		       size_t *name_len)
{
	uint64_t size;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!textscan__hex(&s, end, &l->start) || s >= end || *s != ' ')
		return false;
	while (s < end && *s == ' ')
		s++;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!textscan__hex(&s, end, &size) || s >= end || *s != ' ')
		return false;
	s++;
	/* A name ends at the line's end; it may contain spaces ("LazyCompile:*f a.js:1"). */
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (!size || l->start > UINT64_MAX - size || end == s)
		return false;
	l->end = l->start + size;
	*name = s;
	*name_len = end - s;
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct pm_line *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* A max-heap of line indices, keyed by line number. */
static void heap_push(size_t *heap, size_t *n, const struct pm_line *lines, size_t v)
{
	size_t i = (*n)++;

	while (i && lines[heap[(i - 1) / 2]].line < lines[v].line) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = v;
}

static void heap_pop(size_t *heap, size_t *n, const struct pm_line *lines)
{
	size_t i = 0, v = heap[--(*n)];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && lines[heap[c + 1]].line > lines[heap[c]].line)
			c++;
		if (lines[heap[c]].line <= lines[v].line)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*n)
		heap[i] = v;
}

/* The sweep described at the top of this file. */
static int build_ranges(struct perf_map *m, struct pm_line *lines, size_t n)
{
	size_t *heap = NULL, nheap = 0, nb = 0, i, k, next = 0;
	uint64_t *bounds = NULL;
	int err = 0;

	if (!n)
		return 0;
	qsort(lines, n, sizeof(*lines), cmp_start);
	bounds = malloc(2 * n * sizeof(*bounds));
	heap = malloc(n * sizeof(*heap));
	/* Each boundary starts at most one range. */
	m->ranges = malloc(2 * n * sizeof(*m->ranges));
	if (!bounds || !heap || !m->ranges) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		bounds[nb++] = lines[i].start;
		bounds[nb++] = lines[i].end;
	}
	qsort(bounds, nb, sizeof(*bounds), range_cmp_u64);
	for (i = 0, k = 0; i < nb; i++)
		if (!k || bounds[i] != bounds[k - 1])
			bounds[k++] = bounds[i];
	nb = k;
	for (k = 0; k + 1 < nb; k++) {
		uint64_t at = bounds[k];
		const struct pm_line *top;
		struct pm_range *prev;

		while (next < n && lines[next].start <= at)
			heap_push(heap, &nheap, lines, next++);
		/* Lines that ended are dropped only once they reach the top: the top is then live.
		 */
		while (nheap && lines[heap[0]].end <= at)
			heap_pop(heap, &nheap, lines);
		if (!nheap)
			continue;
		top = &lines[heap[0]];
		prev = m->nranges ? &m->ranges[m->nranges - 1] : NULL;
		if (prev && prev->end == at &&
		    prev->name == (const char *)(uintptr_t)top->name_off) {
			prev->end = bounds[k + 1];
			continue;
		}
		/* Names are offsets until the arena stops moving. */
		m->ranges[m->nranges++] = (struct pm_range){
			.start = at,
			.end = bounds[k + 1],
			.name = (const char *)(uintptr_t)top->name_off,
		};
	}
cleanup:
	free(bounds);
	free(heap);
	return err;
}

int perf_map__parse(const char *text, size_t len, struct perf_map **out)
{
	struct pm_line *lines = NULL;
	struct perf_map *m;
	const char *p, *end;
	size_t n = 0, cap = 0, names_len = 0, i;
	int err = 0;

	*out = NULL;
	if (!text && len)
		return -EINVAL;
	p = text ? text : "";
	end = p + len;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* Names are substrings of lines: never more than len bytes with their NULs. */
	m->names = malloc(len + 1);
	if (!m->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end, *name;
		size_t name_len;
		struct pm_line l;

		if (eol > p && parse_line(p, eol, &l, &name, &name_len)) {
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct pm_line *nl2 = realloc(lines, ncap * sizeof(*lines));

				if (!nl2) {
					err = -ENOMEM;
					goto cleanup;
				}
				lines = nl2;
				cap = ncap;
			}
			l.name_off = names_len;
			l.line = n;
			memcpy(m->names + names_len, name, name_len);
			m->names[names_len + name_len] = '\0';
			names_len += name_len + 1;
			lines[n++] = l;
		} else if (eol > p) {
			m->bad_lines++;
		}
		p = nl ? nl + 1 : end;
	}
	m->count = n;
	err = build_ranges(m, lines, n);
	if (err)
		goto cleanup;
	for (i = 0; i < m->nranges; i++)
		m->ranges[i].name = m->names + (uintptr_t)m->ranges[i].name;
	*out = m;
	m = NULL;
cleanup:
	free(lines);
	perf_map__free(m);
	return err;
}

int perf_map__read(uint32_t pid, uint32_t ns_pid, struct perf_map **out)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int fd, err;

	*out = NULL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", ns_pid ? ns_pid : pid);
	fd = procfs__open_in_root(pid, path);
	if (fd < 0) {
		pr_debug("PID %u: %s: %s", pid, path, strerror(-fd));
		return fd;
	}
	err = file__read_fd(fd, &buf, &len);
	close(fd);
	if (err) {
		pr_debug("PID %u: %s: %s", pid, path, strerror(-err));
		return err;
	}
	err = perf_map__parse(buf, len, out);
	free(buf);
	if (!err)
		pr_debug("PID %u: %s: %zu entries, %zu malformed lines", pid, path, (*out)->count,
			 (*out)->bad_lines);
	return err;
}

void perf_map__free(struct perf_map *m)
{
	if (!m)
		return;
	free(m->ranges);
	free(m->names);
	free(m);
}

const char *perf_map__lookup(const struct perf_map *m, uint64_t addr)
{
	ptrdiff_t i;

	if (!m)
		return NULL;
	i = range_find(m->ranges, m->nranges, sizeof(*m->ranges), addr);
	return i < 0 ? NULL : m->ranges[i].name;
}

size_t perf_map__count(const struct perf_map *m)
{
	return m ? m->count : 0;
}

size_t perf_map__bad_lines(const struct perf_map *m)
{
	return m ? m->bad_lines : 0;
}
