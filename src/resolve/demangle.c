// SPDX-License-Identifier: MIT
/*
 * Demangling through libiberty's callback entry points, which write the
 * result in pieces and allocate nothing but their own working state.
 *
 * Rust goes first: a legacy Rust name is also a valid C++ name, and C++
 * would show it as "std::rt::lang_start::h1234..." with the hash. Rust names
 * are shown without the hash (what rustc's backtraces do); C++ names with
 * their parameter types, so overloads stay apart, as c++filt shows them.
 */
#include <stdbool.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "resolve/demangle.h"

/*
 * libiberty sizes its working arrays from the name's length, on the stack:
 * about 100 bytes per character. Longer names (rare even in heavy C++
 * templates) are left as they are.
 */
#define MAX_MANGLED_LEN 8192

struct out {
	char *buf;
	size_t size;
	size_t len;
	bool overflow;
};

static void append(const char *s, size_t n, void *opaque)
{
	struct out *o = opaque;

	if (!n)
		return;
	if (o->overflow || n >= o->size - o->len) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static bool finish(struct out *o, int ok)
{
	if (!ok || o->overflow || !o->len) {
		o->len = 0;
		o->overflow = false;
		o->buf[0] = '\0';
		return false;
	}
	o->buf[o->len] = '\0';
	return true;
}

size_t demangle__name(const char *name, char *buf, size_t size)
{
	struct out o = {.buf = buf, .size = size};

	if (!buf || size < 2)
		return 0;
	buf[0] = '\0';
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
	    strnlen(name, MAX_MANGLED_LEN + 1) > MAX_MANGLED_LEN)
		return 0;
	if (finish(&o, rust_demangle_callback(name, DMGL_NO_OPTS, append, &o)))
		return o.len;
	if (name[1] == 'Z' &&
	    finish(&o, cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI, append, &o)))
		return o.len;
	return 0;
}
