// SPDX-License-Identifier: MIT
/*
 * A proxy's answer to CONNECT and the proxy settings of the environment are
 * outside input. The reply parser must take any bytes and never claim more
 * of them than it was given; the proxy choice must take any URL and no_proxy
 * list (the input split at its first NUL: proxy URL, no_proxy, host).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/proxy.h"

static void check_reply(const uint8_t *data, size_t size)
{
	size_t head = 0;
	int status = 0;
	int err = proxy__parse_connect_reply(data, size, &status, &head);

	if (err == 0 && (head > size || status < 0 || status > 999))
		abort();
	if (err && err != -EAGAIN && err != -EBADMSG && err != -EFBIG)
		abort();
}

static void check_choice(const uint8_t *data, size_t size)
{
	char buf[2048], *parts[3] = {buf, "", "h"};
	struct proxy_env env = {0};
	struct http_url target;
	struct proxy p;
	const char *why;
	size_t n = size < sizeof(buf) - 1 ? size : sizeof(buf) - 1;
	int i, rc;

	memcpy(buf, data, n);
	buf[n] = '\0';
	for (i = 1; i < 3; i++) {
		char *z = memchr(parts[i - 1], '\0', buf + n + 1 - parts[i - 1]);

		if (!z || z >= buf + n)
			break;
		parts[i] = z + 1;
	}
	env.https_proxy = parts[0];
	env.no_proxy = parts[1];
	if (http__parse_url("https://example.com", &target, &why))
		abort();
	if (strlen(parts[2]) < sizeof(target.host))
		strcpy(target.host, parts[2]);
	rc = proxy__choose(&target, &env, &p, &why);
	if (rc < -EINVAL || rc > 1 || (rc == -EINVAL && !why))
		abort();
	if (rc == 1 && (!p.url.host[0] || !p.url.port[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_reply(data, size);
	check_choice(data, size);
	return 0;
}
