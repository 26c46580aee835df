/* SPDX-License-Identifier: MIT */
/*
 * A scripted HTTP peer on 127.0.0.1 for client tests: a forked child that
 * takes one connection per reply, reads the request (headers and
 * Content-Length body), then answers with the reply's exact bytes, slowly or
 * in pieces if asked, and closes. It speaks no HTTP of its own, so a test
 * controls every byte the client sees: garbage, a drop mid-response, silence.
 */
#ifndef CPROF_TEST_LOOPBACK_H
#define CPROF_TEST_LOOPBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loopback_reply {
	const char *data;
	size_t len;
	int delay_ms; /* before answering */
	size_t piece; /* write in pieces of this many bytes (0: at once) */
	bool silent;  /* read the request, then say nothing for 30 s */
};

#define LOOPBACK_REPLY(lit)                           \
	{                                             \
		.data = (lit), .len = sizeof(lit) - 1 \
	}

struct loopback {
	pid_t pid;
	uint16_t port;
	char log[256]; /* requests, appended as received */
};

/* Starts the peer; it exits after the last reply. */
int loopback__start(struct loopback *lb, const struct loopback_reply *replies, size_t n);
/* Kills it if still running and reaps it. */
void loopback__stop(struct loopback *lb);
/* A port on which nothing listens (bound, then closed). */
uint16_t loopback__closed_port(void);
/* The requests received so far, NUL-terminated; caller frees. */
char *loopback__requests(const struct loopback *lb, size_t *len);

#endif
