// SPDX-License-Identifier: MIT
/* Which bytes a terminal could act on, and their escapes; see term_text.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/term_text.h"

/* The length of a valid UTF-8 sequence at s (n left) and its code point, or 0 (RFC 3629). */
static size_t utf8_seq(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint8_t lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	*cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return len;
}

size_t term_text__char(const char *s, size_t n, bool *control)
{
	const uint8_t *u = (const uint8_t *)s;
	uint32_t cp = 0;
	size_t len;

	if (u[0] < 0x80) {
		*control = u[0] < 0x20 || u[0] == 0x7f;
		return 1;
	}
	len = utf8_seq(u, n, &cp);
	if (!len) {
		*control = true;
		return 1;
	}
	/* C1, and the embeddings, overrides and isolates that reorder what follows them. */
	*control = cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
	return len;
}

const char *term_text__escape(const char *s, char *buf, size_t size)
{
	size_t n = strlen(s), i = 0, off = 0, len, k;
	bool control;

	while (i < n) {
		len = term_text__char(s + i, n - i, &control);
		if (off + (control ? 4 * len : len) >= size)
			break;
		for (k = 0; k < len; k++) {
			if (control)
				off += (size_t)snprintf(buf + off, size - off, "\\x%02x",
							(unsigned char)s[i + k]);
			else
				buf[off++] = s[i + k];
		}
		i += len;
	}
	buf[off] = '\0';
	return buf;
}

bool term_text__blank(const char *s)
{
	size_t n = strlen(s), i = 0;
	bool control;

	while (i < n) {
		size_t len = term_text__char(s + i, n - i, &control);

		if (!control && s[i] != ' ')
			return false;
		i += len;
	}
	return true;
}
