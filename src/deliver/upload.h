/* SPDX-License-Identifier: MIT */
/*
 * Sends batches to a profiling server: Parca (WriteRaw over gRPC-Web),
 * Grafana Pyroscope (Push over Connect) or an older Pyroscope (/ingest).
 * With protocol auto, a path ending in /ingest chooses the latter; otherwise
 * one probe with empty requests, made on the first send, finds out which
 * API the server answers. Each send is one attempt: retrying is the
 * caller's (delivery.h), told by the result whether a failure may pass (no
 * connection, timeouts, 5xx, 429 and their gRPC equivalents) or is a
 * refusal (other 4xx, invalid argument...), whose server message is kept
 * for the user.
 */
#ifndef CPROF_UPLOAD_H
#define CPROF_UPLOAD_H

#include "net/proxy.h"
#include "net/tls.h"

struct batch;
struct cancel;
struct upload;

/* The most extra headers (--header) a request takes. */
#define UPLOAD_MAX_HEADERS 16

enum upload_protocol {
	UPLOAD_AUTO,
	UPLOAD_PARCA,
	UPLOAD_PYROSCOPE,
	UPLOAD_PYROSCOPE_INGEST,
};

struct upload_opts {
	const char *url;
	enum upload_protocol protocol;
	const char *token;	/* bearer token, or NULL */
	const char *basic_auth; /* "user:password", or NULL */
	const char *tenant;	/* X-Scope-OrgID, or NULL */
	const char *user_agent;
	int timeout_ms;		 /* for each of connect, send and receive */
	struct tls_opts tls;	 /* for an https:// URL */
	const char *server_name; /* TLS: the name sent and checked instead of the URL's host */
	struct proxy_env proxy_env;
	const struct http_header *headers; /* extra request headers (--header) */
	size_t nheaders;
};

enum upload_result {
	UPLOAD_OK,
	UPLOAD_RETRY_LATER, /* failed in a way that may pass */
	UPLOAD_REJECTED,    /* the server refused the batch: sending it again would not help */
	UPLOAD_CANCELED,    /* the cancel token ended it */
	/*
	 * TLS refused the connection over a certificate (the server's, or the
	 * one it wants from cprof): no use retrying soon, nor dropping the batch.
	 */
	UPLOAD_UNTRUSTED,
};

/* "auto", "parca", "pyroscope", "pyroscope-ingest". */
int upload__parse_protocol(const char *s, enum upload_protocol *out);
const char *upload__protocol_name(enum upload_protocol p);

/*
 * Validates the options (URL, header values) and, for https://, loads the
 * trusted CAs and the client certificate; errors are logged in one line.
 */
int upload__new(const struct upload_opts *o, struct upload **out);
void upload__free(struct upload *u);

/*
 * One attempt at sending the series of b not yet accepted (b->done advances
 * as they are). cancel (optional), once triggered, ends the exchange at once
 * with UPLOAD_CANCELED, though the server may have taken the request by then.
 * On failure upload__last_error() says why, with the server's message.
 */
enum upload_result upload__send(struct upload *u, struct batch *b, const struct cancel *cancel);
const char *upload__last_error(const struct upload *u);
/* The wait the server asked for (Retry-After) in its last answer, 0 if none. */
int upload__retry_after_ms(const struct upload *u);
const char *upload__url(const struct upload *u);
/* The protocol in use; UPLOAD_AUTO until the probe has decided. */
enum upload_protocol upload__protocol(const struct upload *u);

#endif
