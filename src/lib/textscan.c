// SPDX-License-Identifier: MIT
#include "lib/textscan.h"

bool textscan__hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (s < end) {
		char c = *s;
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (++n > 16)
			return false;
		v = v << 4 | d;
		s++;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}

bool textscan__dec(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		unsigned int d = *s - '0';

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
		n++;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}
