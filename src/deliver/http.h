/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 client for uploads: one request per connection, a timeout
 * on each of connect, send and receive, and a hard cap on what a server may
 * send back. The response parser is a pure function over bytes, so that its
 * handling of chunked bodies, split reads and hostile input is unit-tested
 * (and fuzzable) without a socket. https:// goes through tls.h, with the
 * configuration the caller made once (struct tls_client).
 */
#ifndef CPROF_HTTP_H
#define CPROF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cancel;
struct proxy;
struct tls_client;

struct http_url {
	char host[256];	    /* name or address; IPv6 without brackets */
	char port[8];	    /* decimal */
	char hostport[272]; /* the Host header: host[:port] as written in the URL */
	char path[1024];    /* path without query or trailing '/'; "" for the root */
	bool tls;	    /* https:// */
};

/*
 * Parses http[s]://HOST[:PORT][/PATH]. Returns 0, or -EINVAL with *why set
 * to a static explanation: credentials in the URL, bad syntax.
 */
int http__parse_url(const char *url, struct http_url *out, const char **why);

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
};

/*
 * Sends the request and reads the response. Returns 0 with resp filled (any
 * status), or a negative errno with a one-line reason in err: -ECONNREFUSED,
 * -ETIMEDOUT, -ECONNRESET, -EHOSTUNREACH (name not resolved), -EBADMSG,
 * -EFBIG, -ECANCELED, ...
 */
int http__request(const struct http_url *url, const struct http_request *req,
		  struct http_response *resp, char *err, size_t err_size);

#endif
