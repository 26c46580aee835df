// SPDX-License-Identifier: MIT
/* JIT frames named at a profile's end from maps that came late (see jit_late.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/u64map.h"
#include "resolve/jit_late.h"
#include "resolve/jvm_attach.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

/*
 * What reading the maps of processes that exited may cost a profile's end
 * (each map within perf_map.c's caps), and asking running JVMs for theirs:
 * -d must hold within a second. What is left is counted.
 */
#define EXIT_MAPS_BUDGET_NS (300 * 1000000ull)
#define JVM_ASK_BUDGET_NS   (1000 * 1000000ull)

/* Two processes share the frame (the same anonymous mapping and address): named by neither. */
#define SHARED_FRAME UINT32_MAX

struct jit_owner {
	struct perf_map_owner id;
	bool jvm; /* it maps libjvm.so */
};

/* An unnamed JIT frame, waiting for its owner's map. */
struct jit_pending {
	uint32_t owner; /* index in owners */
	uint32_t frame;
	uint64_t addr; /* looked up */
};

struct jit_late {
	struct jit_owner *owners;
	size_t nowners, owners_cap;
	struct jit_pending *pending;
	size_t npending, pending_cap;
	struct u64map *frames; /* frame id -> owner index + 1, or SHARED_FRAME */
};

struct jit_late *jit_late__new(void)
{
	return calloc(1, sizeof(struct jit_late));
}

void jit_late__free(struct jit_late *jl)
{
	if (!jl)
		return;
	free(jl->owners);
	free(jl->pending);
	u64map__free(jl->frames);
	free(jl);
}

uint32_t jit_late__add_owner(struct jit_late *jl, const struct perf_map_owner *id, bool jvm)
{
	struct jit_owner *v;

	if (jl->nowners == jl->owners_cap) {
		v = reallocarray(jl->owners, jl->owners_cap ? 2 * jl->owners_cap : 16, sizeof(*v));
		if (!v)
			return 0;
		jl->owners = v;
		jl->owners_cap = jl->owners_cap ? 2 * jl->owners_cap : 16;
	}
	jl->owners[jl->nowners++] = (struct jit_owner){.id = *id, .jvm = jvm};
	return (uint32_t)jl->nowners;
}

void jit_late__note(struct jit_late *jl, uint32_t owner, uint32_t frame, uint64_t addr)
{
	struct jit_pending *v;
	uint64_t had;

	if (!frame || !owner)
		return;
	if (!jl->frames && !(jl->frames = u64map__new()))
		return;
	if (u64map__get(jl->frames, frame, &had)) {
		if (had != owner)
			u64map__set(jl->frames, frame, SHARED_FRAME);
		return;
	}
	if (jl->npending == jl->pending_cap) {
		v = reallocarray(jl->pending, jl->pending_cap ? 2 * jl->pending_cap : 256,
				 sizeof(*v));
		if (!v)
			return;
		jl->pending = v;
		jl->pending_cap = jl->pending_cap ? 2 * jl->pending_cap : 256;
	}
	if (u64map__set(jl->frames, frame, owner))
		return;
	jl->pending[jl->npending++] = (struct jit_pending){owner - 1, frame, addr};
}

bool jit_late__any(const struct jit_late *jl)
{
	return jl && jl->npending;
}

static void count_refusal(struct jit_late_stats *st, enum proc_file_refusal why)
{
	if (why > PROC_FILE_OK && why < PROC_FILE_REFUSALS)
		st->refused[why]++;
}

/* Asks a running JVM to write its perf map, then reads it as any live one: NULL if none. */
static struct perf_map *jvm_map(const struct jit_owner *o, uint64_t deadline,
				struct jit_late_stats *st)
{
	struct perf_map_source src = {0};
	enum jvm_attach_failure why;
	struct perf_map *pm = NULL;
	int err;

	if (clock__mono_ns() >= deadline) {
		st->jvms_unasked++;
		return NULL;
	}
	st->jvms_asked++;
	err = jvm_attach__perf_map(o->id.pid, o->id.ns_pid, o->id.start_time, deadline, &why);
	if (err) {
		st->jvms_failed++;
		pr_debug("PID %u: the JVM was asked for its perf map: %s (%s)", o->id.pid,
			 jvm_attach__failure_name(why), strerror(-err));
		return NULL;
	}
	perf_map__reread(o->id.pid, o->id.ns_pid, &src, &pm);
	count_refusal(st, src.refused);
	if (src.stale)
		st->not_its++;
	return pm;
}

/* The map of o's process at a profile's end, if it exited (or is a JVM to ask): NULL if none. */
static struct perf_map *end_map(const struct jit_owner *o, bool ask_jvms, uint64_t t0,
				uint64_t *jvm_deadline, struct jit_late_stats *st)
{
	enum proc_file_refusal why;
	struct perf_map *pm = NULL;

	if (clock__mono_ns() - t0 > EXIT_MAPS_BUDGET_NS) {
		st->late++;
		return NULL;
	}
	switch (perf_map__read_exited(&o->id, &pm, &why)) {
	case PERF_MAP_EXIT_READ:
		st->maps_read++;
		break;
	case PERF_MAP_EXIT_ALIVE:
		if (!o->jvm || !ask_jvms)
			return NULL;
		if (!*jvm_deadline)
			*jvm_deadline = clock__mono_ns() + JVM_ASK_BUDGET_NS;
		pm = jvm_map(o, *jvm_deadline, st);
		break;
	case PERF_MAP_EXIT_OTHER_NS:
		st->other_ns++;
		break;
	case PERF_MAP_EXIT_NOT_ITS:
		st->not_its++;
		break;
	case PERF_MAP_EXIT_REFUSED:
		count_refusal(st, why);
		break;
	case PERF_MAP_EXIT_NONE:
		break;
	}
	if (pm) {
		st->bad_lines += perf_map__bad_lines(pm);
		st->capped += perf_map__capped(pm);
	}
	return pm;
}

static int by_owner(const void *a, const void *b)
{
	const struct jit_pending *x = a, *y = b;

	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

/* The name of p's frame in pm, if the frame is p's owner's alone. */
static const char *pending_name(const struct jit_late *jl, const struct jit_pending *p,
				const struct perf_map *pm)
{
	uint64_t who;

	if (!pm || !u64map__get(jl->frames, p->frame, &who) || who != p->owner + 1)
		return NULL;
	return perf_map__lookup(pm, p->addr);
}

int jit_late__name(struct jit_late *jl, bool ask_jvms, struct jit_late_stats *st, jit_late_fn fn,
		   void *ctx)
{
	uint64_t t0 = clock__mono_ns(), jvm_deadline = 0;
	struct perf_map *pm;
	size_t i, j;
	int err = 0;

	qsort(jl->pending, jl->npending, sizeof(*jl->pending), by_owner);
	for (i = 0; i < jl->npending; i = j) {
		pm = end_map(&jl->owners[jl->pending[i].owner], ask_jvms, t0, &jvm_deadline, st);
		for (j = i; j < jl->npending && jl->pending[j].owner == jl->pending[i].owner; j++)
			if (fn(ctx, jl->pending[j].frame, pending_name(jl, &jl->pending[j], pm)))
				err = -ENOMEM;
		perf_map__free(pm);
	}
	jl->npending = 0;
	jl->nowners = 0;
	u64map__free(jl->frames);
	jl->frames = NULL;
	return err;
}
