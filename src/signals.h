/* SPDX-License-Identifier: MIT */
/*
 * SIGINT and SIGTERM, from the first instruction of main to the last write.
 * The first signal asks the run to stop and keep what it has; a second one
 * ends cprof at once, removing a profile file not yet complete. The handler
 * only sets flags and makes async-signal-safe calls; the run reads them.
 */
#ifndef CPROF_SIGNALS_H
#define CPROF_SIGNALS_H

/*
 * Installs the handlers, then unblocks SIGINT and SIGTERM: a signal that was
 * sent before main (held pending by an inherited mask) is handled here too.
 */
void signals__install(void);
/* The first signal received, or 0. */
int signals__stop_requested(void);
/* A signal to pass on to the command: sent with kill(1), not by the terminal. */
int signals__to_forward(void);
struct cancel;

/*
 * While a one-shot upload runs, a signal ends it (the profile then goes to a
 * file) by triggering c, and does not abort cprof. NULL ends that phase.
 */
void signals__cancel_upload_with(struct cancel *c);
/* A file to remove should a second signal end cprof at once; NULL: none. */
void signals__remove_on_abort(const char *path);

#endif
