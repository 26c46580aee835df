/* SPDX-License-Identifier: MIT */
/*
 * The URLs of the HTTP client (http.h) and its proxies (proxy.h): the
 * server's host, port and path, and where a redirect goes. A floor below
 * both, so that neither includes the other to name a URL.
 */
#ifndef CPROF_URL_H
#define CPROF_URL_H

#include <stdbool.h>
#include <stddef.h>

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

/*
 * Where a redirect from url goes, for its Location field: an absolute
 * http:// or https:// URL, or an absolute path on the same server; the
 * query is kept, a fragment dropped. Returns 0 with *to and the request
 * target (path and query, starting with '/') filled, or -EINVAL with *why
 * (a static explanation).
 */
int http__redirect(const struct http_url *url, const char *location, struct http_url *to,
		   char *target, size_t target_size, const char **why);

#endif
