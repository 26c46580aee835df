/* SPDX-License-Identifier: MIT */
/*
 * gRPC-Web over HTTP/1.1, the transport Parca's agent API accepts from a
 * plain HTTP client: each message travels in a frame (flag byte, 4-byte
 * big-endian length, message), and the call's status comes either in the
 * response headers or in a final trailer frame (flag 0x80) whose payload is
 * HTTP-style "grpc-status: N" lines.
 */
#ifndef CPROF_GRPCWEB_H
#define CPROF_GRPCWEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_response;

#define GRPCWEB_FRAME_HEADER 5

/* The header of a data frame carrying len bytes; -E2BIG past 4 GiB. */
int grpcweb__frame_header(uint8_t out[GRPCWEB_FRAME_HEADER], size_t len);

struct grpc_status {
	bool present;	   /* a grpc-status was found */
	int code;	   /* google.rpc.Code */
	char message[512]; /* grpc-message, percent-decoded */
};

/*
 * The status of a gRPC-Web call from its response: the trailer frame wins
 * over headers. Returns 0 (st->present false if there was none) or -EBADMSG
 * when the body's framing is broken.
 */
int grpcweb__status(const struct http_response *r, struct grpc_status *st);

/* "UNAVAILABLE" etc., or "UNKNOWN_CODE". */
const char *grpc__code_name(int code);
/* Codes worth retrying: the server may succeed later (overload, outage, deadline). */
bool grpc__code_retryable(int code);

#endif
