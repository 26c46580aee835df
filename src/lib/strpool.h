/* SPDX-License-Identifier: MIT */
/*
 * String interning: each distinct string is stored once, at a pointer that
 * stays valid until strpool__free. Equal strings then compare equal by pointer,
 * which is what lets the profile model deduplicate frames and samples cheaply,
 * and the 0-based ids (in order of first insertion) are exactly what a pprof
 * string table needs.
 */
#ifndef CPROF_STRPOOL_H
#define CPROF_STRPOOL_H

#include <stddef.h>

struct strpool;

struct strpool *strpool__new(void);
void strpool__free(struct strpool *set);

/* Interns a copy of s; returns its id, or -ENOMEM. */
long strpool__add(struct strpool *set, const char *s);
/* The interned string with that id, or NULL if there is none. */
const char *strpool__str(const struct strpool *set, size_t id);
size_t strpool__count(const struct strpool *set);

#endif
