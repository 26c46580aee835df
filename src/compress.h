/* SPDX-License-Identifier: MIT */
/*
 * Gzip compression of an in-memory buffer: pprof files are conventionally
 * gzipped (.pb.gz), and every pprof reader accepts that form.
 */
#ifndef CPROF_COMPRESS_H
#define CPROF_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Compresses len bytes of in into a gzip member at zlib's default level 6.
 * On success *out is a malloc'ed buffer the caller frees; returns 0 or a negative errno.
 */
int compress__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len);

#endif
