// SPDX-License-Identifier: MIT
/*
 * Protocol-buffer encoding primitives; see pb_writer.h. Written after
 * nanopb's pb_encode.c, which shows that a counting pass is cheaper and
 * simpler than building messages in memory or back-patching lengths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "pb"
#include "lib/pb_writer.h"
#include "lib/log.h"

#define MAX_VARINT_SIZE 10
#define MAX_FIELD	((1u << 29) - 1)
#define MIN_BUFFER	256

/* The wire types of the fields written here. */
enum wire_type {
	WT_VARINT = 0,
	WT_LEN = 2,
};

static int buffer_write(void *ctx, const uint8_t *data, size_t len)
{
	struct pb_buffer *b = ctx;

	if (len > b->cap - b->len) {
		size_t n = b->cap ? b->cap : MIN_BUFFER;
		uint8_t *d;

		while (n - b->len < len) {
			if (n > SIZE_MAX / 2)
				return -ENOMEM;
			n *= 2;
		}
		d = realloc(b->data, n);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->cap = n;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

void pb_writer__init_counting(struct pb_writer *w)
{
	*w = (struct pb_writer){.max_size = SIZE_MAX};
}

void pb_writer__init_sink(struct pb_writer *w, pb_sink_fn sink, void *ctx)
{
	*w = (struct pb_writer){.sink = sink, .ctx = ctx, .max_size = SIZE_MAX};
}

void pb_writer__init_buffer(struct pb_writer *w, struct pb_buffer *buf)
{
	*buf = (struct pb_buffer){0};
	*w = (struct pb_writer){.sink = buffer_write, .ctx = buf, .max_size = SIZE_MAX};
}

void pb_buffer__free(struct pb_buffer *buf)
{
	if (!buf)
		return;
	free(buf->data);
	*buf = (struct pb_buffer){0};
}

static int fail(struct pb_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int pb_writer__raw(struct pb_writer *w, const void *data, size_t len)
{
	int err;

	if (w->err)
		return w->err;
	if (len > w->max_size - w->bytes_written) {
		pr_err("write of %zu bytes at %zu overruns the %zu bytes counted for a submessage",
		       len, w->bytes_written, w->max_size);
		return fail(w, -EIO);
	}
	if (w->sink && len) {
		err = w->sink(w->ctx, data, len);
		if (err)
			return fail(w, err < 0 ? err : -EIO);
	}
	w->bytes_written += len;
	return 0;
}

static int put_varint(struct pb_writer *w, uint64_t v)
{
	uint8_t buf[MAX_VARINT_SIZE];
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return pb_writer__raw(w, buf, n);
}

static int put_tag(struct pb_writer *w, uint32_t field, enum wire_type wt)
{
	if (w->err)
		return w->err;
	if (!field || field > MAX_FIELD) {
		pr_err("invalid field number %u", field);
		return fail(w, -EINVAL);
	}
	return put_varint(w, (uint64_t)field << 3 | wt);
}

int pb_writer__uint64(struct pb_writer *w, uint32_t field, uint64_t v)
{
	put_tag(w, field, WT_VARINT);
	return put_varint(w, v);
}

int pb_writer__bool(struct pb_writer *w, uint32_t field, bool v)
{
	return pb_writer__uint64(w, field, v ? 1 : 0);
}

int pb_writer__bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len)
{
	put_tag(w, field, WT_LEN);
	put_varint(w, len);
	return pb_writer__raw(w, data, len);
}

int pb_writer__string(struct pb_writer *w, uint32_t field, const char *s)
{
	if (!s)
		s = "";
	return pb_writer__bytes(w, field, s, strlen(s));
}

/* Element i of an array of unsigned integers of `width` bytes (4 or 8). */
static uint64_t element(const void *v, size_t i, size_t width)
{
	return width == 4 ? ((const uint32_t *)v)[i] : ((const uint64_t *)v)[i];
}

static int packed(struct pb_writer *w, uint32_t field, const void *v, size_t n, size_t width)
{
	size_t i, size = 0;

	if (!n)
		return w->err;
	for (i = 0; i < n; i++)
		size += varint_size(element(v, i, width));
	put_tag(w, field, WT_LEN);
	put_varint(w, size);
	for (i = 0; i < n && !w->err; i++)
		put_varint(w, element(v, i, width));
	return w->err;
}

int pb_writer__packed_uint64(struct pb_writer *w, uint32_t field, const uint64_t *v, size_t n)
{
	return packed(w, field, v, n, sizeof(*v));
}

int pb_writer__packed_uint32(struct pb_writer *w, uint32_t field, const uint32_t *v, size_t n)
{
	return packed(w, field, v, n, sizeof(*v));
}

int pb_writer__submessage(struct pb_writer *w, uint32_t field, pb_encode_fn encode, const void *msg)
{
	struct pb_writer sub;
	size_t size;
	int err;

	if (w->err)
		return w->err;
	pb_writer__init_counting(&sub);
	err = encode(&sub, msg);
	if (err || sub.err)
		return fail(w, err ? err : sub.err);
	size = sub.bytes_written;

	put_tag(w, field, WT_LEN);
	err = put_varint(w, size);
	if (err)
		return err;
	if (!w->sink)
		return pb_writer__raw(w, NULL, size);
	if (size > w->max_size - w->bytes_written)
		return pb_writer__raw(w, NULL, size); /* reports the overrun */

	sub = (struct pb_writer){.sink = w->sink, .ctx = w->ctx, .max_size = size};
	err = encode(&sub, msg);
	w->bytes_written += sub.bytes_written;
	if (!err)
		err = sub.err;
	if (!err && sub.bytes_written != size) {
		pr_err("submessage field %u: counted %zu bytes but wrote %zu", field, size,
		       sub.bytes_written);
		err = -EIO;
	}
	return err ? fail(w, err) : 0;
}
