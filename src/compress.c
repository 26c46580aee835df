// SPDX-License-Identifier: MIT
/* Gzip through zlib's deflate with the gzip wrapper; see compress.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#define LOG_MODULE "compress"
#include "log.h"
#include "compress.h"

#define GZIP_LEVEL 6
/* 15 is the largest window; adding 16 asks zlib for a gzip header instead of a zlib one. */
#define GZIP_WINDOW_BITS (15 + 16)
#define MEM_LEVEL	 8

static int zerr(int ret)
{
	return ret == Z_MEM_ERROR ? -ENOMEM : -EIO;
}

int compress__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	uint8_t *buf = NULL, *b;
	size_t cap, remaining = len;
	int ret, err = 0, initialized = 0;

	*out = NULL;
	*out_len = 0;
	ret = deflateInit2(&zs, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW_BITS, MEM_LEVEL,
			   Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		err = zerr(ret);
		pr_err("deflateInit2: %s", zs.msg ? zs.msg : zError(ret));
		goto cleanup;
	}
	initialized = 1;
	/* The bound is exact enough that the loop below normally runs once. */
	cap = deflateBound(&zs, len > ULONG_MAX ? ULONG_MAX : (uLong)len);
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	zs.next_in = (Bytef *)in;
	/* avail_in and avail_out are 32 bits wide: feed and drain larger buffers in pieces. */
	for (;;) {
		int flush;

		if (!zs.avail_in && remaining) {
			zs.avail_in = remaining > UINT_MAX ? UINT_MAX : (uInt)remaining;
			remaining -= zs.avail_in;
		}
		if (zs.total_out == cap) {
			if (cap > SIZE_MAX / 2) {
				err = -ENOMEM;
				goto cleanup;
			}
			b = realloc(buf, cap * 2);
			if (!b) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = b;
			cap *= 2;
		}
		zs.next_out = buf + zs.total_out;
		zs.avail_out =
			cap - zs.total_out > UINT_MAX ? UINT_MAX : (uInt)(cap - zs.total_out);
		flush = remaining ? Z_NO_FLUSH : Z_FINISH;
		ret = deflate(&zs, flush);
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			err = zerr(ret);
			pr_err("deflate: %s", zs.msg ? zs.msg : zError(ret));
			goto cleanup;
		}
	}
	*out = buf;
	*out_len = zs.total_out;
	buf = NULL;
cleanup:
	if (initialized)
		deflateEnd(&zs);
	free(buf);
	return err;
}
