// SPDX-License-Identifier: MIT
/*
 * What a profile holds, counted for the summary: its heaviest functions, and
 * the samples with frames unnamed, unmapped, truncated or lost, and whose.
 */
#include "summary_internal.h"

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
struct func_total *summary_function_totals(const struct profile *p, struct strpool *names,
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

size_t summary_count_processes(const struct profile *p)
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

double summary_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/*
 * A name (a function, a file, a process, or a list of them) as the
 * terminal is to show it: users choose these names, escape sequences and
 * newlines included (term_text.h). The profile's comments keep them as
 * they are: there they are data.
 */
const char *summary_shown(const char *name, char buf[SHOWN_SIZE])
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

uint64_t summary_lost_samples(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_COUNTS_FULL] + in->lost_spills +
	       in->stats[CPROF_STAT_WALKS_LOST];
}

uint64_t summary__lost_samples(const struct summary_info *in)
{
	return summary_lost_samples(in);
}

uint64_t summary_lost_stacks(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_USER_COLLISION] + in->stats[CPROF_STAT_KERN_COLLISION] +
	       in->stats[CPROF_STAT_USER_STACK_ERR] + in->stats[CPROF_STAT_KERN_STACK_ERR] +
	       in->missing_stacks;
}

/* The reasons walks stopped before a root that occurred, most first (then in enum order). */
size_t summary_stops_by_count(const struct summary_info *in, uint32_t *out)
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
