/* SPDX-License-Identifier: MIT */
/*
 * A growing text buffer for the encoders that write text (folded stacks, the
 * SVG flame graph). The first allocation failure is kept in err and every
 * later call does nothing, so a writer checks once at the end instead of
 * after every piece.
 */
#ifndef CPROF_SBUF_H
#define CPROF_SBUF_H

#include <stddef.h>

struct sbuf {
	char *data;
	size_t len;
	size_t cap;
	int err; /* 0, or -ENOMEM once an allocation failed */
};

/* Room for n more bytes (data may move). */
void sbuf__reserve(struct sbuf *b, size_t n);
void sbuf__add(struct sbuf *b, const char *s, size_t n);
void sbuf__str(struct sbuf *b, const char *s);
void sbuf__printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
