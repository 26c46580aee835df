/* SPDX-License-Identifier: MIT */
/*
 * A cancel token that a signal handler can trigger: an eventfd that becomes
 * readable, once and for good, when triggered. Whoever waits on a socket
 * polls the token's descriptor beside it, so a Ctrl-C ends the wait at once
 * without any flag being polled across threads or in sleep slices.
 */
#ifndef CPROF_CANCEL_H
#define CPROF_CANCEL_H

#include <stdbool.h>
#include <stdint.h>

struct cancel;

int cancel__new(struct cancel **out);
void cancel__free(struct cancel *c);
/* Async-signal-safe (one write(), errno kept): meant for signal handlers. */
void cancel__trigger(struct cancel *c);
bool cancel__triggered(const struct cancel *c);
/* Readable once triggered; poll it for POLLIN beside the descriptors waited on. */
int cancel__fd(const struct cancel *c);
/* Waits up to ms; true if triggered by then. A NULL token only waits. */
bool cancel__wait(const struct cancel *c, int ms);
/*
 * Waits for events on fd until deadline (clock__mono_ms), or until the token
 * (NULL: none) is triggered: 0 (an error condition on fd is for the next
 * call on it to report), -ETIMEDOUT, -ECANCELED or a poll() error.
 */
int cancel__wait_fd(const struct cancel *c, int fd, short events, int64_t deadline);

#endif
