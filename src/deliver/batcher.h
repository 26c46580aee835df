/* SPDX-License-Identifier: MIT */
/*
 * Turns a profile into the batch a server receives: one series for the
 * profiled program, or in whole-system mode one per process, so that a
 * server can tell processes, containers and units apart. Each series gets
 * its labels (defaults, then the process's, then the user's, which win) and
 * its own gzipped pprof. The cgroup of a process is read when it is first
 * seen and again when its series is made, so one that exits meanwhile
 * keeps its identity.
 */
#ifndef CPROF_BATCHER_H
#define CPROF_BATCHER_H

#include <stdbool.h>
#include <stdint.h>

struct batch;
struct batcher;
struct labels;
struct profile;

/* user may be NULL; per_process: a series per process (whole-system mode). */
int batcher__new(const char *service_name, const struct labels *user, bool per_process,
		 struct batcher **out);
void batcher__free(struct batcher *bt);
/* A process was first seen: remember its cgroup while it lives. */
void batcher__note_process(struct batcher *bt, uint32_t pid);
/* The batch for p; a profile without samples gives a batch without series. */
int batcher__make(struct batcher *bt, const struct profile *p, struct batch **out);

#endif
