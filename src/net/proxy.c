// SPDX-License-Identifier: MIT
/*
 * Proxy choice and the CONNECT answer; see proxy.h. What curl does and we
 * follow: a proxy URL without a scheme is http://, one without a port uses
 * 1080; in no_proxy, "*" is every host, a leading dot is ignored, a name
 * also covers its subdomains, and an IPv4 entry may be a CIDR range.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/proxy.h"
#include "lib/base64.h"

#define MAX_CONNECT_REPLY  (16u << 10)
#define DEFAULT_PROXY_PORT "1080"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes in[0..n) into out (size bytes); false if it does not fit or is malformed. */
static bool unescape(const char *in, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)in[i];

		if (c == '%') {
			if (i + 2 >= n || hexval(in[i + 1]) < 0 || hexval(in[i + 2]) < 0)
				return false;
			c = hexval(in[i + 1]) * 16 + hexval(in[i + 2]);
			i += 2;
		}
		if (c < ' ' || c == 0x7f || o + 1 >= size)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

/* The proxy's login from the URL's "user:password@", as a Basic authorization. */
static int login(const char *userinfo, size_t n, struct proxy *out, const char **why)
{
	char plain[384];
	char *enc;

	if (!unescape(userinfo, n, plain, sizeof(plain)) || !strchr(plain, ':')) {
		*why = "the proxy's credentials must be user:password (percent-encoded)";
		return -EINVAL;
	}
	enc = base64__encode(plain);
	if (!enc) {
		*why = "out of memory";
		return -ENOMEM;
	}
	snprintf(out->authorization, sizeof(out->authorization), "Basic %s", enc);
	free(enc);
	return 0;
}

static int parse_proxy_url(const char *value, struct proxy *out, const char **why)
{
	char url[1400];
	const char *p = value, *at, *end;
	size_t hn;

	while (isspace((unsigned char)*p))
		p++;
	if (strstr(p, "://")) {
		if (strncasecmp(p, "http://", 7) != 0) {
			*why = strncasecmp(p, "https://", 8) == 0
				       ? "a proxy reached over TLS (https://) is not supported; "
					 "use "
					 "an http:// proxy (https:// servers are tunnelled through "
					 "it)"
				       : "only http:// proxies are supported (not SOCKS or others)";
			return -EINVAL;
		}
		p += 7;
	}
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at) {
		if (login(p, (size_t)(at - p), out, why))
			return -EINVAL;
		p = at + 1;
	}
	snprintf(url, sizeof(url), "http://%.*s", (int)strcspn(p, " \t\r\n"), p);
	if (http__parse_url(url, &out->url, why))
		return -EINVAL;
	/* No port in the URL: curl's default for proxies, not http's 80. */
	hn = strlen(out->url.host);
	if (!strchr(out->url.hostport + (out->url.hostport[0] == '[' ? hn + 2 : hn), ':'))
		snprintf(out->url.port, sizeof(out->url.port), "%s", DEFAULT_PROXY_PORT);
	return 0;
}

/* Whether the IPv4 address host is in entry, an address or a CIDR range. */
static bool ipv4_match(const char *host, const char *entry, size_t n)
{
	char buf[64];
	const char *slash;
	struct in_addr h, e;
	unsigned long bits = 32;
	uint32_t mask;

	if (n >= sizeof(buf) || inet_pton(AF_INET, host, &h) != 1)
		return false;
	memcpy(buf, entry, n);
	buf[n] = '\0';
	slash = strchr(buf, '/');
	if (slash) {
		char *stop;

		bits = strtoul(slash + 1, &stop, 10);
		if (*stop || stop == slash + 1 || bits > 32)
			return false;
		buf[slash - buf] = '\0';
	}
	if (inet_pton(AF_INET, buf, &e) != 1)
		return false;
	mask = bits ? htonl(~0u << (32 - bits)) : 0;
	return (h.s_addr & mask) == (e.s_addr & mask);
}

/* Whether one no_proxy entry, entry[0..n), covers host. */
static bool entry_matches(const char *host, const char *entry, size_t n)
{
	size_t hl = strlen(host);

	if (n == 1 && entry[0] == '*')
		return true;
	if (ipv4_match(host, entry, n))
		return true;
	if (n && entry[0] == '.') {
		entry++;
		n--;
	}
	if (!n || hl < n || strncasecmp(host + hl - n, entry, n) != 0)
		return false;
	return hl == n || host[hl - n - 1] == '.';
}

bool proxy__bypassed(const char *host, const char *no_proxy)
{
	const char *p = no_proxy;

	while (p && *p) {
		size_t n;

		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		n = strcspn(p, ", \t");
		if (n && entry_matches(host, p, n))
			return true;
		p += n;
	}
	return false;
}

/* A variable's value, NULL when unset or empty (curl ignores an empty one). */
static const char *nonempty(const char *v)
{
	return v && *v ? v : NULL;
}

int proxy__choose(const struct http_url *target, const struct proxy_env *env, struct proxy *out,
		  const char **why)
{
	const char *value = nonempty(target->tls ? env->https_proxy : env->http_proxy);
	const char *source = target->tls ? "https_proxy" : "http_proxy";

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (!value) {
		value = nonempty(env->all_proxy);
		source = "all_proxy";
	}
	if (!value || proxy__bypassed(target->host, env->no_proxy))
		return 0;
	snprintf(out->source, sizeof(out->source), "%s", source);
	return parse_proxy_url(value, out, why) ? -EINVAL : 1;
}

int proxy__parse_connect_reply(const uint8_t *buf, size_t len, int *status, size_t *head_len)
{
	const uint8_t *end = NULL;
	size_t i, scan = len < MAX_CONNECT_REPLY ? len : MAX_CONNECT_REPLY;

	for (i = 0; i + 3 < scan; i++) {
		if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' &&
		    buf[i + 3] == '\n') {
			end = buf + i + 4;
			break;
		}
	}
	/* The status line can be judged before the head is whole. */
	if (len >= 5 && memcmp(buf, "HTTP/", 5) != 0)
		return -EBADMSG;
	if (!end)
		return len >= MAX_CONNECT_REPLY ? -EFBIG : -EAGAIN;
	if (end - buf < 12 + 4 || memcmp(buf, "HTTP/1.", 7) != 0 || !isdigit(buf[7]) ||
	    buf[8] != ' ' || !isdigit(buf[9]) || !isdigit(buf[10]) || !isdigit(buf[11]) ||
	    (buf[12] != ' ' && buf[12] != '\r'))
		return -EBADMSG;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	*head_len = (size_t)(end - buf);
	return 0;
}
