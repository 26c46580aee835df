// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"

void sbuf__reserve(struct sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *d;

	if (b->err || n <= b->cap - b->len)
		return;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return;
		}
		cap *= 2;
	}
	d = realloc(b->data, cap);
	if (!d) {
		b->err = -ENOMEM;
		return;
	}
	b->data = d;
	b->cap = cap;
}

void sbuf__add(struct sbuf *b, const char *s, size_t n)
{
	sbuf__reserve(b, n);
	if (b->err || !n)
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void sbuf__str(struct sbuf *b, const char *s)
{
	sbuf__add(b, s, strlen(s));
}

void sbuf__printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Most pieces are short: one try into the room there is, a second once it is made. */
	sbuf__reserve(b, 256);
	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		sbuf__reserve(b, (size_t)n + 1);
		if (b->err)
			return;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}
