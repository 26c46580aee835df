// SPDX-License-Identifier: MIT
/*
 * The HTTP client: URL parsing, the pure response parser (every framing,
 * split reads, hostile input, limits) and the client against a scripted
 * peer on loopback (timeouts, drops, refusals, cancellation).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel_alarm.h"
#include "net/http.h"
#include "lib/cancel.h"
#include "loopback.h"
#include "test.h"

#define MAX_BODY 4096

TEST(http_url_forms)
{
	struct http_url u;
	const char *why;

	CHECK_INT(http__parse_url("http://parca:7070", &u, &why), ==, 0);
	CHECK_STR(u.host, "parca");
	CHECK_STR(u.port, "7070");
	CHECK_STR(u.hostport, "parca:7070");
	CHECK_STR(u.path, "");
	CHECK_INT(http__parse_url("HTTP://10.0.0.1/pyroscope/", &u, &why), ==, 0);
	CHECK_STR(u.host, "10.0.0.1");
	CHECK_STR(u.port, "80");
	CHECK_STR(u.hostport, "10.0.0.1");
	CHECK_STR(u.path, "/pyroscope");
	CHECK_INT(http__parse_url("http://[::1]:4040/ingest", &u, &why), ==, 0);
	CHECK_STR(u.host, "::1");
	CHECK_STR(u.hostport, "[::1]:4040");
	CHECK_STR(u.path, "/ingest");
	CHECK(!u.tls);
	CHECK_INT(http__parse_url("https://profiles.example.com/p", &u, &why), ==, 0);
	CHECK(u.tls);
	CHECK_STR(u.port, "443");
	CHECK_STR(u.hostport, "profiles.example.com");
	CHECK_STR(u.path, "/p");
	CHECK_INT(http__parse_url("HTTPS://h:8443", &u, &why), ==, 0);
	CHECK(u.tls);
	CHECK_STR(u.port, "8443");
}

TEST(http_url_refusals)
{
	struct http_url u;
	const char *why = NULL;

	CHECK_INT(http__parse_url("http://user:pw@parca:7070", &u, &why), ==, -EINVAL);
	CHECK(strstr(why, "credentials"));
	CHECK_INT(http__parse_url("https://user:pw@parca", &u, &why), ==, -EINVAL);
	CHECK(strstr(why, "credentials"));
	CHECK_INT(http__parse_url("ftp://x", &u, &why), ==, -EINVAL);
	CHECK(strstr(why, "https://"));
	CHECK_INT(http__parse_url("http://", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://h:0", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://h:65536", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://h:80x", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://h/p?q=1", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://h/a b", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://[::1", &u, &why), ==, -EINVAL);
	CHECK_INT(http__parse_url("http://bad$host/", &u, &why), ==, -EINVAL);
}

static int parse(const char *s, size_t len, bool eof, struct http_response *r)
{
	return http__parse_response((const uint8_t *)s, len, eof, MAX_BODY, r);
}

#define PARSE(lit, eof, r) parse(lit, sizeof(lit) - 1, eof, r)

TEST(http_parse_content_length)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				   "Content-Length: 5\r\nX-Empty:\r\n\r\nhelloEXTRA";
	struct http_response r;

	CHECK_INT(PARSE(resp, false, &r), ==, 0);
	CHECK_INT(r.status, ==, 200);
	CHECK_INT(r.body_len, ==, 5);
	CHECK_BYTES(r.body, r.body_len, "hello");
	CHECK_STR(http_response__field(&r, "CONTENT-TYPE"), "text/plain");
	CHECK_STR(http_response__field(&r, "x-empty"), "");
	CHECK(!http_response__field(&r, "grpc-status"));
	http_response__clear(&r);
}

TEST(http_parse_chunked_with_trailers)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				   "5\r\n\0\0\0\0\0\r\n"
				   "4;ext=1\r\nabcd\r\n"
				   "0\r\ngrpc-status: 0\r\ngrpc-message: ok\r\n\r\n";
	struct http_response r;

	CHECK_INT(PARSE(resp, false, &r), ==, 0);
	CHECK_BYTES(r.body, r.body_len, "\0\0\0\0\0abcd");
	CHECK_STR(http_response__field(&r, "grpc-status"), "0");
	CHECK_STR(http_response__field(&r, "grpc-message"), "ok");
	http_response__clear(&r);
}

/* Every proper prefix of a response is incomplete, and the need hint never lies. */
static void check_prefixes(const char *resp, size_t len)
{
	struct http_response r;
	size_t i;

	for (i = 0; i < len; i++) {
		int err = parse(resp, i, false, &r);

		if (err != -EAGAIN)
			test_fail(__FILE__, __LINE__, "prefix of %zu/%zu bytes: %d", i, len, err);
		if (r.need <= i)
			test_fail(__FILE__, __LINE__, "prefix %zu: need %zu", i, r.need);
		/* Just below the hint, still incomplete. */
		if (r.need != SIZE_MAX && r.need <= len &&
		    parse(resp, r.need - 1, false, &r) != -EAGAIN)
			test_fail(__FILE__, __LINE__, "need hint %zu at prefix %zu", r.need, i);
	}
	CHECK_INT(parse(resp, len, false, &r), ==, 0);
	http_response__clear(&r);
}

TEST(http_parse_split_reads)
{
	static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				      "3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nx: y\r\n\r\n";
	static const char fixed[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found";

	check_prefixes(chunked, sizeof(chunked) - 1);
	check_prefixes(fixed, sizeof(fixed) - 1);
}

TEST(http_parse_close_delimited_and_truncated)
{
	static const char resp[] = "HTTP/1.0 500 Internal Server Error\r\n\r\noops";
	static const char cut[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial";
	struct http_response r;

	CHECK_INT(PARSE(resp, false, &r), ==, -EAGAIN);
	CHECK_U64(r.need, ==, SIZE_MAX);
	CHECK_INT(PARSE(resp, true, &r), ==, 0);
	CHECK_INT(r.status, ==, 500);
	CHECK_BYTES(r.body, r.body_len, "oops");
	http_response__clear(&r);
	CHECK_INT(PARSE(cut, true, &r), ==, -ECONNRESET);
	CHECK_INT(parse("", 0, true, &r), ==, -ECONNRESET);
	CHECK_INT(PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true, &r),
		  ==, -ECONNRESET);
}

TEST(http_parse_skips_informational)
{
	static const char resp[] = "HTTP/1.1 100 Continue\r\n\r\n"
				   "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n";
	struct http_response r;

	CHECK_INT(PARSE(resp, false, &r), ==, 0);
	CHECK_INT(r.status, ==, 204);
	CHECK_INT(r.body_len, ==, 0);
	CHECK_STR(http_response__field(&r, "x-a"), "1");
	http_response__clear(&r);
	CHECK_INT(PARSE("HTTP/1.1 101 Switching\r\n\r\n", false, &r), ==, -EBADMSG);
}

TEST(http_parse_garbage)
{
	static const char *const bad[] = {
		"garbage\r\n\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 099 x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
		"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n",
	};
	struct http_response r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = parse(bad[i], strlen(bad[i]), true, &r);

		if (err != -EBADMSG)
			test_fail(__FILE__, __LINE__, "case %zu: %d, want -EBADMSG", i, err);
	}
	/* The same length said twice is one length. */
	CHECK_INT(PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok", false, &r), ==, 0);
	http_response__clear(&r);
}

TEST(http_parse_limits)
{
	char *big = malloc(HTTP_MAX_HEADER_BYTES + 64), body[MAX_BODY + 64];
	struct http_response r;
	size_t n;
	int i, len;

	CHECK(big);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nX: ");
	memset(big + n, 'a', HTTP_MAX_HEADER_BYTES);
	CHECK_INT(parse(big, n + HTTP_MAX_HEADER_BYTES, false, &r), ==, -EFBIG);
	free(big);
	len = snprintf(body, sizeof(body), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n",
		       MAX_BODY + 1);
	CHECK_INT(parse(body, (size_t)len, false, &r), ==, -EFBIG);
	len = snprintf(body, sizeof(body),
		       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		       "%x\r\n",
		       MAX_BODY + 1);
	CHECK_INT(parse(body, (size_t)len, false, &r), ==, -EFBIG);
	/* Too many fields. */
	big = malloc(HTTP_MAX_FIELDS * 8 + 64);
	CHECK(big);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i <= HTTP_MAX_FIELDS; i++)
		n += (size_t)sprintf(big + n, "X: 1\r\n");
	n += (size_t)sprintf(big + n, "\r\n");
	CHECK_INT(parse(big, n, true, &r), ==, -EFBIG);
	free(big);
}

static struct http_request post(const char *target, int timeout_ms)
{
	static const struct http_header h[] = {{"Content-Type", "application/proto"}};

	return (struct http_request){
		.method = "POST",
		.target = target,
		.headers = h,
		.nheaders = 1,
		.body = "\x0a\x00",
		.body_len = 2,
		.timeout_ms = timeout_ms,
		.max_body = MAX_BODY,
	};
}

static void url_for(struct http_url *u, uint16_t port)
{
	char s[64];
	const char *why;

	snprintf(s, sizeof(s), "http://127.0.0.1:%u", port);
	CHECK_INT(http__parse_url(s, u, &why), ==, 0);
}

TEST(http_client_request_and_pieces)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				     "2\r\nok\r\n0\r\n\r\n";
	struct loopback_reply replies[] = {{.data = answer, .len = sizeof(answer) - 1, .piece = 1}};
	struct http_request req = post("/p/x", 5000);
	struct http_response r;
	struct loopback lb;
	struct http_url u;
	char msg[256], *sent;
	size_t len;

	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	url_for(&u, lb.port);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, 0);
	CHECK_INT(r.status, ==, 200);
	CHECK_BYTES(r.body, r.body_len, "ok");
	http_response__clear(&r);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK(sent);
	CHECK(strncmp(sent, "POST /p/x HTTP/1.1\r\n", 20) == 0);
	CHECK(strstr(sent, "\r\nContent-Length: 2\r\n"));
	CHECK(strstr(sent, "\r\nContent-Type: application/proto\r\n"));
	CHECK(memcmp(sent + len - 2, "\x0a\x00", 2) == 0);
	free(sent);
}

TEST(http_client_refused_and_unresolvable)
{
	struct http_request req = post("/", 2000);
	struct http_response r;
	struct http_url u;
	char msg[256];
	const char *why;

	url_for(&u, loopback__closed_port());
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ECONNREFUSED);
	CHECK(strstr(msg, "Connection refused") || strstr(msg, "refused"));
	CHECK_INT(http__parse_url("http://cprof-no-such-host.invalid:1", &u, &why), ==, 0);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -EHOSTUNREACH);
	CHECK(strstr(msg, "cannot resolve"));
}

TEST(http_client_timeout_and_drop)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"),
		LOOPBACK_REPLY("not http at all\r\n\r\n"),
		{.silent = true},
	};
	struct http_request req = post("/", 5000);
	struct http_response r;
	struct loopback lb;
	struct http_url u;
	char msg[256];

	CHECK_INT(loopback__start(&lb, replies, 3), ==, 0);
	url_for(&u, lb.port);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ECONNRESET);
	CHECK(strstr(msg, "mid-response"));
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -EBADMSG);
	/* The silent peer would close after 30 s: a timeout is the only way to -ETIMEDOUT. */
	req.timeout_ms = 300;
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ETIMEDOUT);
	CHECK(strstr(msg, "no complete response"));
	loopback__stop(&lb);
}

TEST(http_client_cancel)
{
	struct loopback_reply replies[] = {{.silent = true}, {.silent = true}};
	struct http_request req = post("/", 20000);
	struct cancel *before, *during;
	struct http_response r;
	struct loopback lb;
	struct http_url u;
	char msg[256];
	int64_t t0;

	CHECK_INT(cancel__new(&before), ==, 0);
	CHECK_INT(cancel__new(&during), ==, 0);
	cancel__trigger(before);
	req.cancel = before;
	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	url_for(&u, lb.port);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ECANCELED);
	/* A signal that triggers the token ends the wait for the silent peer at once. */
	req.cancel = during;
	t0 = cancel_alarm__now_ms();
	cancel_alarm__start(during, 200);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ECANCELED);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 5000);
	loopback__stop(&lb);
	cancel__free(before);
	cancel__free(during);
}

/*
 * The response as the streaming path reads it: the head from growing
 * prefixes, then the body decoded in place from pieces of `piece` bytes,
 * the last one with eof. 0 with the body (caller frees), or the error.
 */
static int stream_parse(const char *resp, size_t len, size_t piece, size_t max_body,
			struct http_response *head, uint8_t **body, size_t *body_len)
{
	uint8_t *out = malloc(len + 1), *tmp = malloc(piece);
	size_t n = 0, head_len = 0, got = 0, off;
	struct http_body b;
	int err = -EAGAIN, rc = 0;

	CHECK(out && tmp);
	while (err == -EAGAIN && n < len) {
		n = n + piece < len ? n + piece : len;
		err = http__parse_head((const uint8_t *)resp, n, n == len, head, &head_len);
	}
	if (!err)
		err = http_body__init(&b, head, max_body);
	for (off = head_len; !err && rc == 0; off += piece) {
		size_t k = off < len ? (len - off < piece ? len - off : piece) : 0, o = 0;

		memcpy(tmp, resp + off, k);
		rc = http_body__decode(&b, tmp, k, off + k >= len, &o);
		if (rc < 0)
			err = rc;
		else
			memcpy(out + got, tmp, o);
		got += o;
	}
	free(tmp);
	if (err) {
		free(out);
		http_response__clear(head);
		return err;
	}
	*body = out;
	*body_len = got;
	return 0;
}

/* Every piece size gives what the whole-response parser gives. */
static void check_streamed(const char *resp, size_t len)
{
	struct http_response whole, head;
	size_t piece, blen;
	uint8_t *body;
	int err;

	CHECK_INT(http__parse_response((const uint8_t *)resp, len, true, MAX_BODY, &whole), ==, 0);
	for (piece = 1; piece <= len; piece++) {
		err = stream_parse(resp, len, piece, MAX_BODY, &head, &body, &blen);
		if (err)
			test_fail(__FILE__, __LINE__, "pieces of %zu: %d", piece, err);
		CHECK_INT(head.status, ==, whole.status);
		CHECK_INT(head.body_len, ==, 0);
		if (blen != whole.body_len || memcmp(body, whole.body, blen))
			test_fail(__FILE__, __LINE__, "pieces of %zu: body differs", piece);
		free(body);
		http_response__clear(&head);
	}
	http_response__clear(&whole);
}

TEST(http_body_streamed_like_whole)
{
	static const char chunked[] = "HTTP/1.1 100 Continue\r\n\r\n"
				      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
				      "3\r\nabc\r\n10 ;x=\"y\"\r\n0123456789abcdef\r\n"
				      "A\n\0\1\2\3\4\5\6\7\x08\x09\r\n0\r\nx: y\r\nz:\r\n\r\nEXTRA";
	static const char fixed[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot foundEXTRA";
	static const char closed[] = "HTTP/1.0 200 OK\r\n\r\nuntil the end";
	static const char empty[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	static const char none[] = "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n";
	static const char other[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!";
	/* Chunked wins over a Content-Length beside it (found by fuzz_http_body). */
	static const char both[] = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n"
				   "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

	check_streamed(chunked, sizeof(chunked) - 1);
	check_streamed(fixed, sizeof(fixed) - 1);
	check_streamed(closed, sizeof(closed) - 1);
	check_streamed(empty, sizeof(empty) - 1);
	check_streamed(none, sizeof(none) - 1);
	check_streamed(other, sizeof(other) - 1);
	check_streamed(both, sizeof(both) - 1);
}

TEST(http_body_streamed_refusals)
{
	static const char *const bad[] = {
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\rabc\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n folded: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx: a\x01\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello",
	};
	char big[2 * MAX_BODY];
	struct http_response head;
	size_t i, blen, n;
	uint8_t *body;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = stream_parse(bad[i], strlen(bad[i]), 3, MAX_BODY, &head, &body, &blen);

		if (err != -EBADMSG)
			test_fail(__FILE__, __LINE__, "case %zu: %d, want -EBADMSG", i, err);
	}
	/* Cut short: the connection ended mid-body. */
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot");
	CHECK_INT(stream_parse(big, n, 5, MAX_BODY, &head, &body, &blen), ==, -ECONNRESET);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab");
	CHECK_INT(stream_parse(big, n, 4, MAX_BODY, &head, &body, &blen), ==, -ECONNRESET);
	/* Over max_body: said by Content-Length, by a chunk size, or found at the end. */
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", MAX_BODY + 1);
	CHECK_INT(stream_parse(big, n, 7, MAX_BODY, &head, &body, &blen), ==, -EFBIG);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n",
			    MAX_BODY + 1);
	CHECK_INT(stream_parse(big, n, 7, MAX_BODY, &head, &body, &blen), ==, -EFBIG);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\n\r\n");
	memset(big + n, 'x', MAX_BODY + 1);
	CHECK_INT(stream_parse(big, n + MAX_BODY + 1, 1000, MAX_BODY, &head, &body, &blen), ==,
		  -EFBIG);
	/* A chunk-size line, or trailers, without end. */
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;");
	memset(big + n, 'e', 1100);
	CHECK_INT(stream_parse(big, n + 1100, 64, MAX_BODY, &head, &body, &blen), ==, -EBADMSG);
}

TEST(http_redirect_targets)
{
	struct http_url from, to;
	char target[256], location[300];
	const char *why;

	CHECK_INT(http__parse_url("http://h:8002/base", &from, &why), ==, 0);
	CHECK_INT(http__redirect(&from, "/x/y?a=1&b=2#frag", &to, target, sizeof(target), &why), ==,
		  0);
	CHECK_STR(to.hostport, "h:8002");
	CHECK_STR(target, "/x/y?a=1&b=2");
	CHECK_INT(http__redirect(&from, "HTTPS://cdn.example/f?sig=z", &to, target, sizeof(target),
				 &why),
		  ==, 0);
	CHECK(to.tls);
	CHECK_STR(to.host, "cdn.example");
	CHECK_STR(to.port, "443");
	CHECK_STR(to.path, "");
	CHECK_STR(target, "/f?sig=z");
	CHECK_INT(http__redirect(&from, "http://[::1]:9?q", &to, target, sizeof(target), &why), ==,
		  0);
	CHECK_STR(to.hostport, "[::1]:9");
	CHECK_STR(target, "/?q");
	CHECK_INT(http__redirect(&from, "http://other", &to, target, sizeof(target), &why), ==, 0);
	CHECK_STR(target, "/");
	CHECK_INT(http__redirect(&from, "relative/path", &to, target, sizeof(target), &why), ==,
		  -EINVAL);
	CHECK_INT(http__redirect(&from, "//other/x", &to, target, sizeof(target), &why), ==,
		  -EINVAL);
	CHECK_INT(http__redirect(&from, "ftp://h/x", &to, target, sizeof(target), &why), ==,
		  -EINVAL);
	CHECK_INT(http__redirect(&from, "http://u:p@h/x", &to, target, sizeof(target), &why), ==,
		  -EINVAL);
	CHECK(strstr(why, "credentials"));
	CHECK_INT(http__redirect(&from, "/a b", &to, target, sizeof(target), &why), ==, -EINVAL);
	CHECK_INT(http__redirect(&from, "/a\tb", &to, target, sizeof(target), &why), ==, -EINVAL);
	memset(location, 'a', sizeof(location));
	location[0] = '/';
	location[sizeof(location) - 1] = '\0';
	CHECK_INT(http__redirect(&from, location, &to, target, sizeof(target), &why), ==, -EINVAL);
	CHECK(strstr(why, "too long"));
}

struct sink {
	uint8_t data[MAX_BODY];
	size_t len, calls;
	int fail_with;
};

static int to_sink(void *ctx, const void *data, size_t len)
{
	struct sink *s = ctx;

	if (s->fail_with)
		return s->fail_with;
	CHECK_INT(len, <=, sizeof(s->data) - s->len);
	memcpy(s->data + s->len, data, len);
	s->len += len;
	s->calls++;
	return 0;
}

static struct http_request get(struct sink *s, int timeout_ms)
{
	return (struct http_request){
		.method = "GET",
		.target = "/f",
		.timeout_ms = timeout_ms,
		.max_body = MAX_BODY,
		.write_body = to_sink,
		.body_ctx = s,
	};
}

TEST(http_client_streamed_body)
{
	static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				      "4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n";
	static char drip[MAX_BODY];
	struct loopback_reply replies[] = {
		{.data = chunked, .len = sizeof(chunked) - 1, .piece = 3},
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
		{.data = drip, .len = sizeof(drip), .piece = 1},
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\ntoo big"),
	};
	struct sink s = {0};
	struct http_request req = get(&s, 5000);
	struct http_response r;
	struct loopback lb;
	struct http_url u;
	char msg[256];
	int64_t t0;

	CHECK_INT(loopback__start(&lb, replies, 5), ==, 0);
	url_for(&u, lb.port);
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, 0);
	CHECK_INT(r.status, ==, 200);
	CHECK_INT(r.body_len, ==, 0);
	CHECK_BYTES(s.data, s.len, "abcdefg");
	CHECK_INT(s.calls, >=, 2);
	http_response__clear(&r);
	/* Another status: its body is not the sink's. */
	s.len = 0;
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, 0);
	CHECK_INT(r.status, ==, 404);
	CHECK_INT(s.len, ==, 0);
	http_response__clear(&r);
	/* The sink's failure is the request's. */
	s.fail_with = -ENOSPC;
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ENOSPC);
	CHECK(strstr(msg, "No space"));
	s.fail_with = 0;
	/* A byte every 2 ms keeps each read alive, not the request past its end. */
	memcpy(drip, "HTTP/1.1 200 OK\r\n\r\n", 19);
	memset(drip + 19, 'x', sizeof(drip) - 19);
	req.deadline = cancel_alarm__now_ms() + 300;
	t0 = cancel_alarm__now_ms();
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -ETIMEDOUT);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 2000);
	req.deadline = 0;
	req.max_body = 100;
	CHECK_INT(http__request(&u, &req, &r, msg, sizeof(msg)), ==, -EFBIG);
	loopback__stop(&lb);
}
