/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 client for uploads and downloads: one request per
 * connection, a timeout on each of connect, send and receive (and, if asked,
 * an end for the whole request), and a hard cap on what a server may send
 * back. A body is held in memory, or streamed to the caller's sink when it
 * may be large (debug files from debuginfod). The response parser and the
 * streaming body decoder are pure functions over bytes, so that their
 * handling of chunked bodies, split reads and hostile input is unit-tested
 * (and fuzzable) without a socket. https:// goes through tls.h, with the
 * configuration the caller made once (struct tls_client).
 */
#ifndef CPROF_HTTP_H
#define CPROF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/url.h"

struct cancel;
struct proxy;
struct tls_client;

struct http_field {
	char *name; /* lowercase */
	char *value;
};

struct http_response {
	int status;
	struct http_field *fields; /* headers, then chunked trailers */
	size_t nfields;
	uint8_t *body; /* decoded (de-chunked); NUL-terminated for convenience */
	size_t body_len;
	size_t need; /* after -EAGAIN: no progress is possible before this many bytes */
};

/* Limits on what a response may hold; beyond them parsing fails with -EFBIG. */
#define HTTP_MAX_HEADER_BYTES (64u << 10)
#define HTTP_MAX_FIELDS	      100

/*
 * Parses one complete HTTP/1.1 response from buf[0..len). eof says that the
 * peer closed after len bytes. Returns 0 when complete (r filled, free it
 * with http_response__clear), -EAGAIN when more bytes are needed, -EBADMSG
 * for a malformed response, -ECONNRESET when eof came mid-response, -EFBIG
 * when the header block or the body (max_body) is too large. Informational
 * 1xx responses are skipped.
 */
int http__parse_response(const uint8_t *buf, size_t len, bool eof, size_t max_body,
			 struct http_response *r);
/*
 * Parses only the head of a response (status line and fields, 1xx skipped)
 * from buf[0..len): 0 with r filled, its body empty, and *head_len the bytes
 * the head took; otherwise as http__parse_response. For a body read apart,
 * through http_body.
 */
int http__parse_head(const uint8_t *buf, size_t len, bool eof, struct http_response *r,
		     size_t *head_len);

/*
 * A response body decoded as it arrives, for bodies too large to hold: the
 * framing its head gives (Content-Length, chunked, or the end of the
 * connection), and for chunked bodies a state machine that takes any split
 * of the bytes. A pure function like the parser above, with the same rules
 * and limits. The members are the decoder's.
 */
struct http_body {
	int framing;
	int state;
	uint64_t left;	/* of the Content-Length body, or of the current chunk */
	uint64_t total; /* body bytes decoded so far */
	uint64_t max;
	unsigned digits; /* of the chunk size being read */
	size_t line;	 /* bytes of the chunk-size line being read */
	size_t trailer;	 /* bytes of the trailer fields */
	size_t nfields;	 /* fields so far, head and trailers */
	bool done;
};

/*
 * The decoder for the body of the response whose head is r (from
 * http__parse_head), at most max_body bytes: 0, -EFBIG when its
 * Content-Length says more, -EBADMSG for a malformed framing.
 */
int http_body__init(struct http_body *b, const struct http_response *r, uint64_t max_body);
/*
 * Decodes the next len bytes of the response, buf[0..len), in place: the
 * body bytes among them end up in buf[0..*out_len). eof says the peer closed
 * after them. Returns 1 once the body is complete (bytes after it are not
 * the body's), 0 when more bytes are needed, or -EBADMSG, -EFBIG past
 * max_body, -ECONNRESET when eof came first.
 */
int http_body__decode(struct http_body *b, uint8_t *buf, size_t len, bool eof, size_t *out_len);

/* A header (or trailer) by case-insensitive name, or NULL. */
const char *http_response__field(const struct http_response *r, const char *name);
void http_response__clear(struct http_response *r);

struct http_header {
	const char *name;
	const char *value;
};

struct http_request {
	const char *method;
	const char *target; /* path and query, starting with '/' */
	const struct http_header *headers;
	size_t nheaders;
	const void *body;
	size_t body_len;
	int timeout_ms;		      /* for each of connect, send and receive */
	size_t max_body;	      /* the largest response body accepted */
	const struct cancel *cancel;  /* optional: once triggered, ends the request at once */
	const struct tls_client *tls; /* for an https:// URL */
	const char *server_name;      /* sent and checked in TLS instead of the URL's host */
	const struct proxy *proxy;    /* the proxy to go through (proxy.h), or NULL */
	/*
	 * Optional: an end for the whole request (clock__mono_ms), which no
	 * step's timeout_ms may pass: however slowly a server drips bytes, the
	 * request ends then. 0: none.
	 */
	int64_t deadline;
	/*
	 * Optional: the body of a 2xx response goes here as it arrives, in
	 * pieces, instead of into resp->body (then empty), so that no body is
	 * held whole; max_body still bounds it. The body of any other status is
	 * not read. A negative errno from it ends the request with that error.
	 */
	int (*write_body)(void *ctx, const void *data, size_t len);
	void *body_ctx;
};

/*
 * Sends the request and reads the response. Returns 0 with resp filled (any
 * status), or a negative errno with a one-line reason in err: -ECONNREFUSED,
 * -ETIMEDOUT, -ECONNRESET, -EHOSTUNREACH (name not resolved), -EBADMSG,
 * -EFBIG, -ECANCELED, what write_body returned, ... The name is resolved by
 * getaddrinfo(), which no timeout bounds.
 */
int http__request(const struct http_url *url, const struct http_request *req,
		  struct http_response *resp, char *err, size_t err_size);

#endif
