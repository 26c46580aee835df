/* SPDX-License-Identifier: MIT */
/*
 * One interval's profiles, ready to send: a series (labels and a gzipped
 * pprof) per profiled program or process, and the interval's time range.
 * It is the unit that is uploaded, spooled to disk when the server is away,
 * and re-sent later, so it holds everything a request needs and nothing
 * that depends on the protocol chosen.
 */
#ifndef CPROF_BATCH_H
#define CPROF_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "deliver/labels.h"

#define BATCH_ID_LEN 36 /* a UUID in its text form */

struct batch_series {
	struct labels labels;
	uint8_t *profile; /* gzipped pprof */
	size_t profile_len;
	/*
	 * Fixed when the series is made, so a re-sent copy carries the same ID
	 * and a server that deduplicates (Pyroscope's RawSample.ID) can.
	 */
	char id[BATCH_ID_LEN + 1];
};

struct batch {
	uint64_t time_ns;     /* start of the interval, ns since the epoch */
	uint64_t duration_ns; /* its length */
	struct batch_series *series;
	size_t nseries;
	size_t done; /* series already accepted (the ingest API takes one per request) */
};

struct batch *batch__new(uint64_t time_ns, uint64_t duration_ns);
void batch__free(struct batch *b);
/*
 * Appends a series, taking ownership of labels' contents and of profile
 * (freed here on failure too). id NULL makes a new random one.
 */
int batch__add(struct batch *b, struct labels *labels, uint8_t *profile, size_t len,
	       const char *id);
/* Bytes of profile data and labels: what the batch costs in memory or on disk. */
size_t batch__size(const struct batch *b);

#endif
