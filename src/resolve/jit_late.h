/* SPDX-License-Identifier: MIT */
#ifndef CPROF_RESOLVE_JIT_LATE_H
#define CPROF_RESOLVE_JIT_LATE_H

/*
 * JIT frames no perf map named while their process was read, named when the
 * profile is finished: from the map the process left when it exited
 * (runtimes such as the JVM with -XX:+DumpPerfMapAtExit write it then), or
 * that a running JVM wrote when asked (--jvm-perf-map). The owners and
 * frames noted go with each profile.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lib/proc_file.h"
#include "resolve/perf_map.h"

struct jit_late;

/* What the end's reads did, added to by jit_late__name. */
struct jit_late_stats {
	uint64_t maps_read; /* maps of processes that exited, read */
	uint64_t other_ns;  /* not read: it lived in another mount namespace or root */
	uint64_t late;	    /* not read: the end's time for maps was spent */
	uint64_t not_its;   /* refused: older than the process, or its PID's next one's */
	uint64_t refused[PROC_FILE_REFUSALS]; /* refused by lib/proc_file.h's rule */
	uint64_t bad_lines, capped;	      /* of the maps read, as for live ones */
	uint64_t jvms_asked, jvms_failed, jvms_unasked;
};

/*
 * Called once for each frame noted, with its name from its owner's map, or
 * NULL: no map, no line for it, or two processes share the frame. Nonzero
 * when it could not take the name (out of memory).
 */
typedef int (*jit_late_fn)(void *ctx, uint32_t frame, const char *name);

struct jit_late *jit_late__new(void);
void jit_late__free(struct jit_late *jl);
/* A process among this profile's owners: its index + 1, 0 without memory. */
uint32_t jit_late__add_owner(struct jit_late *jl, const struct perf_map_owner *id, bool jvm);
/* Frame at addr (as looked up) of owner's JIT code, to be named at the end. */
void jit_late__note(struct jit_late *jl, uint32_t owner, uint32_t frame, uint64_t addr);
bool jit_late__any(const struct jit_late *jl);
/*
 * Reads each owner's map (asking JVMs for theirs when ask_jvms), one at a
 * time within the end's time, hands fn every frame noted, then forgets the
 * profile's owners and frames. 0, or -ENOMEM if fn failed for some.
 */
int jit_late__name(struct jit_late *jl, bool ask_jvms, struct jit_late_stats *st, jit_late_fn fn,
		   void *ctx);

#endif
