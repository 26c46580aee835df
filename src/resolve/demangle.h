/* SPDX-License-Identifier: MIT */
/*
 * Readable names for mangled symbols: C++ (Itanium ABI, "_Z...") and Rust
 * (legacy "_ZN...17h<hash>E" and v0 "_R..."), by libiberty's demanglers,
 * the ones binutils and GDB use. Profiles show the readable name and keep
 * the mangled one (pprof's system_name).
 */
#ifndef CPROF_DEMANGLE_H
#define CPROF_DEMANGLE_H

#include <stddef.h>

/*
 * Writes the readable form of name into buf (NUL-terminated) and returns its
 * length. Returns 0, buf untouched past its first byte, when name is not
 * mangled, is malformed, or its readable form does not fit in size - 1 bytes:
 * the caller then keeps the raw name, never a part of one.
 */
size_t demangle__name(const char *name, char *buf, size_t size);

#endif
