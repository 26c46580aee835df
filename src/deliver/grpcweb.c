// SPDX-License-Identifier: MIT
/* gRPC-Web framing and status; see grpcweb.h and the gRPC-Web protocol spec (PROTOCOL-WEB.md). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/grpcweb.h"
#include "net/http.h"

#define FLAG_TRAILERS 0x80

int grpcweb__frame_header(uint8_t out[GRPCWEB_FRAME_HEADER], size_t len)
{
	if (len > UINT32_MAX)
		return -E2BIG;
	out[0] = 0; /* uncompressed data frame */
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
	return 0;
}

static int hex_value(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* grpc-message is percent-encoded UTF-8; broken escapes are kept verbatim. */
static void percent_decode(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0, i;

	for (i = 0; i < len && o + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%' && i + 2 < len && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			c = (unsigned char)(hex_value((unsigned char)s[i + 1]) * 16 +
					    hex_value((unsigned char)s[i + 2]));
			i += 2;
		}
		/* Control characters would let a server forge lines in our log. */
		out[o++] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
	}
	out[o] = '\0';
}

static bool parse_code(const char *s, size_t len, int *code)
{
	int v = 0;
	size_t i;

	if (len == 0 || len > 3)
		return false;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*code = v;
	return true;
}

static void trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r'))
		(*len)--;
}

static void take(struct grpc_status *st, const char *name, size_t nlen, const char *value,
		 size_t vlen)
{
	if (nlen == 11 && strncasecmp(name, "grpc-status", 11) == 0) {
		if (parse_code(value, vlen, &st->code))
			st->present = true;
	} else if (nlen == 12 && strncasecmp(name, "grpc-message", 12) == 0) {
		percent_decode(value, vlen, st->message, sizeof(st->message));
	}
}

static int parse_trailers(const uint8_t *p, size_t len, struct grpc_status *st)
{
	const char *s = (const char *)p, *end = s + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *line_end = nl ? nl : end;
		const char *colon = memchr(s, ':', (size_t)(line_end - s));
		size_t nlen, vlen;
		const char *v;

		if (!colon) {
			size_t rest = (size_t)(line_end - s);

			trim(&s, &rest);
			if (rest)
				return -EBADMSG;
		} else {
			nlen = (size_t)(colon - s);
			v = colon + 1;
			vlen = (size_t)(line_end - v);
			trim(&s, &nlen);
			trim(&v, &vlen);
			take(st, s, nlen, v, vlen);
		}
		s = nl ? nl + 1 : end;
	}
	return 0;
}

int grpcweb__status(const struct http_response *r, struct grpc_status *st)
{
	const char *h;
	size_t pos = 0;
	int err;

	memset(st, 0, sizeof(*st));
	h = http_response__field(r, "grpc-status");
	if (h && parse_code(h, strlen(h), &st->code)) {
		st->present = true;
		h = http_response__field(r, "grpc-message");
		if (h)
			percent_decode(h, strlen(h), st->message, sizeof(st->message));
	}
	while (pos < r->body_len) {
		uint32_t flen;
		uint8_t flags;

		if (r->body_len - pos < GRPCWEB_FRAME_HEADER)
			return -EBADMSG;
		flags = r->body[pos];
		flen = (uint32_t)r->body[pos + 1] << 24 | (uint32_t)r->body[pos + 2] << 16 |
		       (uint32_t)r->body[pos + 3] << 8 | r->body[pos + 4];
		pos += GRPCWEB_FRAME_HEADER;
		if (flen > r->body_len - pos)
			return -EBADMSG;
		if (flags & FLAG_TRAILERS) {
			err = parse_trailers(r->body + pos, flen, st);
			if (err)
				return err;
		}
		pos += flen;
	}
	return 0;
}

const char *grpc__code_name(int code)
{
	static const char *const names[] = {
		"OK",
		"CANCELLED",
		"UNKNOWN",
		"INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED",
		"NOT_FOUND",
		"ALREADY_EXISTS",
		"PERMISSION_DENIED",
		"RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION",
		"ABORTED",
		"OUT_OF_RANGE",
		"UNIMPLEMENTED",
		"INTERNAL",
		"UNAVAILABLE",
		"DATA_LOSS",
		"UNAUTHENTICATED",
	};

	if (code < 0 || code >= (int)(sizeof(names) / sizeof(names[0])))
		return "UNKNOWN_CODE";
	return names[code];
}

bool grpc__code_retryable(int code)
{
	switch (code) {
	case 4:	 /* DEADLINE_EXCEEDED */
	case 8:	 /* RESOURCE_EXHAUSTED */
	case 13: /* INTERNAL */
	case 14: /* UNAVAILABLE */
		return true;
	default:
		return false;
	}
}
