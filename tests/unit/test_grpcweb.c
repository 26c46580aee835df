// SPDX-License-Identifier: MIT
/* gRPC-Web framing and status parsing, on hand-made responses. */
#include <errno.h>
#include <string.h>

#include "deliver/grpcweb.h"
#include "net/http.h"
#include "test.h"

static struct http_response response(const char *body, size_t len, struct http_field *f, size_t nf)
{
	return (struct http_response){
		.status = 200,
		.fields = f,
		.nfields = nf,
		.body = (uint8_t *)body,
		.body_len = len,
	};
}

TEST(grpcweb_frame_header)
{
	uint8_t h[GRPCWEB_FRAME_HEADER];

	CHECK_INT(grpcweb__frame_header(h, 0x01020304), ==, 0);
	CHECK_BYTES(h, sizeof(h), "\x00\x01\x02\x03\x04");
	CHECK_INT(grpcweb__frame_header(h, 0), ==, 0);
	CHECK_BYTES(h, sizeof(h), "\x00\x00\x00\x00\x00");
}

TEST(grpcweb_status_in_trailer_frame)
{
	static const char body[] =
		"\x00\x00\x00\x00\x02hi"
		"\x80\x00\x00\x00\x2egrpc-status: 3\r\ngrpc-message: bad%20x%0Ay%zz\r\n";
	struct http_response r = response(body, sizeof(body) - 1, NULL, 0);
	struct grpc_status st;

	CHECK_INT(grpcweb__status(&r, &st), ==, 0);
	CHECK(st.present);
	CHECK_INT(st.code, ==, 3);
	/* Decoded; the newline made harmless; a broken escape kept as it is. */
	CHECK_STR(st.message, "bad x?y%zz");
	CHECK_STR(grpc__code_name(st.code), "INVALID_ARGUMENT");
	CHECK(!grpc__code_retryable(st.code));
}

TEST(grpcweb_status_in_headers)
{
	struct http_field f[] = {{"grpc-status", "14"}, {"grpc-message", "going%20away"}};
	struct http_response r = response("", 0, f, 2);
	struct grpc_status st;

	CHECK_INT(grpcweb__status(&r, &st), ==, 0);
	CHECK(st.present);
	CHECK_INT(st.code, ==, 14);
	CHECK_STR(st.message, "going away");
	CHECK(grpc__code_retryable(14));
	CHECK_STR(grpc__code_name(14), "UNAVAILABLE");
	CHECK_STR(grpc__code_name(99), "UNKNOWN_CODE");
}

TEST(grpcweb_status_absent_or_malformed)
{
	static const char data_only[] = "\x00\x00\x00\x00\x00";
	static const char truncated[] = "\x80\x00\x00\x00\x10grpc";
	static const char short_header[] = "\x80\x00\x00";
	static const char bad_line[] = "\x80\x00\x00\x00\x0cno colon\r\n\r\n";
	struct http_field bad_code[] = {{"grpc-status", "abc"}};
	struct http_response r;
	struct grpc_status st;

	r = response(data_only, sizeof(data_only) - 1, NULL, 0);
	CHECK_INT(grpcweb__status(&r, &st), ==, 0);
	CHECK(!st.present);
	r = response(truncated, sizeof(truncated) - 1, NULL, 0);
	CHECK_INT(grpcweb__status(&r, &st), ==, -EBADMSG);
	r = response(short_header, sizeof(short_header) - 1, NULL, 0);
	CHECK_INT(grpcweb__status(&r, &st), ==, -EBADMSG);
	r = response(bad_line, sizeof(bad_line) - 1, NULL, 0);
	CHECK_INT(grpcweb__status(&r, &st), ==, -EBADMSG);
	r = response("", 0, bad_code, 1);
	CHECK_INT(grpcweb__status(&r, &st), ==, 0);
	CHECK(!st.present);
}
