// SPDX-License-Identifier: MIT
/*
 * Perf map parser. The file is written by the profiled process, so it is
 * as untrusted as its memory map: it is opened by lib/proc_file.h's rule
 * (no link, a regular file of the process's own user), a line that is not
 * "START SIZE NAME" is counted and skipped, sizes that run past the address
 * space are refused, and no more than the caps below is read of it.
 *
 * Runtimes append a line whenever they place code, and reuse the memory of
 * code they freed, so two lines may cover the same address: the later line
 * describes what is there now. The lines are therefore turned once into
 * sorted, non-overlapping ranges, each owned by the latest line covering
 * it, by a sweep over all range boundaries with a heap of the open lines
 * ordered by line number. A lookup is then one binary search.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "perfmap"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc_file.h"
#include "lib/procfs.h"
#include "lib/range.h"
#include "lib/stat_cached.h"
#include "lib/textscan.h"
#include "resolve/perf_map.h"

/*
 * Caps on one map, checked from its size before it is read. A Node service
 * with --perf-basic-prof writes some 80 bytes a function, so 16 MiB is some
 * 200,000 functions, more than a profile shows. Reading, sorting and
 * holding that is the most one hostile file may cost: some 50 ms of CPU on
 * the sampling loop and 60 MB at peak (and on a loaded host every ms of
 * CPU is stretched, while -d must hold). Beyond the caps the head of the
 * file is used and the map is counted as capped.
 */
#define MAX_BYTES (16u << 20)
#define MAX_LINES (256u << 10)
/*
 * A map whose read cost more than REREAD_FREE_NS is read again no sooner
 * than REREAD_COST_FACTOR times that cost later: at most a tenth of a core.
 * Cheaper ones are read at every miss that asks (once an interval).
 */
#define REREAD_COST_FACTOR 10
#define REREAD_FREE_NS	   1000000

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
	bool capped;  /* the file was longer than the caps: only its head was read */
	size_t bytes; /* held: names and ranges */
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

static int parse_capped(const char *text, size_t len, size_t max_lines, struct perf_map **out)
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

		if (n == max_lines) {
			m->capped = true;
			break;
		}
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
	/* The arena was sized for the whole text; only the names are kept. */
	if (names_len) {
		char *shrunk = realloc(m->names, names_len);

		if (shrunk)
			m->names = shrunk;
	}
	err = build_ranges(m, lines, n);
	if (err)
		goto cleanup;
	for (i = 0; i < m->nranges; i++)
		m->ranges[i].name = m->names + (uintptr_t)m->ranges[i].name;
	m->bytes = names_len + m->nranges * sizeof(*m->ranges);
	*out = m;
	m = NULL;
cleanup:
	free(lines);
	perf_map__free(m);
	return err;
}

int perf_map__parse(const char *text, size_t len, struct perf_map **out)
{
	return parse_capped(text, len, SIZE_MAX, out);
}

/* Whether the file st describes is the one src read last, or only longer than its capped head. */
static bool unchanged(const struct perf_map_source *src, const struct stat *st)
{
	if (src->ino != (uint64_t)st->st_ino || src->dev != (uint64_t)st->st_dev)
		return false;
	if (src->capped)
		return (uint64_t)st->st_size >= src->size;
	return src->size == (uint64_t)st->st_size &&
	       src->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The first len bytes of fd, cut after the last whole line when the file goes on. */
static int read_head(int fd, size_t len, bool cut, char **out, size_t *got)
{
	char *buf = malloc(len + 1), *nl;
	size_t n = 0;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	while (n < len) {
		r = pread(fd, buf + n, len - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (cut) {
		nl = memrchr(buf, '\n', n);
		n = nl ? (size_t)(nl - buf) + 1 : 0;
	}
	*out = buf;
	*got = n;
	return 0;
}

static int read_capped(int fd, const struct stat *st, struct perf_map **out)
{
	bool over = (uint64_t)st->st_size > MAX_BYTES;
	size_t len = over ? MAX_BYTES : (size_t)st->st_size, got = 0;
	char *buf = NULL;
	int err;

	err = read_head(fd, len, over, &buf, &got);
	if (err)
		return err;
	err = parse_capped(buf, got, MAX_LINES, out);
	free(buf);
	if (!err && over)
		(*out)->capped = true;
	return err;
}

/*
 * How much earlier than a process's start its map may seem changed: /proc
 * gives the start in 10 ms ticks, and file times come from a clock that
 * lags by up to a jiffy.
 */
#define START_SLOP_NS (50 * 1000000ll)

static int64_t timespec_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* When a process started ticks after boot (as /proc/PID/stat says), on the file system's clock. */
static int64_t start_real_ns(uint64_t ticks)
{
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	hz = hz > 0 ? hz : 100;
	return timespec_ns(&real) - timespec_ns(&boot) + (int64_t)(ticks * (1000000000 / hz));
}

/*
 * Whether the file was last changed before a process that started at ticks:
 * then it is an earlier process's map, one whose PID it got. The change
 * time, which no user can set back.
 */
static bool predates(const struct stat *st, uint64_t ticks)
{
	return timespec_ns(&st->st_ctim) < start_real_ns(ticks) - START_SLOP_NS;
}

/* Whether pid's map at st was left by one of its PID's earlier processes. */
static bool stale_for(uint32_t pid, const struct stat *st)
{
	uint64_t ticks;

	return procfs__start_time(pid, &ticks) == 0 && predates(st, ticks);
}

int perf_map__reread(uint32_t pid, uint32_t ns_pid, struct perf_map_source *src,
		     struct perf_map **out)
{
	uint64_t t0 = clock__mono_ns(), t1;
	enum proc_file_refusal why;
	char path[64];
	struct stat st;
	int fd, err;

	*out = NULL;
	if (t0 < src->next_read_ns)
		return 0;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", ns_pid ? ns_pid : pid);
	fd = proc_file__open(pid, path, PROC_FILE_NO_LINKS | PROC_FILE_OWNED, &why);
	src->refused = why;
	if (fd < 0) {
		pr_debug("PID %u: %s: %s%s%s", pid, path, strerror(-fd), why ? ": " : "",
			 why ? proc_file__refusal_name(why) : "");
		return fd;
	}
	err = fstat(fd, &st) ? -errno : 0;
	if (!err && unchanged(src, &st)) {
		close(fd);
		return 0;
	}
	src->stale = !err && stale_for(pid, &st);
	if (src->stale)
		err = -ESTALE;
	if (!err)
		err = read_capped(fd, &st, out);
	close(fd);
	if (err) {
		pr_debug("PID %u: %s: %s", pid, path, strerror(-err));
		return err;
	}
	t1 = clock__mono_ns();
	*src = (struct perf_map_source){
		.dev = (uint64_t)st.st_dev,
		.ino = (uint64_t)st.st_ino,
		.size = (uint64_t)st.st_size,
		.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
		.next_read_ns = t1 - t0 > REREAD_FREE_NS ? t1 + (t1 - t0) * REREAD_COST_FACTOR : 0,
		.capped = (*out)->capped,
	};
	pr_debug("PID %u: %s: %zu entries, %zu malformed lines%s", pid, path, (*out)->count,
		 (*out)->bad_lines, (*out)->capped ? ", capped" : "");
	return 1;
}

/* Whether two paths name the same file (or namespace): a mount namespace, a root. */
static bool same_file(const char *a, const char *b)
{
	uint64_t a1, a2, a3, b1, b2, b3;

	return !stat_cached(a, &a1, &a2, &a3) && !stat_cached(b, &b1, &b2, &b3) && a1 == b1 &&
	       a2 == b2 && a3 == b3;
}

int perf_map__owner(uint32_t pid, uint32_t ns_pid, struct perf_map_owner *o)
{
	char ns[64], root[64];
	uint64_t again;
	int err;

	*o = (struct perf_map_owner){.pid = pid, .ns_pid = ns_pid};
	err = procfs__start_time(pid, &o->start_time);
	if (!err)
		err = procfs__uid(pid, &o->uid);
	if (err)
		return err;
	snprintf(ns, sizeof(ns), "/proc/%u/ns/mnt", pid);
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	o->host_root = same_file("/proc/self/ns/mnt", ns) && same_file("/proc/self/root", root);
	/* Read from the same process throughout, not from one that took its PID meanwhile. */
	if (procfs__start_time(pid, &again) || again != o->start_time)
		return -ESRCH;
	return 0;
}

/*
 * Whether pid is the process that started at ticks and has not exited; a
 * zombie has (its map is written, its root gone). *next: the start of
 * another process that has the PID now, or 0.
 */
static bool still_running(uint32_t pid, uint64_t ticks, uint64_t *next)
{
	char path[64], buf[512], *p;
	uint64_t now;

	*next = 0;
	if (procfs__start_time(pid, &now))
		return false;
	if (now != ticks) {
		*next = now;
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (procfs__read_small(path, buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

enum perf_map_exit perf_map__read_exited(const struct perf_map_owner *o, struct perf_map **out,
					 enum proc_file_refusal *why)
{
	uint64_t next;
	char path[64];
	struct stat st;
	int fd, err;

	*out = NULL;
	*why = PROC_FILE_OK;
	if (still_running(o->pid, o->start_time, &next))
		return PERF_MAP_EXIT_ALIVE;
	if (!o->host_root)
		return PERF_MAP_EXIT_OTHER_NS;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", o->ns_pid ? o->ns_pid : o->pid);
	fd = proc_file__open_as(o->uid, path, PROC_FILE_NO_LINKS | PROC_FILE_OWNED, why);
	if (fd < 0) {
		pr_debug("PID %u (exited): %s: %s%s%s", o->pid, path, strerror(-fd),
			 *why ? ": " : "", *why ? proc_file__refusal_name(*why) : "");
		return *why ? PERF_MAP_EXIT_REFUSED : PERF_MAP_EXIT_NONE;
	}
	err = fstat(fd, &st) ? -errno : 0;
	/* Its own: changed after it started, and before a process that took its PID did. */
	if (!err && (predates(&st, o->start_time) || (next && !predates(&st, next)))) {
		close(fd);
		pr_debug("PID %u (exited): %s is not its map (PID reused)", o->pid, path);
		return PERF_MAP_EXIT_NOT_ITS;
	}
	if (!err)
		err = read_capped(fd, &st, out);
	close(fd);
	if (err) {
		pr_debug("PID %u (exited): %s: %s", o->pid, path, strerror(-err));
		return PERF_MAP_EXIT_NONE;
	}
	pr_debug("PID %u (exited): %s: %zu entries%s", o->pid, path, (*out)->count,
		 (*out)->capped ? ", capped" : "");
	return PERF_MAP_EXIT_READ;
}

int perf_map__read(uint32_t pid, uint32_t ns_pid, struct perf_map **out)
{
	struct perf_map_source src = {0};
	int err = perf_map__reread(pid, ns_pid, &src, out);

	return err < 0 ? err : 0;
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

size_t perf_map__bytes(const struct perf_map *m)
{
	return m ? m->bytes : 0;
}

bool perf_map__capped(const struct perf_map *m)
{
	return m && m->capped;
}
