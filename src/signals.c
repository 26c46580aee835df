// SPDX-License-Identifier: MIT
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t forward_signal;
static volatile sig_atomic_t *volatile cancel_flag;
static const char *volatile abort_path;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	static const char msg[] = "cprof: interrupted again, exiting without a profile\n";
	const char *path = abort_path;
	volatile sig_atomic_t *cancel = cancel_flag;

	(void)uctx;
	if (stop_requested && !cancel) {
		/* A second signal means "now": no profile, no waiting, no partial file. */
		if (path)
			unlink(path);
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(130);
		_exit(130);
	}
	/* During an upload a signal ends the exchange; the profile then goes to a file. */
	if (cancel) {
		*cancel = 1;
		cancel_flag = NULL;
	}
	if (!stop_requested)
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

void signals__cancel_upload_with(volatile sig_atomic_t *flag)
{
	cancel_flag = flag;
}

void signals__remove_on_abort(const char *path)
{
	abort_path = path;
}
