// SPDX-License-Identifier: MIT
/*
 * http:// and https:// URLs; see url.h. Pure functions over strings, apart
 * from the socket code of http.c, so that proxy.c can parse its URL
 * without reaching into the client.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "net/url.h"

/* Whether s[0..n) may stand in a request line: no blank, no control character. */
static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return true;
}

int http__parse_url(const char *url, struct http_url *out, const char **why)
{
	const char *p, *auth_end, *host, *host_end, *port = NULL;
	size_t n;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (strncasecmp(url, "https://", 8) == 0) {
		out->tls = true;
		p = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else {
		*why = "expected an http:// or https:// URL, e.g. http://localhost:4040";
		return -EINVAL;
	}
	auth_end = p + strcspn(p, "/?#");
	if (memchr(p, '@', auth_end - p)) {
		*why = "credentials in the URL are refused (they would show in the process list); "
		       "use CPROF_BASIC_AUTH, CPROF_TOKEN or --token-file";
		return -EINVAL;
	}
	if (*p == '[') {
		host = p + 1;
		host_end = memchr(host, ']', auth_end - host);
		if (!host_end || host_end == host) {
			*why = "bad IPv6 address in the URL";
			return -EINVAL;
		}
		p = host_end + 1;
	} else {
		host = p;
		host_end = p + strcspn(p, ":/?#");
		p = host_end;
	}
	if (p < auth_end && *p == ':')
		port = p + 1;
	else if (p != auth_end) {
		*why = "bad host in the URL";
		return -EINVAL;
	}
	n = host_end - host;
	if (n == 0 || n >= sizeof(out->host)) {
		*why = "missing or too long host name in the URL";
		return -EINVAL;
	}
	for (const char *c = host; c < host_end; c++) {
		if (!isalnum((unsigned char)*c) && !strchr("-._:%", *c)) {
			*why = "bad character in the host name of the URL";
			return -EINVAL;
		}
	}
	memcpy(out->host, host, n);
	if (port) {
		unsigned long v = 0;
		const char *c;

		for (c = port; c < auth_end; c++) {
			if (!isdigit((unsigned char)*c) || v > 65535)
				break;
			v = v * 10 + (unsigned long)(*c - '0');
		}
		if (c != auth_end || c == port || v == 0 || v > 65535) {
			*why = "bad port in the URL (expected 1 to 65535)";
			return -EINVAL;
		}
		snprintf(out->port, sizeof(out->port), "%lu", v);
	} else {
		strcpy(out->port, out->tls ? "443" : "80");
	}
	n = auth_end - (host - (host[-1] == '[' ? 1 : 0));
	if (n >= sizeof(out->hostport)) {
		*why = "host too long in the URL";
		return -EINVAL;
	}
	memcpy(out->hostport, host - (host[-1] == '[' ? 1 : 0), n);
	p = auth_end;
	n = strcspn(p, "?#");
	if (p[n]) {
		*why = "a query or fragment in the server URL is not supported";
		return -EINVAL;
	}
	while (n && p[n - 1] == '/')
		n--;
	if (n >= sizeof(out->path)) {
		*why = "URL path too long";
		return -EINVAL;
	}
	if (!printable(p, n)) {
		*why = "spaces or control characters in the URL path";
		return -EINVAL;
	}
	memcpy(out->path, p, n);
	return 0;
}

int http__redirect(const struct http_url *url, const char *location, struct http_url *to,
		   char *target, size_t target_size, const char **why)
{
	size_t n = strcspn(location, "#"), auth;
	const char *rest = location;
	char origin[sizeof(to->hostport) + 16];

	*why = NULL;
	if (location[0] == '/' && location[1] != '/') {
		*to = *url;
	} else if (strncasecmp(location, "http://", 7) == 0 ||
		   strncasecmp(location, "https://", 8) == 0) {
		auth = (size_t)(strstr(location, "://") + 3 - location);
		auth += strcspn(location + auth, "/?#");
		if (auth >= sizeof(origin)) {
			*why = "the redirect's host is too long";
			return -EINVAL;
		}
		memcpy(origin, location, auth);
		origin[auth] = '\0';
		if (http__parse_url(origin, to, why))
			return -EINVAL;
		rest = location + auth;
		n -= auth;
	} else {
		*why = "a redirect to neither an http(s):// URL nor an absolute path";
		return -EINVAL;
	}
	if (!printable(rest, n)) {
		*why = "spaces or control characters in the redirect";
		return -EINVAL;
	}
	/* "http://h" and "http://h?q" are the root of h. */
	if (snprintf(target, target_size, "%s%.*s", rest[0] == '/' ? "" : "/", (int)n, rest) >=
	    (int)target_size) {
		*why = "the redirect's path is too long";
		return -EINVAL;
	}
	to->path[0] = '\0';
	return 0;
}
