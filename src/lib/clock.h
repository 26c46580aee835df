/* SPDX-License-Identifier: MIT */
/*
 * The clocks cprof reads: monotonic for intervals and deadlines, which must
 * not jump when the wall clock is set, and real time only for the timestamps
 * that profiles and batches carry.
 */
#ifndef CPROF_CLOCK_H
#define CPROF_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock__mono_ns(void);
/* The same in milliseconds, signed: deadlines are compared through differences. */
int64_t clock__mono_ms(void);
/* CLOCK_REALTIME in nanoseconds since the epoch. */
uint64_t clock__real_ns(void);

#endif
