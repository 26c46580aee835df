// SPDX-License-Identifier: MIT
/*
 * Exact-byte tests of the protobuf primitives, nanopb style: every encoding
 * is also run through a counting writer, which must predict its exact size,
 * and a fixed sink is made to fail after each byte in turn.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/pb_writer.h"
#include "test.h"

/* Runs call (which uses `w`) counting, then writing; checks bytes and size. */
#define WRITES(call, lit)                                                 \
	do {                                                              \
		struct pb_writer w;                                       \
		struct pb_buffer b;                                       \
		size_t counted;                                           \
		pb_writer__init_counting(&w);                             \
		CHECK_INT(call, ==, 0);                                   \
		counted = w.bytes_written;                                \
		pb_writer__init_buffer(&w, &b);                           \
		CHECK_INT(call, ==, 0);                                   \
		CHECK_BYTES(b.data ? b.data : (uint8_t *)"", b.len, lit); \
		CHECK_U64(counted, ==, b.len);                            \
		CHECK_U64(w.bytes_written, ==, b.len);                    \
		pb_buffer__free(&b);                                      \
	} while (0)

TEST(pb_writer_varint)
{
	WRITES(pb_writer__uint64(&w, 1, 0), "\x08\x00");
	WRITES(pb_writer__uint64(&w, 1, 1), "\x08\x01");
	WRITES(pb_writer__uint64(&w, 1, 127), "\x08\x7f");
	WRITES(pb_writer__uint64(&w, 1, 128), "\x08\x80\x01");
	WRITES(pb_writer__uint64(&w, 1, 150), "\x08\x96\x01");
	WRITES(pb_writer__uint64(&w, 1, 16383), "\x08\xff\x7f");
	WRITES(pb_writer__uint64(&w, 1, 16384), "\x08\x80\x80\x01");
	WRITES(pb_writer__uint64(&w, 1, UINT32_MAX), "\x08\xff\xff\xff\xff\x0f");
	WRITES(pb_writer__uint64(&w, 1, 1ull << 32), "\x08\x80\x80\x80\x80\x10");
	WRITES(pb_writer__uint64(&w, 1, 1ull << 63),
	       "\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01");
	WRITES(pb_writer__uint64(&w, 1, UINT64_MAX),
	       "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
}

/* The length a packed field of the one element v is given: the varint size of v. */
static size_t packed_length(uint64_t v)
{
	struct pb_writer w;
	struct pb_buffer b;
	size_t n;

	pb_writer__init_buffer(&w, &b);
	CHECK_INT(pb_writer__packed_uint64(&w, 1, &v, 1), ==, 0);
	n = b.data[1];
	pb_buffer__free(&b);
	return n;
}

TEST(pb_writer_varint_size)
{
	CHECK_U64(packed_length(0), ==, 1);
	CHECK_U64(packed_length(127), ==, 1);
	CHECK_U64(packed_length(128), ==, 2);
	CHECK_U64(packed_length(16383), ==, 2);
	CHECK_U64(packed_length(16384), ==, 3);
	CHECK_U64(packed_length(1ull << 32), ==, 5);
	CHECK_U64(packed_length(1ull << 63), ==, 10);
	CHECK_U64(packed_length(UINT64_MAX), ==, 10);
}

/* The tags of the two wire types written: varint and length-delimited. */
TEST(pb_writer_tag)
{
	WRITES(pb_writer__uint64(&w, 1, 0), "\x08\x00");
	WRITES(pb_writer__bytes(&w, 2, NULL, 0), "\x12\x00");
	WRITES(pb_writer__uint64(&w, 15, 0), "\x78\x00");
	WRITES(pb_writer__uint64(&w, 16, 0), "\x80\x01\x00");
	WRITES(pb_writer__bytes(&w, 16, NULL, 0), "\x82\x01\x00");
	WRITES(pb_writer__uint64(&w, (1u << 29) - 1, 0), "\xf8\xff\xff\xff\x0f\x00");
}

TEST(pb_writer_bad_field_number)
{
	struct pb_writer w;

	pb_writer__init_counting(&w);
	CHECK_INT(pb_writer__uint64(&w, 0, 1), ==, -EINVAL);
	CHECK_U64(w.bytes_written, ==, 0);
	pb_writer__init_counting(&w);
	CHECK_INT(pb_writer__uint64(&w, 1u << 29, 1), ==, -EINVAL);
	CHECK_U64(w.bytes_written, ==, 0);
}

TEST(pb_writer_scalars)
{
	WRITES(pb_writer__uint64(&w, 1, 150), "\x08\x96\x01");
	WRITES(pb_writer__uint64(&w, 1, 0), "\x08\x00");
	WRITES(pb_writer__uint64(&w, 16, UINT64_MAX),
	       "\x80\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
	WRITES(pb_writer__bool(&w, 7, true), "\x38\x01");
	WRITES(pb_writer__bool(&w, 7, false), "\x38\x00");
}

TEST(pb_writer_strings_and_bytes)
{
	WRITES(pb_writer__string(&w, 2, "testing"), "\x12\x07testing");
	WRITES(pb_writer__string(&w, 6, ""), "\x32\x00");
	WRITES(pb_writer__string(&w, 6, NULL), "\x32\x00");
	WRITES(pb_writer__bytes(&w, 6, "\x00\xff", 2), "\x32\x02\x00\xff");
	WRITES(pb_writer__bytes(&w, 6, NULL, 0), "\x32\x00");
	WRITES(pb_writer__raw(&w, "abc", 3), "abc");
}

TEST(pb_writer_long_string_length_prefix)
{
	static char s[300];
	struct pb_writer w;
	struct pb_buffer b;

	memset(s, 'x', sizeof(s) - 1);
	pb_writer__init_buffer(&w, &b);
	CHECK_INT(pb_writer__string(&w, 1, s), ==, 0);
	CHECK_U64(b.len, ==, 1 + 2 + 299);
	CHECK_BYTES(b.data, 3, "\x0a\xab\x02");
	CHECK(memcmp(b.data + 3, s, 299) == 0);
	pb_buffer__free(&b);
}

TEST(pb_writer_packed)
{
	static const uint64_t v64[] = {3, 270, 86942};
	static const uint32_t v32[] = {3, 270, 86942};
	static const uint64_t big[] = {0, UINT64_MAX};

	/* The example of the protobuf encoding guide. */
	WRITES(pb_writer__packed_uint64(&w, 4, v64, 3), "\x22\x06\x03\x8e\x02\x9e\xa7\x05");
	WRITES(pb_writer__packed_uint32(&w, 4, v32, 3), "\x22\x06\x03\x8e\x02\x9e\xa7\x05");
	WRITES(pb_writer__packed_uint64(&w, 1, big, 2),
	       "\x0a\x0b\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
	WRITES(pb_writer__packed_uint64(&w, 1, v64, 1), "\x0a\x01\x03");
	/* An empty packed field is the default and is not written at all. */
	WRITES(pb_writer__packed_uint64(&w, 4, NULL, 0), "");
	WRITES(pb_writer__packed_uint32(&w, 4, NULL, 0), "");
}

static int encode_test3(struct pb_writer *w, const void *msg)
{
	return pb_writer__uint64(w, 1, *(const uint64_t *)msg);
}

struct inner {
	const char *s;
	uint64_t v[2];
};

static int encode_inner(struct pb_writer *w, const void *msg)
{
	const struct inner *in = msg;

	pb_writer__string(w, 2, in->s);
	return pb_writer__packed_uint64(w, 3, in->v, 2);
}

static int encode_outer(struct pb_writer *w, const void *msg)
{
	pb_writer__uint64(w, 1, 5);
	pb_writer__submessage(w, 2, encode_inner, msg);
	return pb_writer__uint64(w, 3, 6);
}

static int encode_nothing(struct pb_writer *w, const void *msg)
{
	(void)msg;
	return w->err;
}

TEST(pb_writer_submessage)
{
	static const uint64_t v150 = 150;
	static const struct inner in = {"hi", {1, 2}};

	/* Test3 of the protobuf encoding guide. */
	WRITES(pb_writer__submessage(&w, 3, encode_test3, &v150), "\x1a\x03\x08\x96\x01");
	WRITES(pb_writer__submessage(&w, 1, encode_nothing, NULL), "\x0a\x00");
	WRITES(pb_writer__submessage(&w, 1, encode_inner, &in),
	       "\x0a\x08\x12\x02hi\x1a\x02\x01\x02");
	WRITES(pb_writer__submessage(&w, 1, encode_outer, &in),
	       "\x0a\x0e\x08\x05\x12\x08\x12\x02hi\x1a\x02\x01\x02\x18\x06");
}

TEST(pb_writer_submessage_long)
{
	static char s[200];
	struct inner in = {s, {1, 2}};
	struct pb_writer w;
	struct pb_buffer b;

	/* A body of 128 bytes or more needs a two-byte length. */
	memset(s, 'y', sizeof(s) - 1);
	pb_writer__init_buffer(&w, &b);
	CHECK_INT(pb_writer__submessage(&w, 1, encode_inner, &in), ==, 0);
	CHECK_U64(b.len, ==, 1 + 2 + (1 + 2 + 199) + 4);
	CHECK_BYTES(b.data, 3, "\x0a\xce\x01");
	pb_buffer__free(&b);
}

/* Writes one byte more on every call: the two passes never agree. */
static int encode_growing(struct pb_writer *w, const void *msg)
{
	static int calls;
	int i;

	(void)msg;
	for (i = 0; i <= calls; i++)
		pb_writer__raw(w, "z", 1);
	calls++;
	return w->err;
}

/* Writes one byte less on every call, down to none. */
static int encode_shrinking(struct pb_writer *w, const void *msg)
{
	static int left = 8;
	int i;

	(void)msg;
	for (i = 0; i < left; i++)
		pb_writer__raw(w, "z", 1);
	if (left)
		left--;
	return w->err;
}

/* A sink into caller memory that fails with -ENOSPC rather than overflow it. */
struct fixed {
	uint8_t *data;
	size_t len;
	size_t size;
};

static int fixed_write(void *ctx, const uint8_t *data, size_t len)
{
	struct fixed *f = ctx;

	if (len > f->size - f->len)
		return -ENOSPC;
	memcpy(f->data + f->len, data, len);
	f->len += len;
	return 0;
}

static void init_fixed(struct pb_writer *w, struct fixed *f, uint8_t *data, size_t size)
{
	*f = (struct fixed){.data = data, .size = size};
	pb_writer__init_sink(w, fixed_write, f);
}

static int encode_failing(struct pb_writer *w, const void *msg)
{
	(void)msg;
	pb_writer__raw(w, "z", 1);
	return -EPERM;
}

TEST(pb_writer_submessage_size_mismatch)
{
	uint8_t mem[64];
	struct pb_writer w;
	struct fixed f;

	init_fixed(&w, &f, mem, sizeof(mem));
	CHECK_INT(pb_writer__submessage(&w, 1, encode_growing, NULL), ==, -EIO);
	/* Tag, the counted length 1, then at most the 1 counted byte: never the extra one. */
	CHECK_U64(f.len, <=, 3);
	CHECK_INT(w.err, ==, -EIO);
	CHECK_INT(pb_writer__uint64(&w, 1, 1), ==, -EIO);

	init_fixed(&w, &f, mem, sizeof(mem));
	CHECK_INT(pb_writer__submessage(&w, 1, encode_shrinking, NULL), ==, -EIO);
	CHECK_INT(w.err, ==, -EIO);

	init_fixed(&w, &f, mem, sizeof(mem));
	CHECK_INT(pb_writer__submessage(&w, 1, encode_failing, NULL), ==, -EPERM);
	CHECK_INT(pb_writer__uint64(&w, 1, 1), ==, -EPERM);
}

/* Exercises every primitive, nested submessages included. */
static int encode_everything(struct pb_writer *w, const void *msg)
{
	static const uint64_t v[] = {0, 1, 300, UINT64_MAX};
	static const struct inner in = {"nested", {128, 16384}};

	(void)msg;
	pb_writer__uint64(w, 1, 1ull << 40);
	pb_writer__uint64(w, 2, UINT64_MAX - 4);
	pb_writer__bytes(w, 3, "\x00\x01", 2);
	pb_writer__bool(w, 4, true);
	pb_writer__string(w, 5, "hello, world");
	pb_writer__packed_uint64(w, 6, v, 4);
	pb_writer__submessage(w, 7, encode_outer, &in);
	pb_writer__submessage(w, 20000, encode_inner, &in);
	return pb_writer__string(w, 8, "");
}

TEST(pb_writer_fixed_sink_fails_after_each_byte)
{
	struct pb_writer w;
	struct pb_buffer full;
	struct fixed f;
	size_t n, k, i;
	uint8_t *mem;

	pb_writer__init_buffer(&w, &full);
	CHECK_INT(encode_everything(&w, NULL), ==, 0);
	n = full.len;
	CHECK_U64(n, >, 40);

	for (k = 0; k <= n; k++) {
		/* Exactly k bytes so that ASan sees any overflow, then a guard zone. */
		mem = malloc(k + 16);
		CHECK(mem);
		memset(mem, 0xa5, k + 16);
		init_fixed(&w, &f, mem, k);
		if (k < n) {
			CHECK_INT(encode_everything(&w, NULL), ==, -ENOSPC);
			CHECK_INT(w.err, ==, -ENOSPC);
			CHECK_INT(pb_writer__uint64(&w, 1, 1), ==, -ENOSPC);
		} else {
			CHECK_INT(encode_everything(&w, NULL), ==, 0);
		}
		CHECK_U64(f.len, <=, k);
		CHECK_U64(w.bytes_written, ==, f.len);
		CHECK(memcmp(mem, full.data, f.len) == 0);
		for (i = k; i < k + 16; i++)
			CHECK_INT(mem[i], ==, 0xa5);
		free(mem);
	}
	pb_buffer__free(&full);
}

TEST(pb_writer_counting_matches_written)
{
	struct pb_writer w;
	struct pb_buffer b;
	size_t counted;

	pb_writer__init_counting(&w);
	CHECK_INT(encode_everything(&w, NULL), ==, 0);
	counted = w.bytes_written;
	pb_writer__init_buffer(&w, &b);
	CHECK_INT(encode_everything(&w, NULL), ==, 0);
	CHECK_U64(counted, ==, b.len);
	pb_buffer__free(&b);
}

TEST(pb_writer_buffer_grows)
{
	struct pb_writer w;
	struct pb_buffer b;
	uint64_t i;

	pb_writer__init_buffer(&w, &b);
	for (i = 0; i < 100000; i++)
		CHECK_INT(pb_writer__uint64(&w, 1, i), ==, 0);
	CHECK_U64(b.len, ==, w.bytes_written);
	CHECK_U64(b.len, <=, b.cap);
	/* Spot-check the last field: 99999 = 0x1869f. */
	CHECK_BYTES(b.data + b.len - 4, 4, "\x08\x9f\x8d\x06");
	pb_buffer__free(&b);
	pb_buffer__free(&b);
	pb_buffer__free(NULL);
}
