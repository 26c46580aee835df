// SPDX-License-Identifier: MIT
/*
 * The symbolizer's answers of one generation (one profile's): frames and
 * modules by id, equal ones sharing an id, their names interned and
 * demangled once. symbolizer__finish ends a generation; the next request
 * begins a new table (begin_request).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/strpool.h"
#include "lib/u64map.h"
#include "resolve/demangle.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_state.h"

void table__free(struct frame_table *t)
{
	if (!t)
		return;
	strpool__free(t->strings);
	u64map__free(t->display);
	free(t->frames.arr);
	u64map__free(t->frames.index);
	free(t->modules.arr);
	u64map__free(t->modules.index);
	u64map__free(t->kframes[0]);
	u64map__free(t->kframes[1]);
	free(t);
}

struct frame_table *table__new(void)
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
	t->kframes[0] = u64map__new();
	t->kframes[1] = u64map__new();
	if (!t->strings || !t->display || !t->frames.index || !t->modules.index || !t->kframes[0] ||
	    !t->kframes[1]) {
		table__free(t);
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

const char *intern(struct symbolizer *s, const char *str)
{
	long id = strpool__add(s->t->strings, str);

	return id < 0 ? NULL : strpool__str(s->t->strings, (size_t)id);
}

/* The name to show for an interned raw name: demangled once, then remembered. */
const char *display_name(struct symbolizer *s, const char *raw)
{
	char plain[4096], buf[4096];
	const char *shown = raw, *name = raw;
	size_t len = unversioned_len(raw);
	uint64_t v;

	if (u64map__get(s->t->display, (uintptr_t)raw, &v))
		return (const char *)(uintptr_t)v;
	if (len < sizeof(plain) && raw[len]) {
		memcpy(plain, raw, len);
		plain[len] = '\0';
		shown = intern(s, plain);
		name = plain;
	}
	if (shown && demangle__name(name, buf, sizeof(buf)))
		shown = intern(s, buf);
	if (!shown || u64map__set(s->t->display, (uintptr_t)raw, (uintptr_t)shown))
		return NULL;
	return shown;
}

void *records__get(const struct records *r, uint32_t id)
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
	return hash_u64(h ^ (f->kernel | f->unknown << 1 | f->waiting << 2));
}

static bool frame_eq(const void *x, const void *y)
{
	const struct symbolizer_frame *a = x, *b = y;

	return a->address == b->address && a->module == b->module && a->name == b->name &&
	       a->system_name == b->system_name && a->kernel == b->kernel &&
	       a->unknown == b->unknown && a->waiting == b->waiting;
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
uint32_t module_id(struct symbolizer *s, const struct symbolizer_module *m)
{
	return records__id(&s->t->modules, m, module_hash(m), module_eq);
}

/* The id of frame f, named f.name (raw, not interned yet); 0 if out of memory. */
uint32_t add_answer(struct symbolizer *s, struct symbolizer_frame f)
{
	f.system_name = intern(s, f.name);
	if (!f.system_name)
		return 0;
	f.name = f.unknown ? f.system_name : display_name(s, f.system_name);
	if (!f.name)
		return 0;
	return records__id(&s->t->frames, &f, frame_hash(&f), frame_eq);
}

uint32_t add_frame(struct symbolizer *s, uint32_t module, uint64_t addr, const char *name,
		   bool kernel, bool unknown)
{
	return add_answer(s, (struct symbolizer_frame){
				     .module = module,
				     .address = addr,
				     .name = name,
				     .kernel = kernel,
				     .unknown = unknown,
			     });
}

/* A request for frames after symbolizer__finish begins the next generation (see symbolizer.h). */
int begin_request(struct symbolizer *s)
{
	struct frame_table *t;

	if (!s->ended)
		return 0;
	t = table__new();
	if (!t)
		return -ENOMEM;
	table__free(s->t);
	s->t = t;
	s->generation++;
	s->ended = false;
	return 0;
}

uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel)
{
	return begin_request(s) ? 0 : add_frame(s, 0, 0, what, kernel != 0, true);
}

const struct symbolizer_frame *symbolizer__frame(const struct symbolizer *s, uint32_t id)
{
	return records__get(&s->t->frames, id);
}

const struct symbolizer_module *symbolizer__module(const struct symbolizer *s, uint32_t id)
{
	return records__get(&s->t->modules, id);
}

uint32_t symbolizer__generation(const struct symbolizer *s)
{
	return s->generation;
}
