// SPDX-License-Identifier: MIT
/*
 * Gzip through zlib's deflate with the gzip wrapper; see compress.h. Writes
 * are gathered in an input buffer first: a pb_writer hands over a few bytes
 * at a time, and a deflate call per varint would cost more than the data.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LOG_MODULE "compress"
#include "encode/compress.h"
#include "lib/log.h"

/*
 * zlib's fastest level, as Go's runtime/pprof writes its profiles: on a
 * profile of 4,000 distinct stacks (230 KB of protobuf) 1.6 ms instead of
 * level 6's 8.3 ms, for a file a third larger (43 KB against 33 KB).
 */
#define GZIP_LEVEL 1
/* 15 is the largest window; adding 16 asks zlib for a gzip header instead of a zlib one. */
#define GZIP_WINDOW_BITS (15 + 16)
#define MEM_LEVEL	 8
#define INPUT_BUFFER	 (64 * 1024)
#define MIN_OUTPUT	 (16 * 1024)

struct gzip_stream {
	z_stream zs;
	uint8_t in[INPUT_BUFFER];
	size_t in_len;
	uint8_t *out;
	size_t cap;
};

static int zerr(int ret)
{
	return ret == Z_MEM_ERROR ? -ENOMEM : -EIO;
}

int compress__gzip_begin(struct gzip_stream **out)
{
	struct gzip_stream *gz = calloc(1, sizeof(*gz));
	int ret;

	*out = NULL;
	if (!gz)
		return -ENOMEM;
	ret = deflateInit2(&gz->zs, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW_BITS, MEM_LEVEL,
			   Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		pr_err("deflateInit2: %s", gz->zs.msg ? gz->zs.msg : zError(ret));
		free(gz);
		return zerr(ret);
	}
	*out = gz;
	return 0;
}

/* Compresses the input buffer (and with Z_FINISH, ends the member), growing the output. */
static int deflate_input(struct gzip_stream *gz, int flush)
{
	uint8_t *b;
	int ret;

	gz->zs.next_in = gz->in;
	gz->zs.avail_in = (uInt)gz->in_len;
	for (;;) {
		if (gz->zs.total_out == gz->cap) {
			size_t cap = gz->cap ? gz->cap * 2 : MIN_OUTPUT;

			b = cap > gz->cap ? realloc(gz->out, cap) : NULL;
			if (!b)
				return -ENOMEM;
			gz->out = b;
			gz->cap = cap;
		}
		gz->zs.next_out = gz->out + gz->zs.total_out;
		/* avail_out is 32 bits wide: a larger buffer is filled in pieces. */
		gz->zs.avail_out = gz->cap - gz->zs.total_out > UINT_MAX
					   ? UINT_MAX
					   : (uInt)(gz->cap - gz->zs.total_out);
		ret = deflate(&gz->zs, flush);
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			pr_err("deflate: %s", gz->zs.msg ? gz->zs.msg : zError(ret));
			return zerr(ret);
		}
		/* Without Z_FINISH, done once the input is in and deflate had room to spare. */
		if (flush == Z_NO_FLUSH && !gz->zs.avail_in && gz->zs.avail_out)
			break;
	}
	gz->in_len = 0;
	return 0;
}

int compress__gzip_write(void *ctx, const uint8_t *data, size_t len)
{
	struct gzip_stream *gz = ctx;
	size_t n;
	int err;

	while (len) {
		n = sizeof(gz->in) - gz->in_len;
		if (n > len)
			n = len;
		memcpy(gz->in + gz->in_len, data, n);
		gz->in_len += n;
		data += n;
		len -= n;
		if (gz->in_len == sizeof(gz->in)) {
			err = deflate_input(gz, Z_NO_FLUSH);
			if (err)
				return err;
		}
	}
	return 0;
}

int compress__gzip_end(struct gzip_stream *gz, uint8_t **out, size_t *out_len)
{
	int err = deflate_input(gz, Z_FINISH);

	*out = NULL;
	*out_len = 0;
	if (!err) {
		*out = gz->out;
		*out_len = gz->zs.total_out;
		gz->out = NULL;
	}
	compress__gzip_free(gz);
	return err;
}

void compress__gzip_free(struct gzip_stream *gz)
{
	if (!gz)
		return;
	deflateEnd(&gz->zs);
	free(gz->out);
	free(gz);
}

/* The first output buffer: a profile unpacks to some 2 to 10 times its gzip size. */
#define MIN_UNPACKED (64 * 1024)

/* Room for more output: doubled, but never past max + 1 (one byte past max proves it larger). */
static int grow_unpacked(uint8_t **buf, size_t *cap, size_t max)
{
	size_t c = *cap ? 2 * *cap : MIN_UNPACKED;
	uint8_t *tmp;

	if (c > max + 1 || c < *cap)
		c = max + 1;
	tmp = realloc(*buf, c + 1);
	if (!tmp)
		return -ENOMEM;
	*buf = tmp;
	*cap = c;
	return 0;
}

int compress__gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len,
		     const char **why)
{
	z_stream zs = {0};
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, left = len, chunk, room;
	const uint8_t *rest;
	int ret, err = 0;

	*out = NULL;
	*out_len = 0;
	*why = NULL;
	ret = inflateInit2(&zs, GZIP_WINDOW_BITS);
	if (ret != Z_OK)
		return zerr(ret);
	zs.next_in = (Bytef *)in;
	for (;;) {
		if (n == cap) {
			err = grow_unpacked(&buf, &cap, max);
			if (err)
				break;
		}
		/* avail_in and avail_out are 32 bits wide: larger buffers go in pieces. */
		if (!zs.avail_in && left) {
			chunk = left > UINT_MAX ? UINT_MAX : left;
			zs.avail_in = (uInt)chunk;
			left -= chunk;
		}
		room = cap - n > UINT_MAX ? UINT_MAX : cap - n;
		zs.next_out = buf + n;
		zs.avail_out = (uInt)room;
		ret = inflate(&zs, Z_NO_FLUSH);
		n += room - zs.avail_out;
		if (n > max) {
			err = -EFBIG;
			break;
		}
		if (ret == Z_STREAM_END) {
			/* Another member may follow, as `cat a.gz b.gz` makes; nothing else may. */
			rest = in + (len - left - zs.avail_in);
			if (!zs.avail_in && !left)
				break;
			if (len - (size_t)(rest - in) < 2 || rest[0] != 0x1f || rest[1] != 0x8b) {
				*why = "bytes after the gzip data";
				err = -EBADMSG;
				break;
			}
			inflateReset(&zs);
			continue;
		}
		if (ret == Z_OK)
			continue;
		if (ret == Z_BUF_ERROR && (zs.avail_in || left))
			continue;
		err = ret == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
		*why = ret == Z_BUF_ERROR   ? "the gzip data is cut short"
		       : ret == Z_NEED_DICT ? "gzip data that needs a preset dictionary"
		       : zs.msg		    ? zs.msg
					    : "corrupt gzip data";
		break;
	}
	inflateEnd(&zs);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = 0;
	*out = buf;
	*out_len = n;
	return 0;
}
