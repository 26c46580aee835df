// SPDX-License-Identifier: MIT
/*
 * Uploads; see upload.h. How each answer is read:
 *
 * - Parca, gRPC-Web: HTTP 200 carries the call's status in grpc-status, in
 *   the headers or in the trailer frame; any other HTTP status comes from
 *   something in front of the server (a proxy) and is read as HTTP.
 * - Pyroscope, Connect unary: HTTP 200 is success; an error is a non-200
 *   status with a JSON body {"code": ..., "message": ...}.
 * - /ingest: HTTP 200 is success; the body of an error is its message.
 *
 * Worth retrying (UPLOAD_RETRY_LATER): connection and protocol-level
 * failures, HTTP 5xx (except 501 and 505, which will not change), 429, and
 * gRPC UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL and DEADLINE_EXCEEDED. A
 * Retry-After header is kept for the caller's backoff.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "upload"
#include "deliver/batch.h"
#include "deliver/grpcweb.h"
#include "net/http.h"
#include "deliver/parca.h"
#include "deliver/pyroscope.h"
#include "deliver/upload.h"
#include "lib/base64.h"
#include "lib/log.h"

#define MAX_RESPONSE	   (1u << 20)
#define RETRY_AFTER_MAX_MS 60000
#define MAX_HEADERS	   (8 + UPLOAD_MAX_HEADERS)
#define GRPC_UNIMPLEMENTED 12

struct upload {
	char *url;
	struct http_url target;
	enum upload_protocol protocol;
	char base_path[sizeof(((struct http_url *)0)->path)];
	char *authorization; /* the whole header value, or NULL */
	const char *tenant;
	const char *user_agent;
	int timeout_ms;
	int retry_after_ms;	/* from the last answer, 0 if none */
	struct tls_client *tls; /* https:// only */
	struct proxy proxy;
	bool use_proxy;
	const struct http_header *headers; /* the user's */
	size_t nheaders;
	const char *server_name; /* TLS: instead of the URL's host */
	char error[768];
};

static const char *const protocol_names[] = {
	[UPLOAD_AUTO] = "auto",
	[UPLOAD_PARCA] = "parca",
	[UPLOAD_PYROSCOPE] = "pyroscope",
	[UPLOAD_PYROSCOPE_INGEST] = "pyroscope-ingest",
};

int upload__parse_protocol(const char *s, enum upload_protocol *out)
{
	size_t i;

	for (i = 0; i < sizeof(protocol_names) / sizeof(protocol_names[0]); i++) {
		if (strcmp(s, protocol_names[i]) == 0) {
			*out = (enum upload_protocol)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *upload__protocol_name(enum upload_protocol p)
{
	return p <= UPLOAD_PYROSCOPE_INGEST ? protocol_names[p] : "?";
}

static bool header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static int make_authorization(struct upload *u, const struct upload_opts *o)
{
	char *enc;
	int n;

	if (o->token && o->basic_auth) {
		pr_err("both a bearer token and basic auth are set; use one");
		return -EINVAL;
	}
	if (o->token) {
		if (!*o->token || !header_safe(o->token)) {
			pr_err("the bearer token is empty or holds control characters");
			return -EINVAL;
		}
		n = asprintf(&u->authorization, "Bearer %s", o->token);
		return n < 0 ? -ENOMEM : 0;
	}
	if (o->basic_auth) {
		if (!strchr(o->basic_auth, ':') || !header_safe(o->basic_auth)) {
			pr_err("basic auth (CPROF_BASIC_AUTH or --basic-auth-file) must be "
			       "user:password, without control characters");
			return -EINVAL;
		}
		enc = base64__encode(o->basic_auth);
		if (!enc)
			return -ENOMEM;
		n = asprintf(&u->authorization, "Basic %s", enc);
		free(enc);
		return n < 0 ? -ENOMEM : 0;
	}
	return 0;
}

static int setup_tls(struct upload *u, const struct upload_opts *o)
{
	char why[512];
	int err;

	if (!u->target.tls)
		return 0;
	err = tls_client__new(&o->tls, &u->tls, why, sizeof(why));
	if (err) {
		pr_err("%s", why);
		return err;
	}
	if (o->tls.insecure)
		pr_warn("--insecure-skip-verify: the server's certificate is not checked; anyone "
			"on the way can read and change the profiles and credentials sent");
	else
		pr_debug("%d trusted CAs", tls_client__ca_count(u->tls));
	u->server_name = o->server_name;
	return 0;
}

/* Headers cprof writes itself, or takes from safer places. */
static const char *const own_headers[][2] = {
	{"host", ""},
	{"content-length", ""},
	{"content-type", ""},
	{"connection", ""},
	{"transfer-encoding", ""},
	{"user-agent", ""},
	{"authorization", ": use CPROF_TOKEN, --token-file, CPROF_BASIC_AUTH or --basic-auth-file"},
	{"proxy-authorization", ": a proxy's login goes in its URL"},
	{"x-scope-orgid", ": use --tenant"},
};

static int check_headers(const struct upload_opts *o)
{
	size_t i, k;

	if (o->nheaders > UPLOAD_MAX_HEADERS) {
		pr_err("too many headers (at most %d)", UPLOAD_MAX_HEADERS);
		return -EINVAL;
	}
	for (i = 0; i < o->nheaders; i++) {
		const char *name = o->headers[i].name, *c;

		for (c = name; *c && (isalnum((unsigned char)*c) || strchr("!#$%&'*+-.^_`|~", *c));
		     c++)
			;
		if (!*name || *c || !header_safe(o->headers[i].value)) {
			pr_err("invalid header '%s': the name must be a token, the value without "
			       "control characters",
			       name);
			return -EINVAL;
		}
		for (k = 0; k < sizeof(own_headers) / sizeof(*own_headers); k++)
			if (!strcasecmp(name, own_headers[k][0])) {
				pr_err("--header cannot set %s%s", name,
				       *own_headers[k][1] ? own_headers[k][1] : ": cprof sets it");
				return -EINVAL;
			}
	}
	return 0;
}

static int setup_proxy(struct upload *u, const struct upload_opts *o)
{
	const char *why;
	int rc = proxy__choose(&u->target, &o->proxy_env, &u->proxy, &why);

	if (rc < 0) {
		pr_err("bad proxy setting (%s): %s", u->proxy.source, why);
		return rc;
	}
	u->use_proxy = rc == 1;
	if (u->use_proxy)
		pr_debug("through the proxy %s (%s)", u->proxy.url.hostport, u->proxy.source);
	return 0;
}

int upload__new(const struct upload_opts *o, struct upload **out)
{
	struct upload *u;
	const char *why;
	size_t n;
	int err;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->url = strdup(o->url);
	if (!u->url) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = http__parse_url(o->url, &u->target, &why);
	if (err) {
		pr_err("bad server URL '%s': %s", o->url, why);
		goto cleanup;
	}
	if (o->tenant && (!*o->tenant || !header_safe(o->tenant))) {
		pr_err("the tenant ID is empty or holds control characters");
		err = -EINVAL;
		goto cleanup;
	}
	err = make_authorization(u, o);
	if (err)
		goto cleanup;
	err = setup_tls(u, o);
	if (err)
		goto cleanup;
	err = setup_proxy(u, o);
	if (err)
		goto cleanup;
	err = check_headers(o);
	if (err)
		goto cleanup;
	u->headers = o->headers;
	u->nheaders = o->nheaders;
	u->protocol = o->protocol;
	u->tenant = o->tenant;
	u->user_agent = o->user_agent ? o->user_agent : "cprof";
	u->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	snprintf(u->base_path, sizeof(u->base_path), "%s", u->target.path);
	/* A URL that names the legacy endpoint says which API it is. */
	n = strlen(u->base_path);
	if (n >= 7 && strcmp(u->base_path + n - 7, PYROSCOPE_INGEST_PATH) == 0) {
		u->base_path[n - 7] = '\0';
		if (u->protocol == UPLOAD_AUTO)
			u->protocol = UPLOAD_PYROSCOPE_INGEST;
	}
	*out = u;
	return 0;
cleanup:
	upload__free(u);
	return err;
}

void upload__free(struct upload *u)
{
	if (!u)
		return;
	free(u->authorization);
	free(u->url);
	tls_client__free(u->tls);
	free(u);
}

const char *upload__last_error(const struct upload *u)
{
	return u->error;
}

const char *upload__url(const struct upload *u)
{
	return u->url;
}

enum upload_protocol upload__protocol(const struct upload *u)
{
	return u->protocol;
}

int upload__retry_after_ms(const struct upload *u)
{
	return u->retry_after_ms;
}

/* The server's words, made safe to print on one line. */
static void server_text(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0, i;

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	for (i = 0; i < len && o + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '\r')
			break;
		out[o++] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

/* The "message" string of a Connect error body, with JSON escapes undone (\uXXXX as '?'). */
static bool connect_message(const struct http_response *r, char *out, size_t size)
{
	const char *type = http_response__field(r, "content-type");
	const char *p = r->body ? strstr((const char *)r->body, "\"message\"") : NULL;
	size_t o = 0;

	if (!p || !type || strncasecmp(type, "application/json", 16) != 0)
		return false;
	p += 9;
	while (*p == ' ' || *p == ':')
		p++;
	if (*p++ != '"')
		return false;
	while (*p && *p != '"' && o + 1 < size) {
		char c = *p++;

		if (c == '\\' && *p) {
			c = *p++;
			if (c == 'n' || c == 't' || c == 'r')
				c = ' ';
			else if (c == 'u') {
				for (int i = 0; i < 4 && isxdigit((unsigned char)*p); i++)
					p++;
				c = '?';
			}
		}
		out[o++] = (char)((unsigned char)c < 0x20 ? ' ' : c);
	}
	out[o] = '\0';
	return true;
}

static int retry_after_ms(const struct http_response *r)
{
	const char *v = http_response__field(r, "retry-after");
	long s;
	char *end;

	if (!v)
		return 0;
	s = strtol(v, &end, 10);
	if (end == v || *end || s <= 0)
		return 0;
	return s > RETRY_AFTER_MAX_MS / 1000 ? RETRY_AFTER_MAX_MS : (int)s * 1000;
}

static bool http_retryable(int status)
{
	return status == 429 || (status >= 500 && status != 501 && status != 505);
}

static const char *hint_for(int status, enum upload_protocol p)
{
	if (status == 404)
		return p == UPLOAD_PARCA       ? " (is this a Parca server?)"
		       : p == UPLOAD_PYROSCOPE ? " (is this a Pyroscope server 1.0 or later?)"
					       : " (is this a Pyroscope server?)";
	if (status == 401 || status == 403)
		return " (check CPROF_TOKEN, --token-file, CPROF_BASIC_AUTH and --tenant)";
	return "";
}

static const char *status_phrase(int status)
{
	switch (status) {
	case 400:
		return " Bad Request";
	case 401:
		return " Unauthorized";
	case 403:
		return " Forbidden";
	case 404:
		return " Not Found";
	case 405:
		return " Method Not Allowed";
	case 413:
		return " Payload Too Large";
	case 415:
		return " Unsupported Media Type";
	case 429:
		return " Too Many Requests";
	case 500:
		return " Internal Server Error";
	case 501:
		return " Not Implemented";
	case 502:
		return " Bad Gateway";
	case 503:
		return " Service Unavailable";
	case 504:
		return " Gateway Timeout";
	default:
		return "";
	}
}

/*
 * A web page is not a profile server's message: its <title>, or failing that
 * its first text, says enough in a few words. *out empty if it has neither.
 */
static void html_excerpt(const char *body, size_t len, char *out, size_t size)
{
	const char *t = strcasestr(body, "<title>"), *end;
	char text[512];
	size_t o = 0, i;
	bool in_tag = false;

	if (t && (end = strcasestr(t, "</title>"))) {
		server_text(t + 7, (size_t)(end - t - 7), out, size < 81 ? size : 81);
		return;
	}
	for (i = 0; i < len && o + 1 < sizeof(text); i++) {
		if (body[i] == '<')
			in_tag = true;
		else if (body[i] == '>')
			in_tag = false, text[o++] = ' ';
		else if (!in_tag)
			text[o++] = body[i] == '\n' ? ' ' : body[i];
	}
	server_text(text, o, out, size < 81 ? size : 81);
}

static bool is_html(const struct http_response *r)
{
	const char *type = http_response__field(r, "content-type");
	const char *b = r->body ? (const char *)r->body : "";

	while (isspace((unsigned char)*b))
		b++;
	return (type && strncasecmp(type, "text/html", 9) == 0) ||
	       strncasecmp(b, "<!doctype", 9) == 0 || strncasecmp(b, "<html", 5) == 0;
}

/* An HTTP status other than 200: a Connect error, a proxy's page, or a plain-text refusal. */
static enum upload_result http_failure(struct upload *u, const struct http_response *r,
				       enum upload_protocol p)
{
	bool retry = http_retryable(r->status), html = r->body && is_html(r);
	char text[400];

	u->retry_after_ms = retry_after_ms(r);
	if (html)
		html_excerpt((const char *)r->body, r->body_len, text, sizeof(text));
	else if (!connect_message(r, text, sizeof(text)))
		server_text((const char *)r->body, r->body_len, text, sizeof(text));
	if (html && !retry) {
		snprintf(u->error, sizeof(u->error),
			 "the server at %s does not speak the %s protocol: it answered HTTP %d%s "
			 "with a web page%s%s%s",
			 u->url, upload__protocol_name(p), r->status, status_phrase(r->status),
			 *text ? " (\"" : "", text, *text ? "\")" : "");
		return UPLOAD_REJECTED;
	}
	snprintf(u->error, sizeof(u->error), "%s HTTP %d%s%s%s%s",
		 retry ? "the server answered" : "the server refused the profile with", r->status,
		 status_phrase(r->status), *text ? (html ? ", a web page: " : ": ") : "", text,
		 hint_for(r->status, p));
	return retry ? UPLOAD_RETRY_LATER : UPLOAD_REJECTED;
}

static enum upload_result exchange(struct upload *u, const char *target, const char *type,
				   const struct http_header *extra, size_t nextra, const void *body,
				   size_t len, const struct cancel *cancel,
				   struct http_response *resp)
{
	struct http_header h[MAX_HEADERS];
	struct http_request req = {
		.method = "POST",
		.target = target,
		.headers = h,
		.body = body,
		.body_len = len,
		.timeout_ms = u->timeout_ms,
		.max_body = MAX_RESPONSE,
		.cancel = cancel,
		.tls = u->tls,
		.server_name = u->server_name,
		.proxy = u->use_proxy ? &u->proxy : NULL,
	};
	char msg[512];
	size_t n = 0, i;
	int err;

	h[n++] = (struct http_header){"Content-Type", type};
	h[n++] = (struct http_header){"User-Agent", u->user_agent};
	if (u->authorization)
		h[n++] = (struct http_header){"Authorization", u->authorization};
	if (u->tenant)
		h[n++] = (struct http_header){"X-Scope-OrgID", u->tenant};
	for (i = 0; i < nextra && n < MAX_HEADERS; i++)
		h[n++] = extra[i];
	for (i = 0; i < u->nheaders && n < MAX_HEADERS; i++)
		h[n++] = u->headers[i];
	req.nheaders = n;
	u->retry_after_ms = 0;
	err = http__request(&u->target, &req, resp, msg, sizeof(msg));
	if (err == -ECANCELED) {
		snprintf(u->error, sizeof(u->error), "interrupted");
		return UPLOAD_CANCELED;
	}
	if (err) {
		snprintf(u->error, sizeof(u->error), "%s", msg);
		return err == -EKEYREJECTED ? UPLOAD_UNTRUSTED : UPLOAD_RETRY_LATER;
	}
	return UPLOAD_OK;
}

typedef int (*encode_fn)(const struct batch *b, uint8_t **out, size_t *len);

/* POSTs the unsent series of b (none: a probe), encoded by encode, to base_path + path. */
static enum upload_result post(struct upload *u, const char *path, const char *type,
			       const struct http_header *extra, encode_fn encode,
			       const struct batch *b, const struct cancel *cancel,
			       struct http_response *resp)
{
	char target[sizeof(u->base_path) + 80];
	enum upload_result res;
	uint8_t *body = NULL;
	size_t len;
	int err;

	snprintf(target, sizeof(target), "%s%s", u->base_path, path);
	err = encode(b, &body, &len);
	if (err) {
		snprintf(u->error, sizeof(u->error), "encoding the request: %s", strerror(-err));
		return UPLOAD_RETRY_LATER;
	}
	res = exchange(u, target, type, extra, 1, body, len, cancel, resp);
	free(body);
	return res;
}

static enum upload_result send_parca(struct upload *u, struct batch *b, const struct cancel *cancel,
				     struct grpc_status *st)
{
	static const struct http_header extra[] = {{"X-Grpc-Web", "1"}};
	struct http_response resp;
	enum upload_result res;

	memset(st, 0, sizeof(*st));
	res = post(u, PARCA_WRITE_RAW_PATH, "application/grpc-web+proto", extra, parca__write_raw,
		   b, cancel, &resp);
	if (res != UPLOAD_OK)
		return res;
	if (resp.status != 200) {
		res = http_failure(u, &resp, UPLOAD_PARCA);
	} else if (grpcweb__status(&resp, st) || !st->present) {
		snprintf(u->error, sizeof(u->error),
			 "the answer is not gRPC-Web (no grpc-status): is this a Parca server?");
		res = UPLOAD_REJECTED;
	} else if (st->code != 0) {
		snprintf(u->error, sizeof(u->error), "%s: %s%s%s",
			 grpc__code_retryable(st->code) ? "Parca is unavailable"
							: "Parca refused the profile",
			 grpc__code_name(st->code), st->message[0] ? ": " : "", st->message);
		res = grpc__code_retryable(st->code) ? UPLOAD_RETRY_LATER : UPLOAD_REJECTED;
	} else if (b) {
		b->done = b->nseries;
	}
	http_response__clear(&resp);
	return res;
}

static enum upload_result send_push(struct upload *u, struct batch *b, const struct cancel *cancel,
				    int *status)
{
	static const struct http_header extra[] = {{"Connect-Protocol-Version", "1"}};
	struct http_response resp;
	enum upload_result res;

	res = post(u, PYROSCOPE_PUSH_PATH, "application/proto", extra, pyroscope__push, b, cancel,
		   &resp);
	if (res != UPLOAD_OK)
		return res;
	*status = resp.status;
	if (resp.status != 200)
		res = http_failure(u, &resp, UPLOAD_PYROSCOPE);
	else if (b)
		b->done = b->nseries;
	http_response__clear(&resp);
	return res;
}

static enum upload_result send_ingest(struct upload *u, struct batch *b,
				      const struct cancel *cancel)
{
	enum upload_result res = UPLOAD_OK;

	while (b->done < b->nseries && res == UPLOAD_OK) {
		const struct batch_series *s = &b->series[b->done];
		struct http_response resp;
		char *target = NULL;
		int err;

		err = pyroscope__ingest_target(u->base_path, b, b->done, &target);
		if (err) {
			snprintf(u->error, sizeof(u->error), "encoding the request: %s",
				 strerror(-err));
			return UPLOAD_RETRY_LATER;
		}
		res = exchange(u, target, "application/octet-stream", NULL, 0, s->profile,
			       s->profile_len, cancel, &resp);
		free(target);
		if (res != UPLOAD_OK)
			return res;
		if (resp.status == 200)
			b->done++;
		else
			res = http_failure(u, &resp, UPLOAD_PYROSCOPE_INGEST);
		http_response__clear(&resp);
	}
	return res;
}

/* Which API the server answers, found with empty requests that store nothing. */
static enum upload_result probe(struct upload *u, const struct cancel *cancel)
{
	struct grpc_status st;
	enum upload_result res;
	int status = 0;

	res = send_parca(u, NULL, cancel, &st);
	if (res == UPLOAD_OK || (st.present && st.code != GRPC_UNIMPLEMENTED)) {
		u->protocol = UPLOAD_PARCA;
		pr_info("%s answers Parca's ProfileStoreService/WriteRaw (gRPC-Web): using "
			"protocol parca",
			u->url);
		return UPLOAD_OK;
	}
	if (res == UPLOAD_RETRY_LATER || res == UPLOAD_CANCELED)
		return res;
	res = send_push(u, NULL, cancel, &status);
	if (res == UPLOAD_OK) {
		u->protocol = UPLOAD_PYROSCOPE;
		pr_info("%s answers Pyroscope's PusherService/Push (Connect): using protocol "
			"pyroscope",
			u->url);
		return UPLOAD_OK;
	}
	if (res == UPLOAD_RETRY_LATER || res == UPLOAD_CANCELED)
		return res;
	if (status == 401 || status == 403)
		return UPLOAD_REJECTED;
	/* Pyroscope before 1.0 had neither RPC API, only POST /ingest. */
	u->protocol = UPLOAD_PYROSCOPE_INGEST;
	pr_info("%s answers neither Parca's WriteRaw nor Pyroscope's Push: using protocol "
		"pyroscope-ingest (POST /ingest)",
		u->url);
	return UPLOAD_OK;
}

static enum upload_result attempt(struct upload *u, struct batch *b, const struct cancel *cancel)
{
	enum upload_result res;
	struct grpc_status st;
	int status;

	if (u->protocol == UPLOAD_AUTO) {
		res = probe(u, cancel);
		if (res != UPLOAD_OK) {
			static const char prefix[] = "probing the server: ";
			size_t p = sizeof(prefix) - 1, n = strlen(u->error);

			if (n > sizeof(u->error) - p - 1)
				n = sizeof(u->error) - p - 1;
			memmove(u->error + p, u->error, n);
			memcpy(u->error, prefix, p);
			u->error[p + n] = '\0';
			return res;
		}
	}
	switch (u->protocol) {
	case UPLOAD_PARCA:
		return send_parca(u, b, cancel, &st);
	case UPLOAD_PYROSCOPE:
		return send_push(u, b, cancel, &status);
	default:
		return send_ingest(u, b, cancel);
	}
}

enum upload_result upload__send(struct upload *u, struct batch *b, const struct cancel *cancel)
{
	u->error[0] = '\0';
	return attempt(u, b, cancel);
}
