/* SPDX-License-Identifier: MIT */
/*
 * Grafana Pyroscope's ingestion APIs: PusherService/Push, sent as a Connect
 * unary call (the protobuf message is the whole body, no envelope), with
 * field numbers from Pyroscope's api/push/v1/push.proto and
 * api/types/v1/types.proto; and the legacy POST /ingest of older servers,
 * which takes one pprof per request and its labels in the query string.
 */
#ifndef CPROF_PYROSCOPE_H
#define CPROF_PYROSCOPE_H

#include <stddef.h>
#include <stdint.h>

struct batch;

#define PYROSCOPE_PUSH_PATH   "/push.v1.PusherService/Push"
#define PYROSCOPE_INGEST_PATH "/ingest"

/* A PushRequest with series [b->done, b->nseries), or none when b is NULL (a probe). */
int pyroscope__push(const struct batch *b, uint8_t **out, size_t *len);

/*
 * The request target of /ingest for series i of b, under base_path:
 * name=SERVICE{label=value,...}, from and until in UNIX seconds,
 * format=pprof. Characters the ingest key syntax cannot carry become '_'.
 * Caller frees *out.
 */
int pyroscope__ingest_target(const char *base_path, const struct batch *b, size_t i, char **out);

#endif
