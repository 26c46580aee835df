/* SPDX-License-Identifier: MIT */
/*
 * Bounded scanning of untrusted text (/proc/PID/maps, /proc/kallsyms, perf
 * maps): every function stops at `end`, never needs a NUL terminator, and
 * rejects numbers that would overflow instead of wrapping.
 */
#ifndef CPROF_TEXTSCAN_H
#define CPROF_TEXTSCAN_H

#include <stdbool.h>
#include <stdint.h>

/* Up to 16 hex digits; advances *p. False if there are none or too many. */
bool textscan__hex(const char **p, const char *end, uint64_t *out);
/* Decimal digits without overflow; advances *p. False if none or too large. */
bool textscan__dec(const char **p, const char *end, uint64_t *out);

#endif
