// SPDX-License-Identifier: MIT
/*
 * The uploader against a scripted peer: which answers are retried (by
 * delivery's retry policy), which are refusals (and carry the server's
 * message), the protocol probe, and the headers that carry credentials and
 * the tenant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/batch.h"
#include "deliver/delivery.h"
#include "deliver/upload.h"
#include "net/http.h"
#include "loopback.h"
#include "test.h"

static struct batch *small_batch(void)
{
	struct batch *b = batch__new(1000000000, 1000000000);
	struct labels l = {0};
	uint8_t *p = malloc(1);

	CHECK(b && p);
	p[0] = 'P';
	CHECK_INT(labels__set(&l, "__name__", "process_cpu"), ==, 0);
	CHECK_INT(labels__set(&l, "service_name", "t"), ==, 0);
	CHECK_INT(batch__add(b, &l, p, 1, NULL), ==, 0);
	return b;
}

static struct upload *client(const struct loopback *lb, enum upload_protocol p, const char *basic,
			     const char *tenant)
{
	char url[64];
	struct upload_opts o = {
		.url = url,
		.protocol = p,
		.basic_auth = basic,
		.tenant = tenant,
		.user_agent = "cprof-test",
		.timeout_ms = 5000,
	};
	struct upload *u;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", lb->port);
	CHECK_INT(upload__new(&o, &u), ==, 0);
	return u;
}

/* Occurrences in the requests received, which hold binary bodies with NUL bytes. */
static size_t count(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, k = strlen(needle);
	const char *p = hay, *end = hay + len;

	while ((p = memmem(p, (size_t)(end - p), needle, k))) {
		n++;
		p++;
	}
	return n;
}

TEST(upload_retries_then_succeeds)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 429 Too Many Requests\r\nRetry-After: "
			       "1\r\nContent-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY(
			"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
			"Content-Length: "
			"42\r\n\r\n{\"code\":\"unavailable\",\"message\":\"later\"}  "),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Type: application/proto\r\n"
			       "Content-Length: 0\r\n\r\n"),
	};
	struct batch *b = small_batch();
	struct loopback lb;
	struct upload *u;
	size_t len;
	char *sent;

	CHECK_INT(loopback__start(&lb, replies, 3), ==, 0);
	u = client(&lb, UPLOAD_PYROSCOPE, "user:pass", "team-a");
	CHECK_INT(delivery__send_now(u, b, 3, NULL), ==, UPLOAD_OK);
	CHECK_INT(b->done, ==, 1);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK(sent);
	CHECK_INT(count(sent, len, "POST /push.v1.PusherService/Push HTTP/1.1\r\n"), ==, 3);
	CHECK_INT(count(sent, len, "\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"), ==, 3);
	CHECK_INT(count(sent, len, "\r\nX-Scope-OrgID: team-a\r\n"), ==, 3);
	CHECK_INT(count(sent, len, "\r\nConnect-Protocol-Version: 1\r\n"), ==, 3);
	free(sent);
	upload__free(u);
	batch__free(b);
}

TEST(upload_refusal_is_not_retried)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY(
			"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
			"Content-Length: 58\r\n\r\n"
			"{\"code\":\"invalid_argument\",\"message\":\"bad label \\\"x\\\"\"}   "),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
	};
	struct batch *b = small_batch();
	struct loopback lb;
	struct upload *u;
	size_t len;
	char *sent;

	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	u = client(&lb, UPLOAD_PYROSCOPE, NULL, NULL);
	CHECK_INT(delivery__send_now(u, b, 4, NULL), ==, UPLOAD_REJECTED);
	CHECK(strstr(upload__last_error(u), "HTTP 400"));
	CHECK(strstr(upload__last_error(u), "bad label \"x\""));
	CHECK_INT(b->done, ==, 0);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK_INT(count(sent, len, "POST "), ==, 1);
	free(sent);
	upload__free(u);
	batch__free(b);
}

/* Something that is not a profile server answers with a web page: say so, in a few clean words. */
TEST(upload_web_page_is_not_a_profile_server)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY(
			"HTTP/1.1 501 Unsupported method ('POST')\r\n"
			"Content-Type: text/html;charset=utf-8\r\nContent-Length: 166\r\n\r\n"
			"<!DOCTYPE HTML>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">\n"
			"<title>Error response</title>\n</head>\n<body><h1>Error response</h1>"
			"<p>Error code: 501</p></body></html>\n"),
	};
	struct batch *b = small_batch();
	struct loopback lb;
	struct upload *u;
	char want[300];

	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	u = client(&lb, UPLOAD_PARCA, NULL, NULL);
	CHECK_INT(delivery__send_now(u, b, 4, NULL), ==, UPLOAD_REJECTED);
	snprintf(want, sizeof(want),
		 "the server at %s does not speak the parca protocol: it answered HTTP 501 Not "
		 "Implemented with a web page (\"Error response\")",
		 upload__url(u));
	CHECK_STR(upload__last_error(u), want);
	loopback__stop(&lb);
	upload__free(u);
	batch__free(b);
}

TEST(upload_parca_status_codes)
{
	static const char invalid[] =
		"HTTP/1.1 200 OK\r\nContent-Type: application/grpc-web+proto\r\n"
		"Content-Length: 51\r\n\r\n"
		"\x80\x00\x00\x00\x2egrpc-status: 3\r\ngrpc-message: missing%20name\r\n";
	static const char unavailable[] = "HTTP/1.1 200 OK\r\ngrpc-status: 14\r\n"
					  "Content-Length: 0\r\n\r\n";
	struct loopback_reply replies[] = {
		{.data = invalid, .len = sizeof(invalid) - 1},
		{.data = unavailable, .len = sizeof(unavailable) - 1},
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
	};
	struct batch *b = small_batch();
	struct loopback lb;
	struct upload *u;

	CHECK_INT(loopback__start(&lb, replies, 3), ==, 0);
	u = client(&lb, UPLOAD_PARCA, NULL, NULL);
	CHECK_INT(upload__send(u, b, NULL), ==, UPLOAD_REJECTED);
	CHECK(strstr(upload__last_error(u), "INVALID_ARGUMENT: missing name"));
	CHECK_INT(upload__send(u, b, NULL), ==, UPLOAD_RETRY_LATER);
	CHECK(strstr(upload__last_error(u), "UNAVAILABLE"));
	/* 200 without a gRPC status is not a gRPC-Web server. */
	CHECK_INT(upload__send(u, b, NULL), ==, UPLOAD_REJECTED);
	CHECK(strstr(upload__last_error(u), "not gRPC-Web"));
	CHECK_INT(b->done, ==, 0);
	loopback__stop(&lb);
	upload__free(u);
	batch__free(b);
}

TEST(upload_probe_finds_pyroscope)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
	};
	struct batch *b = small_batch();
	struct loopback lb;
	struct upload *u;
	size_t len;
	char *sent;

	CHECK_INT(loopback__start(&lb, replies, 3), ==, 0);
	u = client(&lb, UPLOAD_AUTO, NULL, NULL);
	CHECK_INT(upload__protocol(u), ==, UPLOAD_AUTO);
	CHECK_INT(upload__send(u, b, NULL), ==, UPLOAD_OK);
	CHECK_INT(upload__protocol(u), ==, UPLOAD_PYROSCOPE);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK_INT(
		count(sent, len, "POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw "),
		==, 1);
	CHECK_INT(count(sent, len, "POST /push.v1.PusherService/Push "), ==, 2);
	free(sent);
	upload__free(u);
	batch__free(b);
}

TEST(upload_down_server_is_retryable)
{
	struct loopback lb = {.port = loopback__closed_port()};
	struct batch *b = small_batch();
	struct upload *u = client(&lb, UPLOAD_AUTO, NULL, NULL);

	CHECK_INT(delivery__send_now(u, b, 2, NULL), ==, UPLOAD_RETRY_LATER);
	CHECK(strstr(upload__last_error(u), "probing the server: connect to 127.0.0.1"));
	CHECK_INT(upload__protocol(u), ==, UPLOAD_AUTO);
	upload__free(u);
	batch__free(b);
}

TEST(upload_options_checked)
{
	struct upload_opts o = {.url = "http://h:1", .token = "t", .basic_auth = "u:p"};
	struct upload *u;
	enum upload_protocol p;

	CHECK(upload__new(&o, &u) < 0);
	o.basic_auth = NULL;
	o.token = "a\r\nX-Evil: 1";
	CHECK(upload__new(&o, &u) < 0);
	o.token = NULL;
	o.tenant = "t\n";
	CHECK(upload__new(&o, &u) < 0);
	o.tenant = NULL;
	o.url = "https://h";
	o.tls.ca_file = "/nonexistent/ca.pem";
	CHECK(upload__new(&o, &u) < 0);
	o.tls.ca_file = NULL;
	o.url = "http://h";
	o.nheaders = 1;
	o.headers = (const struct http_header[]){{"Authorization", "Bearer x"}};
	CHECK(upload__new(&o, &u) < 0);
	o.headers = (const struct http_header[]){{"X Project", "demo"}};
	CHECK(upload__new(&o, &u) < 0);
	o.headers = (const struct http_header[]){{"X-Project", "demo\r\nX-Evil: 1"}};
	CHECK(upload__new(&o, &u) < 0);
	o.headers = (const struct http_header[]){{"X-Project", "demo"}};
	CHECK_INT(upload__new(&o, &u), ==, 0);
	upload__free(u);
	o.nheaders = 0;
	o.url = "http://h/x/ingest";
	CHECK_INT(upload__new(&o, &u), ==, 0);
	CHECK_INT(upload__protocol(u), ==, UPLOAD_PYROSCOPE_INGEST);
	upload__free(u);
	CHECK_INT(upload__parse_protocol("pyroscope-ingest", &p), ==, 0);
	CHECK_INT(p, ==, UPLOAD_PYROSCOPE_INGEST);
	CHECK(upload__parse_protocol("grpc", &p) < 0);
	CHECK_STR(upload__protocol_name(UPLOAD_PARCA), "parca");
}
