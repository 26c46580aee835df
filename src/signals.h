/* SPDX-License-Identifier: MIT */
/*
 * SIGINT and SIGTERM, from the first instruction of main to the last write.
 * The first signal asks the run to stop and keep what it has; a second one
 * ends cprof at once, removing a profile file not yet complete. The handler
 * only sets flags and makes async-signal-safe calls; the run reads them.
 */
#ifndef CPROF_SIGNALS_H
#define CPROF_SIGNALS_H

#include <signal.h>

/*
 * Installs the handlers, then unblocks SIGINT and SIGTERM: a signal that was
 * sent before main (held pending by an inherited mask) is handled here too.
 */
void signals__install(void);
/* The first signal received, or 0. */
int signals__stop_requested(void);
/* A signal to pass on to the command: sent with kill(1), not by the terminal. */
int signals__to_forward(void);
/*
 * While a one-shot upload runs, a first signal also ends it (the profile then
 * goes to a file): *flag is set to 1. NULL ends that phase.
 */
void signals__cancel_upload_with(volatile sig_atomic_t *flag);
/* A file to remove should a second signal end cprof at once; NULL: none. */
void signals__remove_on_abort(const char *path);

#endif
