// SPDX-License-Identifier: MIT
/* Reads of mapped files cut off by SIGBUS; see sigbus.h. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/sigbus.h"

/* The innermost sigbus__call of this thread, NULL outside any. */
static __thread sigjmp_buf *volatile guard;
static __thread bool unblocked;
static _Atomic uint64_t faults;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (guard)
		siglongjmp(*guard, 1);
	/* Not a read cprof guards: the default action, as without a handler. */
	signal(sig, SIG_DFL);
	raise(sig);
}

int sigbus__install(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO};

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

int sigbus__call(int (*fn)(void *), void *arg)
{
	sigjmp_buf jb;
	sigjmp_buf *volatile outer = guard;
	sigset_t bus;
	int err;

	/*
	 * Threads that block every signal (so that SIGINT finds the main one)
	 * would die of a blocked SIGBUS: the kernel resets its handler then.
	 */
	if (!unblocked) {
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		unblocked = true;
	}
	/* savemask: the handler returns by siglongjmp, with SIGBUS still blocked otherwise. */
	if (sigsetjmp(jb, 1)) {
		guard = outer;
		atomic_fetch_add(&faults, 1);
		return -EIO;
	}
	guard = &jb;
	err = fn(arg);
	guard = outer;
	return err;
}

uint64_t sigbus__faults(void)
{
	return atomic_load(&faults);
}
