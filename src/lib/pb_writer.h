/* SPDX-License-Identifier: MIT */
/*
 * Protocol-buffer encoding primitives, after nanopb's pb_encode: a stream
 * whose sink may be NULL, in which case it only counts bytes. A submessage
 * is encoded twice with the same function, once to learn its length and once
 * to write it, so no message has to be built in memory first.
 *
 * Every function returns 0 or a negative errno. The first error sticks: once
 * a write has failed, every later call returns that same error, so a caller
 * may chain writes and check only the last result (or w->err).
 */
#ifndef CPROF_PB_WRITER_H
#define CPROF_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes all len bytes or none, returning 0 or a negative errno. */
typedef int (*pb_sink_fn)(void *ctx, const uint8_t *data, size_t len);

struct pb_writer {
	pb_sink_fn sink; /* NULL: count only */
	void *ctx;
	size_t bytes_written;
	size_t max_size; /* writing past it is an -EIO: a submessage outgrew its counted size */
	int err;	 /* first error, 0 if none */
};

/* A sink into a heap buffer that grows as needed; the caller frees data. */
struct pb_buffer {
	uint8_t *data;
	size_t len;
	size_t cap;
};

void pb_writer__init_counting(struct pb_writer *w);
/* Any sink: for instance a compressor (compress__gzip_write). */
void pb_writer__init_sink(struct pb_writer *w, pb_sink_fn sink, void *ctx);
void pb_writer__init_buffer(struct pb_writer *w, struct pb_buffer *buf);
void pb_buffer__free(struct pb_buffer *buf);

int pb_writer__raw(struct pb_writer *w, const void *data, size_t len);

/* Scalar fields, always written (omitting proto3 defaults is the caller's choice). */
int pb_writer__uint64(struct pb_writer *w, uint32_t field, uint64_t v);
int pb_writer__bool(struct pb_writer *w, uint32_t field, bool v);

int pb_writer__bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len);
int pb_writer__string(struct pb_writer *w, uint32_t field, const char *s);

/* Packed repeated varints; nothing at all is written for n == 0. */
int pb_writer__packed_uint64(struct pb_writer *w, uint32_t field, const uint64_t *v, size_t n);
int pb_writer__packed_uint32(struct pb_writer *w, uint32_t field, const uint32_t *v, size_t n);

/*
 * Writes a length-delimited submessage whose body encode(w, msg) produces.
 * encode runs twice and must write the same bytes both times; -EIO if not.
 */
typedef int (*pb_encode_fn)(struct pb_writer *w, const void *msg);
int pb_writer__submessage(struct pb_writer *w, uint32_t field, pb_encode_fn encode,
			  const void *msg);

#endif
