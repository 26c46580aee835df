/* SPDX-License-Identifier: MIT */
#ifndef CPROF_FUZZ_CSTRING_H
#define CPROF_FUZZ_CSTRING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Names are C strings: the input up to its first NUL, in a buffer of its own (free it). */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

#endif
