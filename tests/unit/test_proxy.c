// SPDX-License-Identifier: MIT
/*
 * Proxy choice from the environment (which variable, no_proxy's forms, the
 * proxy URL's forms and login) and the parser of a proxy's answer to
 * CONNECT.
 */
#include <errno.h>
#include <string.h>

#include "net/proxy.h"
#include "test.h"

static int choose(const char *url, const struct proxy_env *env, struct proxy *p, const char **why)
{
	struct http_url u;

	if (http__parse_url(url, &u, why))
		return -100;
	return proxy__choose(&u, env, p, why);
}

TEST(proxy_variable_by_scheme)
{
	struct proxy_env env = {.https_proxy = "http://sec:3128", .http_proxy = "plain:8080"};
	struct proxy p;
	const char *why;

	CHECK_INT(choose("https://parca:7070", &env, &p, &why), ==, 1);
	CHECK_STR(p.url.host, "sec");
	CHECK_STR(p.url.port, "3128");
	CHECK_STR(p.source, "https_proxy");
	CHECK_STR(p.authorization, "");
	/* No scheme: http://. */
	CHECK_INT(choose("http://parca:7070", &env, &p, &why), ==, 1);
	CHECK_STR(p.url.host, "plain");
	CHECK_STR(p.url.port, "8080");
	CHECK_STR(p.source, "http_proxy");
	/* Nothing for https: all_proxy, then none. */
	env = (struct proxy_env){.http_proxy = "plain:8080", .all_proxy = "any"};
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, 1);
	CHECK_STR(p.url.host, "any");
	CHECK_STR(p.url.port, "1080");
	CHECK_STR(p.source, "all_proxy");
	env = (struct proxy_env){.http_proxy = "plain:8080", .all_proxy = ""};
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, 0);
}

TEST(proxy_login_and_bad_urls)
{
	struct proxy_env env = {.https_proxy = "http://al%69ce:p%40ss@[::1]:3128/ignored"};
	struct proxy p;
	const char *why = NULL;

	CHECK_INT(choose("https://parca", &env, &p, &why), ==, 1);
	CHECK_STR(p.url.host, "::1");
	CHECK_STR(p.url.port, "3128");
	/* base64("alice:p@ss") */
	CHECK_STR(p.authorization, "Basic YWxpY2U6cEBzcw==");
	env.https_proxy = "https://proxy:443";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	CHECK(strstr(why, "over TLS"));
	env.https_proxy = "socks5://proxy:1080";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	CHECK(strstr(why, "only http://"));
	env.https_proxy = "http://nopassword@proxy";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	CHECK(strstr(why, "user:password"));
	env.https_proxy = "http://u:%zz@proxy";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	env.https_proxy = "http://u:%0a@proxy";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	env.https_proxy = "http://proxy:99999";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, -EINVAL);
	env.https_proxy = "";
	CHECK_INT(choose("https://parca", &env, &p, &why), ==, 0);
}

TEST(proxy_no_proxy_forms)
{
	CHECK(proxy__bypassed("parca", "parca"));
	CHECK(proxy__bypassed("PARCA.example.com", "example.com"));
	CHECK(proxy__bypassed("a.example.com", ".example.com"));
	CHECK(proxy__bypassed("example.com", ".example.com"));
	CHECK(!proxy__bypassed("badexample.com", "example.com"));
	CHECK(!proxy__bypassed("example.com.evil", "example.com"));
	CHECK(proxy__bypassed("anything", "*"));
	CHECK(proxy__bypassed("h", " x , y,h "));
	CHECK(!proxy__bypassed("h", "x,y"));
	CHECK(!proxy__bypassed("h", ""));
	CHECK(!proxy__bypassed("h", NULL));
	CHECK(proxy__bypassed("10.1.2.3", "10.0.0.0/8"));
	CHECK(!proxy__bypassed("11.1.2.3", "10.0.0.0/8"));
	CHECK(proxy__bypassed("192.168.1.7", "192.168.1.7"));
	CHECK(proxy__bypassed("1.2.3.4", "0.0.0.0/0"));
	CHECK(!proxy__bypassed("1.2.3.4", "1.2.3.0/33"));
	CHECK(proxy__bypassed("::1", "::1"));
}

TEST(proxy_no_proxy_applies)
{
	struct proxy_env env = {.https_proxy = "proxy:3128", .no_proxy = "localhost,.internal"};
	struct proxy p;
	const char *why;

	CHECK_INT(choose("https://localhost:7070", &env, &p, &why), ==, 0);
	CHECK_INT(choose("https://pyro.internal", &env, &p, &why), ==, 0);
	CHECK_INT(choose("https://grafana.net", &env, &p, &why), ==, 1);
}

static int reply(const char *s, int *status, size_t *head)
{
	return proxy__parse_connect_reply((const uint8_t *)s, strlen(s), status, head);
}

TEST(proxy_connect_reply)
{
	int status = 0;
	size_t head = 0;

	CHECK_INT(reply("HTTP/1.1 200 Connection established\r\n\r\n", &status, &head), ==, 0);
	CHECK_INT(status, ==, 200);
	CHECK_INT(head, ==, 39);
	CHECK_INT(
		reply("HTTP/1.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
		      "Content-Length: 0\r\n\r\n",
		      &status, &head),
		==, 0);
	CHECK_INT(status, ==, 407);
	CHECK_INT(reply("HTTP/1.1 200\r\n\r\n", &status, &head), ==, 0);
	CHECK_INT(status, ==, 200);
	CHECK_INT(reply("HTTP/1.1 200 OK\r\n", &status, &head), ==, -EAGAIN);
	CHECK_INT(reply("HTT", &status, &head), ==, -EAGAIN);
	CHECK_INT(reply("SSH-2.0-OpenSSH\r\n\r\n", &status, &head), ==, -EBADMSG);
	CHECK_INT(reply("HTTP/2 200\r\n\r\n", &status, &head), ==, -EBADMSG);
	CHECK_INT(reply("HTTP/1.1 2x0 OK\r\n\r\n", &status, &head), ==, -EBADMSG);
}

TEST(proxy_connect_reply_too_large)
{
	static uint8_t big[20000];
	int status;
	size_t head;

	memcpy(big, "HTTP/1.1 200 OK\r\n", 17);
	memset(big + 17, 'x', sizeof(big) - 17);
	CHECK_INT(proxy__parse_connect_reply(big, sizeof(big), &status, &head), ==, -EFBIG);
}
