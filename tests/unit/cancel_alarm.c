// SPDX-License-Identifier: MIT
/* The signal-driven trigger of cancel_alarm.h. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cancel_alarm.h"
#include "lib/cancel.h"
#include "test.h"

static _Atomic(struct cancel *) target;

static void on_alarm(int sig)
{
	struct cancel *c = atomic_load(&target);

	(void)sig;
	if (c)
		cancel__trigger(c);
}

void cancel_alarm__start(struct cancel *c, int ms)
{
	struct itimerval it = {.it_value = {ms / 1000, (ms % 1000) * 1000}};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	atomic_store(&target, c);
	CHECK_INT(sigaction(SIGALRM, &sa, NULL), ==, 0);
	CHECK_INT(setitimer(ITIMER_REAL, &it, NULL), ==, 0);
}

int64_t cancel_alarm__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
