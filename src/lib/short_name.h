/* SPDX-License-Identifier: MIT */
/*
 * Demangled C++ and Rust names are signatures: return type, template
 * arguments, parameter lists, qualifiers. A list that shows one function a
 * line wants the function: "std::vector<int> ns::Foo<long>::bar(int) const"
 * becomes "ns::Foo::bar", the way `go tool pprof` simplifies the names it
 * demangles itself (no parameters, no template arguments, no return type).
 * The profile keeps the whole name.
 */
#ifndef CPROF_SHORT_NAME_H
#define CPROF_SHORT_NAME_H

#include <stddef.h>

/*
 * name without its return type, template argument lists and parameter
 * lists (with the qualifiers after them), into buf (size > 0; cut to fit).
 * Kept: operator names ("operator<<", "operator()"), "(anonymous
 * namespace)", a Rust qualified path's "<T as Trait>" (its own arguments
 * dropped), "[clone .cold]" and "[abi:cxx11]" tags. Returns buf.
 */
const char *short_name__trim(const char *name, char *buf, size_t size);

#endif
