// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "lib/kernel_caps.h"
#include "lib/proc_file.h"
#include "lib/short_name.h"
#include "lib/strpool.h"
#include "lib/term_text.h"
#include "lib/load_budget.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "summary.h"
#include "unwind/process_regions.h"
#include "unwind/stack_walk.h"

struct func_total {
	const char *name;
	const char *module;
	uint64_t self;
	uint64_t total;
	size_t last_sample; /* 1 + the sample that last counted total */
	uint32_t next;	    /* 1 + the next function of the same name (another module) */
};

static const char *frame_module(const struct profile *p, const struct profile_frame *f)
{
	const struct profile_mapping *m;
	const char *slash;

	if (f->kernel)
		return "[kernel]";
	if (!f->mapping)
		return "";
	m = profile__mapping(p, f->mapping);
	if (!m || !m->path || !*m->path)
		return "";
	slash = strrchr(m->path, '/');
	return slash ? slash + 1 : m->path;
}

static int cmp_self(const void *a, const void *b)
{
	const struct func_total *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The function of f (name and module, both interned: compared by pointer)
 * among funcs, from the first of its name (1 + index, 0: none): 1 + its
 * index, or 0 with *last the last of that name (1 + index).
 */
static uint32_t find_func(const struct func_total *funcs, uint32_t first, const char *module,
			  uint32_t *last)
{
	uint32_t v;

	for (v = first; v; v = funcs[v - 1].next) {
		if (funcs[v - 1].module == module)
			return v;
		*last = v;
	}
	return 0;
}

/*
 * The name a function is listed under: a demangled signature shortened
 * (lib/short_name.h), interned in names, so that overloads are one line as
 * in pprof; any other name (C, perf maps, the kernel) as it is.
 */
static const char *function_name(const struct profile_frame *f, struct strpool *names)
{
	char buf[1024];
	long id;

	if (!names || !f->system_name || f->system_name == f->name)
		return f->name;
	id = strpool__add(names, short_name__trim(f->name, buf, sizeof(buf)));
	return id < 0 ? f->name : strpool__str(names, (size_t)id);
}

/*
 * Self and total per function: name and module, so that the hot_a of two
 * programs are two lines. Total counts a sample once even when a
 * function appears several times in its stack (recursion): each function
 * remembers the last sample that counted it. Frames map to functions
 * through an array by frame index, names hashed once per frame, not once
 * per frame of every sample (a qsort profile has thousands of distinct
 * stacks of 20 frames).
 */
static struct func_total *function_totals(const struct profile *p, struct strpool *names,
					  size_t *n_out)
{
	size_t nframes = profile__frame_count(p), n = 0, cap = 0, i;
	uint32_t *func_of = calloc(nframes + 1, sizeof(*func_of)); /* by frame id, from 1 */
	struct u64map *index = u64map__new();
	struct func_total *funcs = NULL, *tmp;
	uint32_t j, v;
	uint64_t found;

	if (!index || !func_of)
		goto fail;
	/* func_of[frame] is 1 + the function's index, 0 until its frame is met. */
	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *s = profile__sample(p, i);

		for (j = 0; j < s->nframes; j++) {
			const struct profile_frame *f = profile__frame(p, s->frames[j]);
			const char *name =
				func_of[s->frames[j]] ? f->name : function_name(f, names);
			uint64_t key = (uintptr_t)name;
			const char *module = frame_module(p, f);
			uint32_t last = 0;

			if (func_of[s->frames[j]]) {
				v = func_of[s->frames[j]] - 1;
			} else if (u64map__get(index, key, &found) &&
				   (v = find_func(funcs, (uint32_t)found + 1, module, &last))) {
				v--;
				func_of[s->frames[j]] = v + 1;
			} else {
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					tmp = realloc(funcs, cap * sizeof(*funcs));
					if (!tmp)
						goto fail;
					funcs = tmp;
				}
				funcs[n] = (struct func_total){.name = name, .module = module};
				v = (uint32_t)n++;
				if (last)
					funcs[last - 1].next = v + 1;
				else if (u64map__set(index, key, v))
					goto fail;
				func_of[s->frames[j]] = v + 1;
			}
			if (j == 0)
				funcs[v].self += s->count;
			if (funcs[v].last_sample != i + 1) {
				funcs[v].total += s->count;
				funcs[v].last_sample = i + 1;
			}
		}
	}
	u64map__free(index);
	free(func_of);
	qsort(funcs, n, sizeof(*funcs), cmp_self);
	*n_out = n;
	return funcs;
fail:
	u64map__free(index);
	free(func_of);
	free(funcs);
	*n_out = 0;
	return NULL;
}

static size_t count_processes(const struct profile *p)
{
	struct u64map *pids = u64map__new();
	size_t i, n;

	if (!pids)
		return 0;
	for (i = 0; i < profile__sample_count(p); i++)
		u64map__set(pids, profile__sample(p, i)->labels.pid, 1);
	n = u64map__count(pids);
	u64map__free(pids);
	return n;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/*
 * A name (a function, a file, a process, or a list of them) as the
 * terminal is to show it: users choose these names, escape sequences and
 * newlines included (term_text.h). The profile's comments keep them as
 * they are: there they are data.
 */
#define SHOWN_SIZE 4096
static const char *shown(const char *name, char buf[SHOWN_SIZE])
{
	return term_text__escape(name, buf, SHOWN_SIZE);
}

/* The placeholder the session puts at the root end of a walk that stopped before a root. */
static bool truncation_marker(const struct profile_frame *f)
{
	return f->kind == FRAME_TRUNCATED;
}

/* A placeholder for what has no code: a lost stack, or a truncated walk's marker. */
static bool placeholder(const struct profile_frame *f)
{
	return f->kind == FRAME_LOST || f->kind == FRAME_TRUNCATED;
}

uint64_t summary__unnamed_samples(const struct profile *p, uint64_t *by_start)
{
	uint64_t n = 0;
	size_t i;

	*by_start = 0;
	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *smp = profile__sample(p, i);
		bool none = false, start = false;

		for (uint32_t j = 0; j < smp->nframes; j++) {
			const struct profile_frame *f = profile__frame(p, smp->frames[j]);

			/*
			 * A truncated walk's marker names no code: the walk's report counts
			 * it. A lost user stack is counted here, as a stack with no name.
			 */
			if (!frame_kind__named(f->kind) && !f->kernel && !truncation_marker(f)) {
				start |= f->function_start;
				none |= !f->function_start;
			}
		}
		n += none ? smp->count : 0;
		*by_start += start ? smp->count : 0;
	}
	return n;
}

void summary__line_samples(const struct profile *p, uint64_t out[SYM_LINE_MAX])
{
	const struct profile_sample *smp;
	const struct profile_frame *f;
	size_t i;
	uint32_t j;

	memset(out, 0, SYM_LINE_MAX * sizeof(*out));
	for (i = 0; i < profile__sample_count(p); i++) {
		smp = profile__sample(p, i);
		for (j = 0; j < smp->nframes; j++) {
			if (profile__frame(p, smp->frames[j])->ninlines) {
				out[SYM_LINE_INLINED] += smp->count;
				break;
			}
		}
		for (j = 0; j < smp->nframes; j++) {
			f = profile__frame(p, smp->frames[j]);
			if (f->kernel || placeholder(f))
				continue;
			/* Line 0 is code the compiler made, that no source line holds. */
			if (f->line_status == SYM_LINE_FOUND && !f->line)
				out[SYM_LINE_NO_ROW] += smp->count;
			else if (f->line_status < SYM_LINE_MAX)
				out[f->line_status] += smp->count;
			break;
		}
	}
}

/* A user frame of code in no known mapping. */
static bool unmapped(const struct profile_frame *f)
{
	return f->kind == FRAME_UNNAMED && !f->kernel && !f->mapping;
}

/* (name, count) pairs: most first, then by name, so that ties list the same way every run. */
static int cmp_count_desc(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[1] != y[1])
		return x[1] < y[1] ? 1 : -1;
	return strcmp((const char *)(uintptr_t)x[0], (const char *)(uintptr_t)y[0]);
}

static int cmp_name(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return strcmp((const char *)(uintptr_t)x[0], (const char *)(uintptr_t)y[0]);
}

/* Adds n to name's count in by (NULL: no memory for the map, nothing counted). */
static void count_who(struct u64map *by, const char *name, uint64_t n)
{
	uint64_t v;

	if (!by)
		return;
	if (!u64map__get(by, (uintptr_t)name, &v))
		v = 0;
	u64map__set(by, (uintptr_t)name, v + n);
}

/* The (name, count) pairs of by, in a new array of 2 * count + 2 (NULL: no memory). */
static uint64_t *who_pairs(struct u64map *by, size_t *n)
{
	uint64_t *pairs = by ? calloc(2 * u64map__count(by) + 2, sizeof(*pairs)) : NULL;
	size_t pos = 0;

	*n = 0;
	if (!pairs)
		return NULL;
	while (u64map__next(by, &pos, &pairs[2 * *n], &pairs[2 * *n + 1]))
		(*n)++;
	return pairs;
}

/* "name count, ..." of n (name, count) pairs: the first most, as long as they fit. */
static void format_who(uint64_t *pairs, size_t n, size_t most, char *who, size_t size)
{
	size_t i, off = 0;
	int w;

	who[0] = '\0';
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_count_desc);
	for (i = 0; i < n && i < most; i++) {
		w = snprintf(who + off, size - off, "%s%s %" PRIu64, i ? ", " : "",
			     (const char *)(uintptr_t)pairs[2 * i], pairs[2 * i + 1]);
		if (w < 0 || (size_t)w >= size - off) {
			who[off] = '\0';
			break;
		}
		off += (size_t)w;
	}
}

/* "name count, ..." of the (interned name, count) pairs in by (NULL: ""). */
static void list_who(struct u64map *by, char *who, size_t size)
{
	size_t n;
	uint64_t *pairs = who_pairs(by, &n);

	who[0] = '\0';
	if (pairs)
		format_who(pairs, n, n, who, size);
	free(pairs);
}

/*
 * The name a process is listed under: its own, or "[pid N]" (interned in
 * pool) when that shows nothing to tell it by. NULL: no memory.
 */
static const char *listed_name(const struct profile_labels *l, struct strpool *pool)
{
	char buf[32];
	long id;

	if (l->comm && !term_text__blank(l->comm))
		return l->comm;
	snprintf(buf, sizeof(buf), "[pid %" PRIu32 "]", l->pid);
	id = pool ? strpool__add(pool, buf) : -ENOMEM;
	return id < 0 ? NULL : strpool__str(pool, (size_t)id);
}

uint64_t summary__unmapped_samples(const struct profile *p, char *who, size_t size)
{
	struct u64map *by = u64map__new(); /* interned comm -> samples */
	struct strpool *pids = strpool__new();
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *smp = profile__sample(p, i);

		for (uint32_t j = 0; j < smp->nframes; j++) {
			const char *name;

			if (!unmapped(profile__frame(p, smp->frames[j])))
				continue;
			n += smp->count;
			name = listed_name(&smp->labels, pids);
			if (name)
				count_who(by, name, smp->count);
			break;
		}
	}
	list_who(by, who, size);
	u64map__free(by);
	strpool__free(pids);
	return n;
}

/* Where a walk stopped: the file of the frame (a base name), else what the frame is. */
static const char *stop_place(const struct profile *p, const struct profile_frame *f)
{
	const char *module;

	if (!f->kernel && !f->mapping)
		return f->name; /* "[unknown]": in no known mapping */
	module = frame_module(p, f);
	return *module ? module : "[anon]";
}

/*
 * "name count, ..." of the three places in by with the most. Names are base
 * names: two paths of one file name (/lib and /usr/lib) are one entry,
 * merged here over the few distinct places rather than per sample.
 */
static void list_places(struct u64map *by, char *who, size_t size)
{
	size_t n, i, kept = 0;
	uint64_t *pairs = who_pairs(by, &n);

	who[0] = '\0';
	if (!pairs)
		return;
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_name);
	for (i = 0; i < n; i++) {
		if (kept && !cmp_name(&pairs[2 * (kept - 1)], &pairs[2 * i])) {
			pairs[2 * (kept - 1) + 1] += pairs[2 * i + 1];
			continue;
		}
		pairs[2 * kept] = pairs[2 * i];
		pairs[2 * kept + 1] = pairs[2 * i + 1];
		kept++;
	}
	format_who(pairs, kept, 3, who, size);
	free(pairs);
}

uint64_t summary__truncated_samples(const struct profile *p, char *who, size_t size)
{
	struct u64map *by = u64map__new(); /* stop place (a pointer into p) -> samples */
	const char *place;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *smp = profile__sample(p, i);

		if (!smp->nframes ||
		    !truncation_marker(profile__frame(p, smp->frames[smp->nframes - 1])))
			continue;
		n += smp->count;
		/* A walk keeps at least the interrupted PC: a marker alone is not expected. */
		place = smp->nframes > 1
				? stop_place(p, profile__frame(p, smp->frames[smp->nframes - 2]))
				: "?";
		count_who(by, place, smp->count);
	}
	list_places(by, who, size);
	u64map__free(by);
	return n;
}

static uint64_t lost_samples(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_COUNTS_FULL] + in->lost_spills +
	       in->stats[CPROF_STAT_WALKS_LOST];
}

uint64_t summary__lost_samples(const struct summary_info *in)
{
	return lost_samples(in);
}

static uint64_t lost_stacks(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_USER_COLLISION] + in->stats[CPROF_STAT_KERN_COLLISION] +
	       in->stats[CPROF_STAT_USER_STACK_ERR] + in->stats[CPROF_STAT_KERN_STACK_ERR] +
	       in->missing_stacks;
}

/* The reasons walks stopped before a root that occurred, most first (then in enum order). */
static size_t stops_by_count(const struct summary_info *in, uint32_t *out)
{
	size_t n = 0, j;
	uint32_t r;

	for (r = CPROF_STOP_NONE + 1; r < CPROF_STOP_MAX; r++) {
		if (!in->walk_stops[r])
			continue;
		for (j = n; j > 0 && in->walk_stops[out[j - 1]] < in->walk_stops[r]; j--)
			out[j] = out[j - 1];
		out[j] = r;
		n++;
	}
	return n;
}

/* snprintf at *off of buf; what does not fit is cut, and *off stays inside buf. */
static void appendf(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*off >= size - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *off, size - *off, fmt, ap);
	va_end(ap);
	if (w > 0)
		*off = (size_t)w < size - *off ? *off + (size_t)w : size - 1;
}

/*
 * "kernel fallbacks (as Linux 4.18, CPROF_KERNEL_AS): A; B", or "" when the
 * kernel could do everything cprof asked of it.
 */
static void fallbacks_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const char *sep = ": ";
	size_t off = 0;
	int c;

	*buf = '\0';
	if (!in->kernel_fallbacks)
		return;
	appendf(buf, size, &off, "kernel fallbacks");
	if (in->kernel_as)
		appendf(buf, size, &off, " (as Linux %s, CPROF_KERNEL_AS)", in->kernel_as);
	for (c = 0; c < KCAP_MAX; c++) {
		if (!(in->kernel_fallbacks & (1u << c)))
			continue;
		/* Without an in-kernel walk, how it would be verified is moot. */
		if ((c == KCAP_BPF_LOOP || c == KCAP_FIND_VMA) &&
		    (in->kernel_fallbacks & (1u << KCAP_UNWINDER)))
			continue;
		appendf(buf, size, &off, "%s%s", sep, kernel_caps__fallback_name(c));
		sep = "; ";
	}
}

/*
 * Samples the profile holds past those the BPF side counted: 0 when it
 * holds no more (losses and samples not kept explain fewer).
 */
static uint64_t uncounted_samples(uint64_t total, const struct summary_info *in)
{
	if (in->interval || in->stats_unread || total <= in->stats[CPROF_STAT_SAMPLES])
		return 0;
	return total - in->stats[CPROF_STAT_SAMPLES];
}

/* How user stacks were walked, in one comment: snake_case reasons (stack_walk__stop_token). */
static void user_stacks_comment(char *buf, size_t size, const struct summary_info *in)
{
	uint32_t order[CPROF_STOP_MAX];
	size_t off = 0, n, i;

	if (in->copy_walks) {
		appendf(buf, size, &off,
			"cprof: user stacks: cfi_in_user_space (stack copies: %s);",
			in->unwind_status == -ENOENT ? "asked for" : strerror(-in->unwind_status));
	} else if (in->unwind_status == -ENOENT) {
		snprintf(buf, size, "cprof: user stacks: frame_pointers (asked for)");
		return;
	} else if (in->unwind_status) {
		snprintf(
			buf, size,
			"cprof: user stacks: frame_pointers (the unwinder could not be loaded: %s)",
			strerror(-in->unwind_status));
		return;
	}
	if (!off)
		appendf(buf, size, &off, "cprof: user stacks: cfi;");
	appendf(buf, size, &off, " walked %" PRIu64 ": %s %" PRIu64, in->walked,
		stack_walk__stop_token(CPROF_STOP_NONE), in->walk_stops[CPROF_STOP_NONE]);
	n = stops_by_count(in, order);
	for (i = 0; i < n; i++)
		appendf(buf, size, &off, ", %s %" PRIu64, stack_walk__stop_token(order[i]),
			in->walk_stops[order[i]]);
	appendf(buf, size, &off, "; samples ending in a truncation marker %" PRIu64,
		in->truncated_samples);
	if (in->truncated_who[0])
		appendf(buf, size, &off, " (stopped most in: %s)", in->truncated_who);
	appendf(buf, size, &off, "; not walked, by frame pointers (taken in the kernel) %" PRIu64,
		in->fp_user);
}

/* Why user stacks were walked from stack copies, not in the kernel; "" when none were. */
static void copy_causes_comment(char *buf, size_t size, const struct summary_info *in)
{
	buf[0] = '\0';
	if (in->stats[CPROF_STAT_COPIES] && !in->copy_walks)
		snprintf(buf, size,
			 "cprof: stack copies %" PRIu64 ": process_not_followed %" PRIu64
			 ", walk_not_loaded %" PRIu64 ", table_not_built %" PRIu64
			 ", mapping_not_seen %" PRIu64,
			 in->stats[CPROF_STAT_COPIES], in->stats[CPROF_STAT_COPY_NEW],
			 in->stats[CPROF_STAT_COPY_EARLY], in->stats[CPROF_STAT_COPY_NO_TABLE],
			 in->stats[CPROF_STAT_COPY_YOUNG]);
}

/*
 * Why samples were walked in user space from stack copies, not in the
 * kernel, the causes the BPF side counted: " (N because ..., ...)".
 */
static void print_copy_causes(FILE *f, const struct summary_info *in)
{
	static const struct {
		int stat;
		const char *why;
	} causes[] = {
		{CPROF_STAT_COPY_YOUNG, "the process was new: code it had just mapped"},
		{CPROF_STAT_COPY_NO_TABLE, "its file's table was not built yet"},
		{CPROF_STAT_COPY_NEW, "cprof had not followed the process yet"},
		{CPROF_STAT_COPY_EARLY, "the in-kernel walk was not loaded yet"},
	};
	const char *sep = " (";
	size_t i;

	for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		if (!in->stats[causes[i].stat])
			continue;
		fprintf(f, "%s%" PRIu64 " because %s", sep, in->stats[causes[i].stat],
			causes[i].why);
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', f);
}

/*
 * "debuginfod: 3 debug files asked for: 1 downloaded, 2 from the cache; 1
 * failed: 1 not found", or "" when none was asked for.
 */
/* " (REASON N, ...)": the reasons counted from stat first, in lib/proc_file.h's order. */
static void reasons(char *buf, size_t size, const struct summary_info *in, int first, int nreasons)
{
	size_t len = strlen(buf);
	const char *sep = " (";
	int i;

	for (i = 0; i < nreasons; i++) {
		if (!in->sym[first + i])
			continue;
		snprintf(buf + len, size - len, "%s%s %" PRIu64, sep,
			 proc_file__refusal_name(PROC_FILE_LINK + i), in->sym[first + i]);
		len = strlen(buf);
		sep = ", ";
	}
	if (*sep == ',')
		snprintf(buf + len, size - len, ")");
}

static uint64_t sum(const uint64_t *v, int n)
{
	uint64_t t = 0;

	while (n--)
		t += v[n];
	return t;
}

/*
 * The share of samples with an inlined function in a frame, and why
 * others may have none: files whose .debug_info was not read, units
 * skipped (only when there were some).
 */
static void inlines_sentence(char *buf, size_t size, size_t *off, const struct summary_info *in,
			     uint64_t all)
{
	const uint64_t *v = &in->sym[SYM_STAT_INLINE_UNITS_BAD];

	appendf(buf, size, off, "; inlined functions in %" PRIu64 " (%.1f%%)",
		in->line_samples[SYM_LINE_INLINED], pct(in->line_samples[SYM_LINE_INLINED], all));
	if (sum(v, 4))
		appendf(buf, size, off,
			"; .debug_info not read in %" PRIu64 " files, units skipped: malformed "
			"%" PRIu64 ", unsupported %" PRIu64 ", capped %" PRIu64,
			in->sym[SYM_STAT_INLINE_FILES_UNREAD], v[0], v[1], v[2]);
}

/*
 * "source lines: ..." with what the leaf user frames got, and the line
 * table units skipped when there were some (a comment stays under 200
 * characters).
 */
static void lines_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const uint64_t *n = in->line_samples;
	uint64_t all = sum(n, SYM_LINE_INLINED);
	size_t off = 0;

	appendf(buf, size, &off,
		"source lines: %" PRIu64 " of %" PRIu64 " user samples (%.1f%%) have one at the "
		"leaf; none: no symbol %" PRIu64 ", no debug info %" PRIu64 ", no row %" PRIu64
		", unreadable %" PRIu64 ", refused %" PRIu64 ", not zlib %" PRIu64
		", cut off %" PRIu64,
		n[SYM_LINE_FOUND], all, pct(n[SYM_LINE_FOUND], all), n[SYM_LINE_NOT_ASKED],
		n[SYM_LINE_NO_DEBUG], n[SYM_LINE_NO_ROW], n[SYM_LINE_UNREADABLE],
		n[SYM_LINE_REFUSED], n[SYM_LINE_UNSUPPORTED], n[SYM_LINE_CUT_OFF]);
	if (in->sym[SYM_STAT_LINE_UNITS_BAD] + in->sym[SYM_STAT_LINE_UNITS_UNSUPPORTED] +
	    in->sym[SYM_STAT_LINE_UNITS_CAPPED])
		appendf(buf, size, &off,
			"; line table units skipped: malformed %" PRIu64 ", unsupported %" PRIu64
			", capped %" PRIu64,
			in->sym[SYM_STAT_LINE_UNITS_BAD], in->sym[SYM_STAT_LINE_UNITS_UNSUPPORTED],
			in->sym[SYM_STAT_LINE_UNITS_CAPPED]);
	if (in->inlines)
		inlines_sentence(buf, size, &off, in, all);
}

static void print_lines(FILE *f, const struct summary_info *in)
{
	char line[640];

	if (!in->lines)
		return;
	lines_sentence(line, sizeof(line), in);
	fprintf(f, "cprof: %s\n", line);
}

/*
 * Files opened on a process's behalf that its rule refused or capped
 * (lib/proc_file.h): "" when none, unless always.
 */
static void refusals_sentence(char *buf, size_t size, const struct summary_info *in, bool always)
{
	uint64_t maps = sum(&in->sym[SYM_STAT_PERF_MAP_REFUSED_LINK], 3);
	uint64_t dbg = sum(&in->sym[SYM_STAT_DEBUG_REFUSED_LINK], 4);
	size_t len;

	*buf = '\0';
	if (!always && !maps && !dbg && !in->sym[SYM_STAT_PERF_MAPS_CAPPED] &&
	    !in->sym[SYM_STAT_PERF_MAP_READS_POSTPONED] &&
	    !in->sym[SYM_STAT_PERF_MAPS_OVER_BUDGET] && !in->sym[SYM_STAT_DEBUG_CRC_STOPPED])
		return;
	snprintf(buf, size, "perf maps refused %" PRIu64, maps);
	reasons(buf, size, in, SYM_STAT_PERF_MAP_REFUSED_LINK, 3);
	len = strlen(buf);
	snprintf(buf + len, size - len,
		 ", capped (only their first 16 MiB or 256Ki lines read) %" PRIu64
		 ", reads put off to the next drain (0.1 s of reading per drain) %" PRIu64
		 ", not read (all maps held 128 MiB) %" PRIu64 "; debug files refused %" PRIu64,
		 in->sym[SYM_STAT_PERF_MAPS_CAPPED], in->sym[SYM_STAT_PERF_MAP_READS_POSTPONED],
		 in->sym[SYM_STAT_PERF_MAPS_OVER_BUDGET], dbg);
	reasons(buf, size, in, SYM_STAT_DEBUG_REFUSED_LINK, 4);
	len = strlen(buf);
	snprintf(buf + len, size - len, ", not checked (the run ended during their CRC) %" PRIu64,
		 in->sym[SYM_STAT_DEBUG_CRC_STOPPED]);
}

/*
 * Perf maps read when a profile was finished, of processes that exited or
 * of JVMs asked for theirs (--jvm-perf-map), and what was not read: "" when
 * nothing was tried.
 */
static void end_maps_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const uint64_t *v = in->sym;
	size_t len;

	*buf = '\0';
	if (!sum(&v[SYM_STAT_EXIT_MAPS_READ], SYM_STAT_JVMS_UNASKED - SYM_STAT_EXIT_MAPS_READ + 1))
		return;
	snprintf(buf, size,
		 "perf maps of processes that exited, read at the end %" PRIu64
		 ", frames they (or JVMs) named %" PRIu64
		 ", not read (in another mount namespace) %" PRIu64
		 ", not read (the end's 0.3 s spent) %" PRIu64
		 ", refused (older than the process, or its PID's next one's) %" PRIu64,
		 v[SYM_STAT_EXIT_MAPS_READ], v[SYM_STAT_EXIT_FRAMES_NAMED],
		 v[SYM_STAT_EXIT_MAPS_OTHER_NS], v[SYM_STAT_EXIT_MAPS_LATE],
		 v[SYM_STAT_PERF_MAPS_NOT_ITS]);
	if (!v[SYM_STAT_JVMS_ASKED] && !v[SYM_STAT_JVMS_UNASKED])
		return;
	len = strlen(buf);
	snprintf(buf + len, size - len,
		 "; JVMs asked for their perf map %" PRIu64 ", no answer or refused %" PRIu64
		 ", not asked (the end's 1 s spent) %" PRIu64,
		 v[SYM_STAT_JVMS_ASKED], v[SYM_STAT_JVMS_FAILED], v[SYM_STAT_JVMS_UNASKED]);
}

static void debuginfod_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const struct debuginfod_counts *c = &in->fetched;
	uint64_t asked = c->unfinished, failed = 0;
	size_t len;
	int i;

	*buf = '\0';
	for (i = 0; i < DEBUGINFOD_NSTATUS; i++) {
		asked += c->status[i];
		if (i != DEBUGINFOD_DOWNLOADED && i != DEBUGINFOD_FROM_CACHE)
			failed += c->status[i];
	}
	if (!in->debuginfod || !asked)
		return;
	snprintf(buf, size,
		 "debuginfod: %" PRIu64 " debug %s asked for: %" PRIu64 " downloaded, %" PRIu64
		 " from the cache",
		 asked, plural(asked, "file", "files"), c->status[DEBUGINFOD_DOWNLOADED],
		 c->status[DEBUGINFOD_FROM_CACHE]);
	for (i = 0; i < DEBUGINFOD_NSTATUS; i++) {
		if (i == DEBUGINFOD_DOWNLOADED || i == DEBUGINFOD_FROM_CACHE || !c->status[i])
			continue;
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s%" PRIu64 " %s", failed ? "; failed: " : ", ",
			 c->status[i], debuginfod_status__name(i));
		failed = 0;
	}
	len = strlen(buf);
	if (c->unfinished)
		snprintf(buf + len, size - len,
			 "; %" PRIu64
			 " still downloading when the run ended (--debuginfod-timeout)",
			 c->unfinished);
	len = strlen(buf);
	if (c->spent.pruned)
		snprintf(buf + len, size - len,
			 "; the cache kept under its cap: %" PRIu64 " %s used longest ago removed "
			 "(%" PRIu64 " bytes)",
			 c->spent.pruned, plural(c->spent.pruned, "file", "files"),
			 c->spent.pruned_bytes);
}

/* What the run's caps and deadline kept out (lib/load_budget.h), or "". */
static void budget_sentence(char *buf, size_t size, const struct summary_info *in)
{
	size_t off = 0;

	*buf = '\0';
	if (in->symtabs_refused || in->symtabs_abandoned || in->symtabs_over_held)
		appendf(buf, size, &off,
			"symbol tables refused: %" PRIu64
			" over the cap of %u symbols or %u MiB of "
			"names, %" PRIu64 " not loaded as the run was over, %" PRIu64
			" not loaded while other files held %u symbols",
			in->symtabs_refused, LOAD_MAX_SYMBOLS, LOAD_MAX_NAME_BYTES >> 20,
			in->symtabs_abandoned, in->symtabs_over_held, LOAD_MAX_HELD_SYMBOLS);
	if (in->cfi_refused || in->cfi_abandoned)
		appendf(buf, size, &off,
			"%sunwind tables refused: %" PRIu64
			" with CFI over the cap of %llu MiB, %u "
			"FDEs or %u rows, %" PRIu64 " not built as the run was over (%" PRIu64
			" of them left behind, still reading their file)",
			off ? "; " : "", in->cfi_refused, LOAD_MAX_CFI_BYTES >> 20,
			LOAD_MAX_CFI_FDES, LOAD_MAX_CFI_ROWS, in->cfi_abandoned,
			in->cfi_left_behind);
	if (in->files_cut_short)
		appendf(buf, size, &off,
			"%sfiles truncated while cprof read them: %" PRIu64
			" (their symbols or unwind tables are missing)",
			off ? "; " : "", in->files_cut_short);
	if (in->regions_over_cap)
		appendf(buf, size, &off,
			"%scode mappings without an unwind table: %" PRIu64
			" past the first %u of their process",
			off ? "; " : "", in->regions_over_cap, LOAD_MAX_EAGER_MAPPINGS);
}

int summary__add_comments(struct profile *p, const struct summary_info *in)
{
	char buf[1024];
	int err;

	snprintf(buf, sizeof(buf),
		 "cprof: samples taken %" PRIu64 ", in profile %" PRIu64 ", lost %" PRIu64
		 "; never taken %" PRIu64 "; before exec %" PRIu64 "; ticks %" PRIu64 " at %" PRIu64
		 " Hz on %d CPUs; max rate %" PRIu64,
		 in->stats[CPROF_STAT_SAMPLES], profile__total_count(p), lost_samples(in),
		 in->skipped_samples, in->stats[CPROF_STAT_BEFORE_EXEC],
		 in->stats[CPROF_STAT_TICKS], in->hz, in->ncpus, in->kernel_max_rate);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (uncounted_samples(profile__total_count(p), in)) {
		snprintf(buf, sizeof(buf),
			 "cprof: MISMATCH: the profile holds %" PRIu64
			 " samples more than the BPF side counted",
			 uncounted_samples(profile__total_count(p), in));
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	memcpy(buf, "cprof: ", 7);
	fallbacks_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	snprintf(buf, sizeof(buf),
		 "cprof: stacks lost: user collisions %" PRIu64 ", kernel collisions %" PRIu64
		 ", user errors %" PRIu64 ", kernel errors %" PRIu64 ", vanished %" PRIu64
		 "; kept whole past a stack-map collision %" PRIu64,
		 in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
		 in->stats[CPROF_STAT_USER_STACK_ERR], in->stats[CPROF_STAT_KERN_STACK_ERR],
		 in->missing_stacks, in->stats[CPROF_STAT_SPILLED]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: samples unnamed %" PRIu64 ", by function start %" PRIu64
		 ", unmapped %" PRIu64 "%s%s%s; frames unnamed: user %" PRIu64 " of %" PRIu64
		 " (unmapped %" PRIu64 "), kernel %" PRIu64 " of %" PRIu64
		 "; files unopened %" PRIu64 "%s%s%s",
		 in->unnamed_samples, in->function_start_samples, in->unmapped_samples,
		 in->unmapped_who[0] ? " (" : "", in->unmapped_who, in->unmapped_who[0] ? ")" : "",
		 in->sym[SYM_STAT_UNKNOWN_USER], in->sym[SYM_STAT_USER_FRAMES],
		 in->sym[SYM_STAT_USER_UNMAPPED], in->sym[SYM_STAT_UNKNOWN_KERNEL],
		 in->sym[SYM_STAT_KERNEL_FRAMES], in->sym[SYM_STAT_FILES_UNOPENED],
		 in->unopened_who[0] ? " (" : "", in->unopened_who, in->unopened_who[0] ? ")" : "");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: processes: from /proc %" PRIu64 ", gone first %" PRIu64
		 "; followed spaces %" PRIu64 ", mappings %" PRIu64 "; released %" PRIu64
		 "; notifications lost %" PRIu64 "; perf records lost %" PRIu64 " (counted above)",
		 in->sym[SYM_STAT_PROCESSES], in->sym[SYM_STAT_PROCESSES_GONE],
		 in->sym[SYM_STAT_SPACES_FOLLOWED], in->sym[SYM_STAT_MAPPINGS_FOLLOWED],
		 in->sym[SYM_STAT_SPACES_FORGOTTEN], in->stats[CPROF_STAT_NOTIFY_LOST],
		 in->lost_notifications);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->followed)
		snprintf(buf, sizeof(buf),
			 "cprof: kernel records: read %" PRIu64
			 ", lost by the kernel (ring full) %" PRIu64 ", malformed %" PRIu64
			 ", late %" PRIu64 "; hook runs skipped %" PRIu64
			 ", forks found late %" PRIu64,
			 in->records, in->records_lost, in->records_broken, in->records_late,
			 in->skipped_hooks, in->forks_late);
	else
		snprintf(buf, sizeof(buf),
			 "cprof: kernel records: none (processes read from /proc when first "
			 "sampled)");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: symbols: debug files %" PRIu64 "; bad perf map lines %" PRIu64
		 "; ELF files %" PRIu64 ", closed idle %" PRIu64 ", let go %" PRIu64
		 ", reopened %" PRIu64 "; frames named by function start (no symbol) %" PRIu64,
		 in->sym[SYM_STAT_DEBUG_FILES], in->sym[SYM_STAT_PERF_MAP_BAD_LINES],
		 in->sym[SYM_STAT_ELF_FILES], in->sym[SYM_STAT_ELF_FILES_CLOSED],
		 in->sym[SYM_STAT_ELF_FILES_RELEASED], in->sym[SYM_STAT_ELF_FILES_REOPENED],
		 in->sym[SYM_STAT_FUNCTION_STARTS]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->lines) {
		memcpy(buf, "cprof: ", 7);
		lines_sentence(buf + 7, sizeof(buf) - 7, in);
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	memcpy(buf, "cprof: ", 7);
	refusals_sentence(buf + 7, sizeof(buf) - 7, in, false);
	if (!buf[7]) /* every count 0: said in a few words */
		snprintf(buf + 7, sizeof(buf) - 7, "perf maps and debug files refused: none");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	end_maps_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	snprintf(buf, sizeof(buf),
		 "cprof: files on FUSE (or a user's overlay) read through a child process %" PRIu64
		 ", reads given up (no answer within %d ms, or the profile's %d ms spent) %" PRIu64,
		 in->fuse.copied, FUSE_FILE_TIMEOUT_MS, FUSE_FILE_RUN_BUDGET_MS,
		 in->fuse.unanswered);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	budget_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	if (in->debuginfod) {
		memcpy(buf, "cprof: ", 7);
		debuginfod_sentence(buf + 7, sizeof(buf) - 7, in);
		if (buf[7] == '\0')
			snprintf(buf + 7, sizeof(buf) - 7,
				 "debuginfod: no debug file asked for (every file was named "
				 "without one)");
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	user_stacks_comment(buf, sizeof(buf), in);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	copy_causes_comment(buf, sizeof(buf), in);
	if (buf[0] && (err = profile__add_comment(p, buf)))
		return err;
	if (in->targeted)
		snprintf(buf, sizeof(buf),
			 "cprof: idle samples: none (only the targets are sampled)");
	else
		snprintf(buf, sizeof(buf), "cprof: idle samples %s: %" PRIu64,
			 in->include_idle ? "included" : "excluded", in->stats[CPROF_STAT_IDLE]);
	return profile__add_comment(p, buf);
}

static void print_lost(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t lost = lost_samples(in), stacks = lost_stacks(in);

	if (lost)
		fprintf(f, "cprof: LOST %" PRIu64 " %s (%.1f%%): %s\n", lost,
			plural(lost, "sample", "samples"), pct(lost, total + lost),
			in->lost_spills || in->stats[CPROF_STAT_WALKS_LOST]
				? "the counts map was full, or the perf buffer or memory for a "
				  "spilled or copied stack"
				: "the counts map was full; raise --map-size");
	else
		fprintf(f, "cprof: lost samples: 0\n");
	if (in->skipped_samples)
		fprintf(f,
			"cprof: the kernel skipped the sampling program %" PRIu64 " %s (a BPF "
			"program or a bpf() call was under way on that CPU): %s never taken\n",
			in->skipped_samples, plural(in->skipped_samples, "time", "times"),
			plural(in->skipped_samples, "that sample was", "those samples were"));
	if (stacks)
		fprintf(f,
			"cprof: %" PRIu64 " %s lost but their samples kept as placeholders: "
			"stack-map collisions user %" PRIu64 " kernel %" PRIu64 ", errors %" PRIu64
			"\n",
			stacks, plural(stacks, "stack", "stacks"),
			in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
			in->stats[CPROF_STAT_USER_STACK_ERR] +
				in->stats[CPROF_STAT_KERN_STACK_ERR] + in->missing_stacks);
}

/* part of whole in %, never rounded to 0 or 100 when it is neither. */
static void print_share(FILE *f, uint64_t part, uint64_t whole)
{
	double v = pct(part, whole);

	if (part && v < 0.05)
		fprintf(f, "<0.1%%");
	else if (part < whole && v >= 99.95)
		fprintf(f, ">99.9%%");
	else
		fprintf(f, "%.1f%%", v);
}

/*
 * Stacks by frame pointers are the kernel's (bpf_get_stack), which stops at
 * 127 frames: said where --max-stack asked for more, as it does not apply.
 */
static void print_fp_depth(FILE *f, const struct summary_info *in)
{
	if (in->max_stack > CPROF_MAX_STACK_DEPTH)
		fprintf(f, "; the kernel reads those at most %d frames deep, not --max-stack's %u",
			CPROF_MAX_STACK_DEPTH, in->max_stack);
}

static void print_user_stacks(FILE *f, const struct summary_info *in)
{
	static const char *const fp_caveat =
		"callers in code built without frame pointers may be missing or wrong";
	uint64_t root = in->walk_stops[CPROF_STOP_NONE], n = in->fp_user;
	uint32_t order[CPROF_STOP_MAX];
	char who[SHOWN_SIZE];
	size_t nstops, i;

	if (in->copy_walks) {
		fprintf(f,
			"cprof: every user stack walked in user space from a copy of the stack (");
		if (in->unwind_status == -ENOENT)
			fprintf(f, "--stack-copies)\n");
		else
			fprintf(f, "the in-kernel walk cannot run here: %s)\n",
				strerror(-in->unwind_status));
	} else if (in->unwind_status == -ENOENT) {
		fprintf(f, "cprof: user stacks by frame pointers only (--frame-pointers): %s\n",
			fp_caveat);
		return;
	} else if (in->unwind_status) {
		fprintf(f,
			"cprof: user stacks by frame pointers only: the unwinder could not be "
			"loaded (%s; run with -v for the verifier log): %s",
			strerror(-in->unwind_status), fp_caveat);
		print_fp_depth(f, in);
		fputc('\n', f);
		return;
	}
	/* Nothing walked (kernel threads, or only samples taken in the kernel): nothing to say. */
	if (in->walked) {
		fprintf(f,
			"cprof: user stacks walked with the CFI tables: %" PRIu64 " of %" PRIu64
			" %s (",
			root, in->walked, plural(in->walked, "sample", "samples"));
		print_share(f, root, in->walked);
		fprintf(f, ") reached a thread root");
		nstops = stops_by_count(in, order);
		for (i = 0; i < nstops; i++) {
			fprintf(f, "%s%" PRIu64 " (",
				i ? ", " : "; truncated: ", in->walk_stops[order[i]]);
			print_share(f, in->walk_stops[order[i]], in->walked);
			fprintf(f, ") %s", stack_walk__stop_name(order[i]));
		}
		if (nstops && in->truncated_who[0])
			fprintf(f, "; stopped most in %s", shown(in->truncated_who, who));
		/* Their tables not loaded yet, or the in-kernel walk not: walked by cprof itself.
		 */
		if (in->stats[CPROF_STAT_COPIES] && !in->copy_walks) {
			fprintf(f,
				"; %" PRIu64 " of %" PRIu64
				" walked in user space from a copy of the stack",
				in->stats[CPROF_STAT_COPIES], in->walked);
			print_copy_causes(f, in);
		}
		fputc('\n', f);
	}
	if (n) {
		fprintf(f,
			"cprof: %" PRIu64 " %s taken in the kernel %s by frame pointers, not "
			"walked with the tables: their callers may be missing",
			n, plural(n, "sample", "samples"),
			plural(n, "has its user stack", "have their user stacks"));
		print_fp_depth(f, in);
		fputc('\n', f);
	}
}

/* Distinct user frames with no name at all: not even their function's start. */
static uint64_t unnamed_user_frames(const struct summary_info *in)
{
	uint64_t all = in->sym[SYM_STAT_UNKNOWN_USER], starts = in->sym[SYM_STAT_FUNCTION_STARTS];

	return all > starts ? all - starts : 0;
}

static void print_unnamed(FILE *f, uint64_t total, const struct summary_info *in)
{
	char line[512], who[SHOWN_SIZE];
	uint64_t n;

	/* Frames named by their function's start are named, if not by a symbol: said apart. */
	n = unnamed_user_frames(in);
	if (n || in->unnamed_samples || in->sym[SYM_STAT_UNKNOWN_KERNEL])
		fprintf(f,
			"cprof: %" PRIu64 " of %" PRIu64 " %s (%.1f%%) %s a user frame with no "
			"name at all; distinct frames without one, shown as module+offset: user "
			"%" PRIu64 " of %" PRIu64 ", kernel %" PRIu64 " of %" PRIu64 "\n",
			in->unnamed_samples, total, plural(total, "sample", "samples"),
			pct(in->unnamed_samples, total), in->unnamed_samples == 1 ? "has" : "have",
			n, in->sym[SYM_STAT_USER_FRAMES], in->sym[SYM_STAT_UNKNOWN_KERNEL],
			in->sym[SYM_STAT_KERNEL_FRAMES]);
	n = in->unmapped_samples;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s a user address in no mapping known to %s process, "
			"shown as [unknown]%s%s\n",
			n, plural(n, "sample has", "samples have"), plural(n, "its", "their"),
			in->unmapped_who[0] ? ": " : "", shown(in->unmapped_who, who));
	n = in->sym[SYM_STAT_FILES_UNOPENED];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " mapped %s not be opened (deleted and gone, or replaced "
			"by another file): %s frames are shown as file@offset%s%s\n",
			n, plural(n, "file could", "files could"), plural(n, "its", "their"),
			in->unopened_who[0] ? "; in " : "", shown(in->unopened_who, who));
	n = in->sym[SYM_STAT_FUNCTION_STARTS];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " of %" PRIu64 " %s (%.1f%%) %s a user frame named by "
			"its function's start, not by a symbol (a stripped file; the start from "
			".eh_frame), shown as FILE+0xSTART: %" PRIu64 " distinct %s\n",
			in->function_start_samples, total, plural(total, "sample", "samples"),
			pct(in->function_start_samples, total),
			in->function_start_samples == 1 ? "has" : "have", n,
			plural(n, "frame", "frames"));
	n = in->sym[SYM_STAT_PERF_MAP_BAD_LINES];
	if (n)
		fprintf(f, "cprof: %" PRIu64 " malformed perf map %s skipped\n", n,
			plural(n, "line", "lines"));
	refusals_sentence(line, sizeof(line), in, false);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	end_maps_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	n = in->fuse.unanswered;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s of files on FUSE given up: the FUSE server did not "
			"answer within %d ms (none of its files was tried again), or the %d ms a "
			"profile gives such reads were spent\n",
			n, plural(n, "read", "reads"), FUSE_FILE_TIMEOUT_MS,
			FUSE_FILE_RUN_BUDGET_MS);
	debuginfod_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	n = in->store_capped;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " unwind %s or symbol %s not kept for later runs: past "
			"the cache directory's size cap (later runs build them again)\n",
			n, plural(n, "table", "tables"), plural(n, "set", "sets"));
	budget_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f,
			"cprof: %s: frames in refused symbol tables show as file+address, stacks "
			"without an unwind table are walked by frame pointers\n",
			line);
}

static void print_processes(FILE *f, const struct summary_info *in)
{
	uint64_t gone = in->sym[SYM_STAT_PROCESSES_GONE], n = in->stats[CPROF_STAT_NOTIFY_LOST];

	if (in->records_lost)
		fprintf(f,
			"cprof: the kernel lost %" PRIu64 " %s of forks, execs and mmaps (its ring "
			"was full): processes that began or mapped code then may show [unknown] "
			"frames\n",
			in->records_lost, plural(in->records_lost, "record", "records"));
	if (in->records_broken)
		fprintf(f, "cprof: %" PRIu64 " malformed process %s skipped\n", in->records_broken,
			plural(in->records_broken, "record", "records"));
	if (in->skipped_hooks || in->forks_late)
		fprintf(f,
			"cprof: the kernel skipped %" PRIu64 " %s of the fork, exec and exit hooks "
			"(a BPF program or a bpf() call was under way on that CPU); %" PRIu64
			" %s followed from the kernel's records instead, a moment late\n",
			in->skipped_hooks, plural(in->skipped_hooks, "run", "runs"), in->forks_late,
			plural(in->forks_late, "child was", "children were"));

	if (gone)
		fprintf(f, "cprof: %" PRIu64 " %s before %s memory map could be read\n", gone,
			plural(gone, "process exited", "processes exited"),
			plural(gone, "its", "their"));
	if (n)
		fprintf(f, "cprof: %" PRIu64 " new-process %s lost (%s read late)\n", n,
			plural(n, "notification", "notifications"),
			plural(n, "that process was", "those processes were"));
	n = in->stats[CPROF_STAT_BEFORE_EXEC];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64
			" %s of the command before its exec not kept (cprof's own "
			"code)\n",
			n, plural(n, "sample", "samples"));
}

static void print_rate(FILE *f, const struct summary_info *in)
{
	uint64_t idle = in->stats[CPROF_STAT_IDLE];

	/*
	 * -F was checked against the limit at the start; the kernel lowers it when
	 * sampling interrupts take too long, and then throttles the events. (The
	 * tick count cannot tell: an idle CPU in a tickless sleep takes none.)
	 */
	if (in->kernel_max_rate && in->kernel_max_rate < in->hz)
		fprintf(f,
			"cprof: the kernel throttled sampling: it lowered "
			"kernel.perf_event_max_sample_rate to %" PRIu64
			" during the run, below the "
			"%" PRIu64 " Hz asked, so fewer samples were taken (%" PRIu64
			" ticks in %.2f s on %d %s)\n",
			in->kernel_max_rate, in->hz, in->stats[CPROF_STAT_TICKS],
			(double)in->duration_ns / 1e9, in->ncpus,
			plural((uint64_t)in->ncpus, "CPU", "CPUs"));
	/* With -p or a command, other CPUs' idle time is not the target's business. */
	if (!idle || in->targeted)
		return;
	if (in->include_idle)
		fprintf(f, "cprof: %" PRIu64 " idle %s included (the swapper task)\n", idle,
			plural(idle, "sample", "samples"));
	else
		fprintf(f, "cprof: %" PRIu64 " idle %s not counted (--include-idle keeps them)\n",
			idle, plural(idle, "sample", "samples"));
}

/* The kernel's fallbacks, and a profile the BPF side's counter cannot account for. */
static void print_kernel(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t extra = uncounted_samples(total, in);
	char buf[512];

	fallbacks_sentence(buf, sizeof(buf), in);
	if (*buf)
		fprintf(f, "cprof: %s\n", buf);
	if (extra)
		fprintf(f,
			"cprof: MISMATCH: the profile holds %" PRIu64 " %s more than the %" PRIu64
			" the BPF side counted: its counts cannot be trusted (no top list)\n",
			extra, plural(extra, "sample", "samples"), in->stats[CPROF_STAT_SAMPLES]);
}

void summary__print_losses(FILE *f, uint64_t total, const struct summary_info *in)
{
	print_kernel(f, total, in);
	print_lost(f, total, in);
	print_user_stacks(f, in);
	print_unnamed(f, total, in);
	print_lines(f, in);
	print_processes(f, in);
	print_rate(f, in);
}

void summary__print(FILE *f, const struct profile *p, const struct summary_info *in, int top_n)
{
	uint64_t total = profile__total_count(p);
	struct func_total *funcs;
	struct strpool *names;
	char name[SHOWN_SIZE], module[SHOWN_SIZE];
	size_t nfuncs = 0, i;

	fprintf(f, "cprof: %" PRIu64 " %s in %.2f s at %" PRIu64 " Hz on %d %s, %zu %s\n", total,
		plural(total, "sample", "samples"), (double)in->duration_ns / 1e9, in->hz,
		in->ncpus, plural((uint64_t)in->ncpus, "CPU", "CPUs"), count_processes(p),
		plural(count_processes(p), "process", "processes"));
	summary__print_losses(f, total, in);
	if (!total || uncounted_samples(total, in))
		return;
	names = strpool__new();
	funcs = function_totals(p, names, &nfuncs);
	fprintf(f, "cprof: top functions by self samples:\n");
	fprintf(f, "  %6s %6s %8s  %s\n", "self%", "total%", "samples", "function");
	for (i = 0; i < nfuncs && (int)i < top_n; i++) {
		if (!funcs[i].self)
			break;
		fprintf(f, "  %5.1f%% %5.1f%% %8" PRIu64 "  %s%s%s%s\n", pct(funcs[i].self, total),
			pct(funcs[i].total, total), funcs[i].self, shown(funcs[i].name, name),
			*funcs[i].module ? " (" : "", shown(funcs[i].module, module),
			*funcs[i].module ? ")" : "");
	}
	free(funcs);
	strpool__free(names);
}
