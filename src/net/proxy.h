/* SPDX-License-Identifier: MIT */
/*
 * HTTP proxies for uploads, chosen from the environment as curl does:
 * https_proxy (or HTTPS_PROXY) for https:// servers, http_proxy (or
 * HTTP_PROXY) for http:// ones, all_proxy (ALL_PROXY) for either, and
 * no_proxy (NO_PROXY) listing the hosts to reach directly. An https:// server
 * is reached through a CONNECT tunnel, TLS going end to end; an http:// one
 * by sending the request to the proxy in absolute form. Credentials in a
 * proxy's URL are the convention (and its only place) for the proxy's own
 * login: they become its Proxy-Authorization.
 *
 * The choice and the parsing of the proxy's answer to CONNECT are pure
 * functions, unit-tested and fuzzed; http.c does the talking.
 */
#ifndef CPROF_PROXY_H
#define CPROF_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/url.h"

/* The environment's settings (each NULL when unset), read by the caller. */
struct proxy_env {
	const char *https_proxy;
	const char *http_proxy;
	const char *all_proxy;
	const char *no_proxy;
};

struct proxy {
	struct http_url url;	 /* the proxy's host and port */
	char authorization[512]; /* "Basic ..." for its login, or "" */
	char source[16];	 /* the variable it came from, for messages */
};

/*
 * The proxy a request to target goes through: 1 with *out filled, 0 for a
 * direct connection, or -EINVAL with *why (a static explanation) when the
 * variable that applies holds no usable proxy URL.
 */
int proxy__choose(const struct http_url *target, const struct proxy_env *env, struct proxy *out,
		  const char **why);

/* Whether no_proxy (a comma-separated list, as curl reads it) names host. */
bool proxy__bypassed(const char *host, const char *no_proxy);

/*
 * The proxy's answer to CONNECT, from buf[0..len): 0 once its head is whole
 * (*status, and *head_len the bytes it took), -EAGAIN when more bytes are
 * needed, -EBADMSG when it is not an HTTP answer, -EFBIG past 16 KiB.
 */
int proxy__parse_connect_reply(const uint8_t *buf, size_t len, int *status, size_t *head_len);

#endif
