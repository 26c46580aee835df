/* SPDX-License-Identifier: MIT */
/*
 * Parca's ingestion call, ProfileStoreService/WriteRaw, as the body of a
 * gRPC-Web request. Field numbers are those of Parca's
 * proto/parca/profilestore/v1alpha1/profilestore.proto.
 */
#ifndef CPROF_PARCA_H
#define CPROF_PARCA_H

#include <stddef.h>
#include <stdint.h>

struct batch;

#define PARCA_WRITE_RAW_PATH "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"

/*
 * A gRPC-Web data frame holding a WriteRawRequest with series
 * [b->done, b->nseries) of b, or no series at all when b is NULL (a probe).
 * Caller frees *out.
 */
int parca__write_raw(const struct batch *b, uint8_t **out, size_t *len);

#endif
