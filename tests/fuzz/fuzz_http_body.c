// SPDX-License-Identifier: MIT
/*
 * A body streamed from a debuginfod server (or whatever answers in its
 * place) is outside input, and so is a redirect's Location. The streaming
 * decoder must take any bytes in any split, never hand out more than
 * max_body, and agree with the whole-response parser: a response that one
 * parses whole, the other decodes to the same body. The first input byte
 * picks the size of the pieces.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

#define MAX_BODY 4096

/* The body as the client streams it: 0 with it in out (*out_len bytes), or the error. */
static int streamed(const uint8_t *data, size_t size, size_t piece, uint8_t *out, size_t *out_len)
{
	struct http_response head;
	struct http_body b;
	size_t head_len = 0, off, k, n = 0;
	int err, rc = 0;

	*out_len = 0;
	err = http__parse_head(data, size, true, &head, &head_len);
	if (err)
		return err;
	if (head_len > size || head.body_len || !head.body)
		abort();
	err = http_body__init(&b, &head, MAX_BODY);
	http_response__clear(&head);
	/* In place, as the client decodes: in a copy of each piece at the output's end. */
	for (off = head_len; !err && !rc; off += k) {
		k = size - off < piece ? size - off : piece;
		memmove(out + *out_len, data + off, k);
		rc = http_body__decode(&b, out + *out_len, k, off + k == size, &n);
		if (rc < 0)
			err = rc;
		else if (n > k || *out_len + n > MAX_BODY)
			abort();
		else
			*out_len += n;
	}
	if (err && err != -EBADMSG && err != -EFBIG && err != -ECONNRESET)
		abort();
	return err;
}

static void check_body(const uint8_t *data, size_t size, size_t piece)
{
	uint8_t *out = malloc(size + 1);
	struct http_response whole;
	size_t len;
	int err = streamed(data, size, piece, out, &len);

	if (!out)
		abort();
	if (!http__parse_response(data, size, true, MAX_BODY, &whole)) {
		if (err || len != whole.body_len || memcmp(out, whole.body, len))
			abort();
		http_response__clear(&whole);
	}
	free(out);
}

static void check_redirect(const uint8_t *data, size_t size)
{
	char location[512], target[256];
	struct http_url from, to;
	const char *why;
	size_t n = size < sizeof(location) - 1 ? size : sizeof(location) - 1;

	memcpy(location, data, n);
	location[n] = '\0';
	if (http__parse_url("http://h:1/p", &from, &why))
		abort();
	if (http__redirect(&from, location, &to, target, sizeof(target), &why)) {
		if (!why)
			abort();
		return;
	}
	if (target[0] != '/' || strlen(target) >= sizeof(target) || !to.host[0] || !to.port[0])
		abort();
	for (const char *c = target; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '#')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	check_body(data + 1, size - 1, 1 + data[0] % 97);
	check_redirect(data, size);
	return 0;
}
