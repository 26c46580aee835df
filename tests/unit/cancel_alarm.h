/* SPDX-License-Identifier: MIT */
/*
 * Triggers a cancel token from a signal handler (SIGALRM) after a delay, the
 * way a Ctrl-C reaches cprof's upload: tests that a wait ends at once.
 */
#ifndef CPROF_TEST_CANCEL_ALARM_H
#define CPROF_TEST_CANCEL_ALARM_H

#include <stdint.h>

struct cancel;

void cancel_alarm__start(struct cancel *c, int ms);
/* CLOCK_MONOTONIC in ms, to time how soon a wait ended. */
int64_t cancel_alarm__now_ms(void);

#endif
