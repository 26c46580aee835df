/* SPDX-License-Identifier: MIT */
/*
 * What the symbolizer handed out in one generation (one profile's): frames
 * and modules by id, equal ones sharing an id, their names interned and
 * demangled once. The symbolizer starts a new table for each generation
 * (symbolizer__finish ends one), so a long run does not grow, and the
 * caches that hold ids go with the table.
 */
#ifndef CPROF_FRAME_TABLE_H
#define CPROF_FRAME_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "resolve/symbolizer_frame.h"

struct frame_table;
struct u64map;

/* The generation's kernel module id (0 until added) and its kernel frames by address. */
struct frame_table_kernel {
	uint32_t module;
	struct u64map *ids[2]; /* [leaf] address -> frame id */
};

/* NULL if out of memory. */
struct frame_table *frame_table__new(void);
void frame_table__free(struct frame_table *t);
/* A copy of str kept as long as t, equal strings at one address; NULL if out of memory. */
const char *frame_table__intern(struct frame_table *t, const char *str);
/* The name to show for an interned raw name (no symbol version, demangled); NULL: no memory. */
const char *frame_table__display_name(struct frame_table *t, const char *raw);
/* The id of a module whose names are interned; 0 if out of memory. */
uint32_t frame_table__add_module(struct frame_table *t, const struct symbolizer_module *m);
/* The id of frame f, named f.name (raw, not interned yet); 0 if out of memory. */
uint32_t frame_table__add(struct frame_table *t, struct symbolizer_frame f);
/* frame_table__add of a frame with these fields, the others zero. */
uint32_t frame_table__add_frame(struct frame_table *t, uint32_t module, uint64_t addr,
				const char *name, bool kernel, enum frame_kind kind);
/*
 * The kind of user code a name was found for in module: JIT in memory that
 * is no file's or a memfd (a perf map names most of it), as the flame graph
 * has always drawn it; else code.
 */
enum frame_kind frame_table__named_kind(const struct frame_table *t, uint32_t module);
/*
 * What an id stands for, NULL if no such id. A frame may be named in place
 * (waiting frames, source lines), with names frame_table__intern gave.
 */
struct symbolizer_frame *frame_table__frame(const struct frame_table *t, uint32_t id);
const struct symbolizer_module *frame_table__module(const struct frame_table *t, uint32_t id);
struct frame_table_kernel *frame_table__kernel(struct frame_table *t);
/*
 * Room for n inlined functions of one frame, at *out (valid until the next
 * call) and *first (for symbolizer_frame.inline_first); -ENOMEM, -E2BIG.
 */
int frame_table__add_inlines(struct frame_table *t, uint32_t n, struct symbolizer_inline **out,
			     uint32_t *first);
/* f's inlined functions, f->ninlines of them, innermost first; NULL if none. */
const struct symbolizer_inline *frame_table__inlines(const struct frame_table *t,
						     const struct symbolizer_frame *f);

#endif
