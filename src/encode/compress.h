/* SPDX-License-Identifier: MIT */
/*
 * Gzip compression: pprof files are conventionally gzipped (.pb.gz), and
 * every pprof reader accepts that form. A stream compresses what is written
 * to it as it comes, so a profile is encoded straight into its gzip form and
 * its uncompressed encoding (several times larger) is never held whole.
 * And back (cprof -i), where the gzip file is outside input: its unpacked
 * size is capped by the caller, so a gzip bomb is refused, not swallowed.
 */
#ifndef CPROF_COMPRESS_H
#define CPROF_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

struct gzip_stream;

/* A gzip member at zlib's default level 6 into a buffer that grows as needed. */
int compress__gzip_begin(struct gzip_stream **out);
/* Adds len bytes; the signature of a pb_writer sink (ctx is the stream). */
int compress__gzip_write(void *ctx, const uint8_t *data, size_t len);
/* Ends the member: *out is a malloc'ed buffer the caller frees. Frees gz either way. */
int compress__gzip_end(struct gzip_stream *gz, uint8_t **out, size_t *out_len);
/* Abandons a stream (NULL-safe). */
void compress__gzip_free(struct gzip_stream *gz);

/*
 * Unpacks gzip data, every member of it as gzip -d does, into a malloc'ed
 * buffer (*out, one byte to spare) of at most max bytes. 0; -EFBIG as soon
 * as the output would pass max; -EBADMSG for data that is not gzip, is cut
 * short or has bytes after its last member (*why says which); -ENOMEM.
 */
int compress__gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len,
		     const char **why);

#endif
