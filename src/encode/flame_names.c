// SPDX-License-Identifier: MIT
/*
 * The kind of a frame read back from a file (-i: folded text, pprof), where
 * only its name is left: a guess, made here alone. Frames of a profile
 * cprof takes carry their kind (resolve/frame_kind.h) and are never guessed
 * at: a user's function may be called "[truncated: x]" or "x_[k]".
 */
#include <stdbool.h>
#include <string.h>

#include "encode/flame.h"
#include "resolve/frame_kind.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* MODULE+0xHEX, as the symbolizer names code no symbol covers. */
static bool module_offset(const char *name, size_t len)
{
	const char *plus = NULL, *p;
	size_t i;

	for (i = 0; i < len; i++)
		if (name[i] == '+')
			plus = name + i;
	if (!plus || plus == name || plus + 3 > name + len || plus[1] != '0' || plus[2] != 'x')
		return false;
	for (p = plus + 3; p < name + len; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
		      (*p >= 'A' && *p <= 'F')))
			return false;
	return p > plus + 3;
}

enum flame_kind flame__kind_of_name(const char *name, size_t *len)
{
	size_t n = strlen(name);

	*len = n;
	if (n > 4 && !strcmp(name + n - 4, "_[k]")) {
		*len = n - 4;
		return FLAME_KERNEL;
	}
	if (n > 4 && !strcmp(name + n - 4, "_[j]")) {
		*len = n - 4;
		return FLAME_JIT;
	}
	if (has_prefix(name, FRAME_TRUNCATED_PREFIX))
		return FLAME_TRUNCATED;
	if (!strcmp(name, "[no stack]") ||
	    (name[0] == '[' && name[n - 1] == ']' && strstr(name, " lost")))
		return FLAME_LOST;
	if (!strcmp(name, "[unknown]") || has_prefix(name, "[kernel 0x") || module_offset(name, n))
		return FLAME_UNNAMED;
	return FLAME_USER;
}
