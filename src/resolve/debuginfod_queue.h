/* SPDX-License-Identifier: MIT */
/*
 * Debug files fetched off the sampling path: the symbolizer asks for a
 * build ID when it opens a stripped file, worker threads fetch it with the
 * debuginfod client (debuginfod.h) while sampling goes on, and the
 * symbolizer picks the files up as they arrive, or waits for them, within
 * a deadline, when a profile is finished. A build ID is fetched once per
 * run, however many files and processes ask for it.
 */
#ifndef CPROF_DEBUGINFOD_QUEUE_H
#define CPROF_DEBUGINFOD_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "resolve/debuginfod.h"

/* Downloads at once: a whole-system profile asks for tens of files, each a few MB. */
#define DEBUGINFOD_QUEUE_THREADS 2

struct debuginfod_queue;

/* Workers for client d, which must outlive the queue. 0, or a negative errno. */
int debuginfod_queue__new(const struct debuginfod *d, struct debuginfod_queue **out);
/*
 * Ends the workers: requests not begun are dropped, those under way are
 * waited for (trigger the client's cancel token first to end them at once).
 */
void debuginfod_queue__free(struct debuginfod_queue *q);

/*
 * Asks for the debug file of a build ID (lowercase hex). *ticket names the
 * request; the same build ID asked again gets the same one. 0 or -ENOMEM.
 */
int debuginfod_queue__request(struct debuginfod_queue *q, const char *build_id, uint32_t *ticket);
/*
 * A request's outcome: 1 with *path (valid as long as the queue) when its
 * file is there, 0 while it is queued or under way, -1 when it failed.
 */
int debuginfod_queue__result(struct debuginfod_queue *q, uint32_t ticket, const char **path);
/* How many requests have ended: when it changes, there are results to pick up. */
uint64_t debuginfod_queue__ended(struct debuginfod_queue *q);
/*
 * Waits until every request has ended, or until deadline_ns
 * (CLOCK_MONOTONIC). True when none is left.
 */
bool debuginfod_queue__wait(struct debuginfod_queue *q, uint64_t deadline_ns);

struct debuginfod_counts {
	uint64_t status[DEBUGINFOD_NSTATUS]; /* ended requests, by outcome */
	uint64_t unfinished;		     /* queued or under way */
	struct debuginfod_budget spent;	     /* the client's run: bytes, files pruned */
};

void debuginfod_queue__counts(struct debuginfod_queue *q, struct debuginfod_counts *out);

#endif
