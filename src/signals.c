// SPDX-License-Identifier: MIT
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "lib/cancel.h"
#include "signals.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t forward_signal;
/* Read by the handler, so lock-free atomics: set while a one-shot upload runs. */
static _Atomic(struct cancel *) upload_cancel;
static _Atomic(const char *) abort_path;
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the signal handler reads pointers");

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	static const char msg[] = "cprof: interrupted again, exiting without a profile\n";
	struct cancel *c = atomic_load(&upload_cancel);
	const char *path = atomic_load(&abort_path);

	(void)uctx;
	/* During an upload a signal ends the exchange; the profile then goes to a file. */
	if (c) {
		cancel__trigger(c);
		if (!stop_requested)
			stop_requested = sig;
		return;
	}
	if (stop_requested) {
		/* A second signal means "now": no profile, no waiting, no partial file. */
		if (path)
			unlink(path);
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(130);
		_exit(130);
	}
	stop_requested = sig;
	/* A terminal's Ctrl-C already reached the command; a kill(1) did not. */
	if (info && info->si_code == SI_USER && !forward_signal)
		forward_signal = sig;
}

void signals__install(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	/*
	 * SA_RESTART: a signal during setup must not fail a read() or bpf() call
	 * with EINTR; the waits that should end early (poll) are not restarted.
	 */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int signals__stop_requested(void)
{
	return stop_requested;
}

int signals__to_forward(void)
{
	return forward_signal;
}

void signals__cancel_upload_with(struct cancel *c)
{
	atomic_store(&upload_cancel, c);
}

void signals__remove_on_abort(const char *path)
{
	atomic_store(&abort_path, path);
}
