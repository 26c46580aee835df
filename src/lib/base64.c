// SPDX-License-Identifier: MIT
/* Base64 (RFC 4648, with padding); see base64.h. */
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"

char *base64__encode(const char *in)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), i, o = 0;
	const unsigned char *s = (const unsigned char *)in;
	char *out = malloc((n + 2) / 3 * 4 + 1);

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = tab[s[i] >> 2];
		out[o++] = tab[(s[i] & 3) << 4 | s[i + 1] >> 4];
		out[o++] = tab[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		out[o++] = tab[s[i + 2] & 63];
	}
	if (i < n) {
		out[o++] = tab[s[i] >> 2];
		if (i + 1 < n) {
			out[o++] = tab[(s[i] & 3) << 4 | s[i + 1] >> 4];
			out[o++] = tab[(s[i + 1] & 15) << 2];
		} else {
			out[o++] = tab[(s[i] & 3) << 4];
			out[o++] = '=';
		}
		out[o++] = '=';
	}
	out[o] = '\0';
	return out;
}
