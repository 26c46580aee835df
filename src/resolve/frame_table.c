// SPDX-License-Identifier: MIT
/*
 * One generation's answers (see frame_table.h). An id is an index + 1 in
 * an array of records; a hash of each record's content finds an equal one.
 * Names are demangled for display (demangle.h); the raw name stays the
 * frame's system_name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/strpool.h"
#include "lib/u64map.h"
#include "resolve/demangle.h"
#include "resolve/frame_table.h"

/*
 * Records by id (index + 1). Equal ones share an id, found by a hash of
 * their content; the index only saves copies, so a collision or a failure
 * to index just makes another id.
 */
struct records {
	char *arr;
	size_t n, cap, size;
	struct u64map *index; /* content hash -> id */
};

typedef bool (*records_eq_fn)(const void *a, const void *b);

/* What one generation handed out: frames and modules, their names interned. */
struct frame_table {
	struct strpool *strings;
	struct u64map *display; /* interned raw name -> interned demangled name */
	struct records frames;	/* struct symbolizer_frame */
	struct records modules; /* struct symbolizer_module */
	struct frame_table_kernel kernel;
	struct symbolizer_inline *inlines; /* of all frames: symbolizer_frame.inline_first */
	size_t ninlines, inlines_cap;
};

void frame_table__free(struct frame_table *t)
{
	if (!t)
		return;
	free(t->inlines);
	strpool__free(t->strings);
	u64map__free(t->display);
	free(t->frames.arr);
	u64map__free(t->frames.index);
	free(t->modules.arr);
	u64map__free(t->modules.index);
	u64map__free(t->kernel.ids[0]);
	u64map__free(t->kernel.ids[1]);
	free(t);
}

struct frame_table *frame_table__new(void)
{
	struct frame_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->strings = strpool__new();
	t->display = u64map__new();
	t->frames =
		(struct records){.size = sizeof(struct symbolizer_frame), .index = u64map__new()};
	t->modules =
		(struct records){.size = sizeof(struct symbolizer_module), .index = u64map__new()};
	t->kernel.ids[0] = u64map__new();
	t->kernel.ids[1] = u64map__new();
	if (!t->strings || !t->display || !t->frames.index || !t->modules.index ||
	    !t->kernel.ids[0] || !t->kernel.ids[1]) {
		frame_table__free(t);
		return NULL;
	}
	return t;
}

/*
 * Length of name without its symbol version: a debug file's .symtab names
 * versioned definitions "clock_gettime@@GLIBC_2.17", which reads as a
 * different function from the "clock_gettime" of .dynsym.
 */
static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at > name ? (size_t)(at - name) : strlen(name);
}

const char *frame_table__intern(struct frame_table *t, const char *str)
{
	long id = strpool__add(t->strings, str);

	return id < 0 ? NULL : strpool__str(t->strings, (size_t)id);
}

/* The name to show for an interned raw name: demangled once, then remembered. */
const char *frame_table__display_name(struct frame_table *t, const char *raw)
{
	char plain[4096], buf[4096];
	const char *shown = raw, *name = raw;
	size_t len = unversioned_len(raw);
	uint64_t v;

	if (u64map__get(t->display, (uintptr_t)raw, &v))
		return (const char *)(uintptr_t)v;
	if (len < sizeof(plain) && raw[len]) {
		memcpy(plain, raw, len);
		plain[len] = '\0';
		shown = frame_table__intern(t, plain);
		name = plain;
	}
	if (shown && demangle__name(name, buf, sizeof(buf)))
		shown = frame_table__intern(t, buf);
	if (!shown || u64map__set(t->display, (uintptr_t)raw, (uintptr_t)shown))
		return NULL;
	return shown;
}

static void *records__get(const struct records *r, uint32_t id)
{
	return id && id <= r->n ? r->arr + (id - 1) * r->size : NULL;
}

/* The id of rec (hash: of its content): an equal record's, or its own added; 0 if out of memory. */
static uint32_t records__id(struct records *r, const void *rec, uint64_t hash, records_eq_fn eq)
{
	size_t cap = r->cap ? 2 * r->cap : 256;
	uint64_t v;
	char *arr;

	if (u64map__get(r->index, hash, &v) && eq(records__get(r, (uint32_t)v), rec))
		return (uint32_t)v;
	if (r->n >= UINT32_MAX - 1)
		return 0;
	if (r->n == r->cap) {
		arr = reallocarray(r->arr, cap, r->size);
		if (!arr)
			return 0;
		r->arr = arr;
		r->cap = cap;
	}
	memcpy(r->arr + r->n++ * r->size, rec, r->size);
	u64map__set(r->index, hash, r->n);
	return (uint32_t)r->n;
}

static uint64_t frame_hash(const struct symbolizer_frame *f)
{
	uint64_t h = hash_u64(f->address ^ (uint64_t)f->module << 32);

	h = hash_u64(h ^ (uintptr_t)f->name);
	h = hash_u64(h ^ (uintptr_t)f->system_name);
	return hash_u64(h ^ (f->kernel | f->unknown << 1 | f->waiting << 2 | f->kind << 3));
}

static bool frame_eq(const void *x, const void *y)
{
	const struct symbolizer_frame *a = x, *b = y;

	return a->address == b->address && a->module == b->module && a->name == b->name &&
	       a->system_name == b->system_name && a->kernel == b->kernel &&
	       a->unknown == b->unknown && a->waiting == b->waiting && a->kind == b->kind;
}

static uint64_t module_hash(const struct symbolizer_module *m)
{
	uint64_t h = hash_u64(m->start ^ hash_u64(m->limit));

	h = hash_u64(h ^ m->offset);
	h = hash_u64(h ^ (uintptr_t)m->path);
	return hash_u64(h ^ (uintptr_t)m->build_id ^ m->kernel);
}

static bool module_eq(const void *x, const void *y)
{
	const struct symbolizer_module *a = x, *b = y;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->path == b->path && a->build_id == b->build_id && a->kernel == b->kernel;
}

/* The id of a module whose names are interned; 0 if out of memory. */
uint32_t frame_table__add_module(struct frame_table *t, const struct symbolizer_module *m)
{
	return records__id(&t->modules, m, module_hash(m), module_eq);
}

/* The id of frame f, named f.name (raw, not interned yet); 0 if out of memory. */
uint32_t frame_table__add(struct frame_table *t, struct symbolizer_frame f)
{
	f.system_name = frame_table__intern(t, f.name);
	if (!f.system_name)
		return 0;
	f.name = f.unknown ? f.system_name : frame_table__display_name(t, f.system_name);
	if (!f.name)
		return 0;
	return records__id(&t->frames, &f, frame_hash(&f), frame_eq);
}

uint32_t frame_table__add_frame(struct frame_table *t, uint32_t module, uint64_t addr,
				const char *name, bool kernel, enum frame_kind kind)
{
	return frame_table__add(t, (struct symbolizer_frame){
					   .module = module,
					   .address = addr,
					   .name = name,
					   .kernel = kernel,
					   .unknown = !frame_kind__named(kind),
					   .kind = kind,
				   });
}

enum frame_kind frame_table__named_kind(const struct frame_table *t, uint32_t module)
{
	const struct symbolizer_module *mod = records__get(&t->modules, module);
	const char *path = mod && mod->path ? mod->path : "";

	return !*path || !strncmp(path, "[anon", 5) || !strncmp(path, "/memfd:", 7) ? FRAME_JIT
										    : FRAME_CODE;
}

struct symbolizer_frame *frame_table__frame(const struct frame_table *t, uint32_t id)
{
	return records__get(&t->frames, id);
}

const struct symbolizer_module *frame_table__module(const struct frame_table *t, uint32_t id)
{
	return records__get(&t->modules, id);
}

struct frame_table_kernel *frame_table__kernel(struct frame_table *t)
{
	return &t->kernel;
}

int frame_table__add_inlines(struct frame_table *t, uint32_t n, struct symbolizer_inline **out,
			     uint32_t *first)
{
	size_t cap = t->inlines_cap ? t->inlines_cap : 256;
	struct symbolizer_inline *v;

	if (t->ninlines + n > UINT32_MAX)
		return -E2BIG;
	while (cap < t->ninlines + n)
		cap *= 2;
	if (cap > t->inlines_cap) {
		v = reallocarray(t->inlines, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->inlines = v;
		t->inlines_cap = cap;
	}
	*out = &t->inlines[t->ninlines];
	*first = (uint32_t)t->ninlines;
	t->ninlines += n;
	return 0;
}

const struct symbolizer_inline *frame_table__inlines(const struct frame_table *t,
						     const struct symbolizer_frame *f)
{
	return f->ninlines ? &t->inlines[f->inline_first] : NULL;
}
