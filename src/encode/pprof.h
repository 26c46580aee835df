/* SPDX-License-Identifier: MIT */
/*
 * The pprof encoder: turns the profile model into a gzipped
 * perftools.profiles.Profile message (github.com/google/pprof proto/profile.proto),
 * the format that go tool pprof, Parca, Pyroscope and Grafana read.
 */
#ifndef CPROF_PPROF_H
#define CPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/*
 * Gzipped, as .pb.gz files hold it and profiling servers take it. On success
 * *out is a malloc'ed buffer the caller frees; returns 0 or a negative errno.
 */
int pprof__encode_gz(const struct profile *p, uint8_t **out, size_t *out_len);

#endif
