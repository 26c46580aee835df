/* SPDX-License-Identifier: MIT */
/*
 * The pprof encoder: turns the profile model into an uncompressed
 * perftools.profiles.Profile message (github.com/google/pprof proto/profile.proto),
 * the format that go tool pprof, Parca, Pyroscope and Grafana read. Gzip it
 * with compress__gzip before writing it to a .pb.gz file.
 */
#ifndef CPROF_PPROF_H
#define CPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* On success *out is a malloc'ed buffer the caller frees; returns 0 or a negative errno. */
int pprof__encode(const struct profile *p, uint8_t **out, size_t *out_len);
/* The same, gzipped: what .pb.gz files hold and profiling servers take. */
int pprof__encode_gz(const struct profile *p, uint8_t **out, size_t *out_len);

#endif
