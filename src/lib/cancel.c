// SPDX-License-Identifier: MIT
/*
 * Cancel token; see cancel.h. The eventfd counter is never read back, so a
 * triggered token stays readable for every later poll.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/cancel.h"
#include "lib/clock.h"

struct cancel {
	int fd;
};

int cancel__new(struct cancel **out)
{
	struct cancel *c;
	int err;

	*out = NULL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->fd < 0) {
		err = -errno;
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void cancel__free(struct cancel *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

void cancel__trigger(struct cancel *c)
{
	const uint64_t one = 1;
	int saved = errno;
	ssize_t n;

	/* Only a counter at its maximum refuses the write, and the token is triggered then. */
	n = write(c->fd, &one, sizeof(one));
	(void)n;
	errno = saved;
}

bool cancel__wait(const struct cancel *c, int ms)
{
	int64_t deadline = clock__mono_ms() + (ms > 0 ? ms : 0);

	for (;;) {
		struct pollfd p = {.fd = c ? c->fd : -1, .events = POLLIN};
		int64_t left = deadline - clock__mono_ms();
		int n;

		n = poll(&p, 1, (int)(left > 0 ? left : 0));
		if (n > 0)
			return true;
		/* A signal that did not trigger the token (EINTR) leaves the wait to run out. */
		if (left <= 0 || (n < 0 && errno != EINTR))
			return false;
	}
}

int cancel__wait_fd(const struct cancel *c, int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = {
			{.fd = fd, .events = events},
			{.fd = c ? c->fd : -1, .events = POLLIN},
		};
		int64_t left = deadline - clock__mono_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(p, 2, (int)(left < INT_MAX ? left : INT_MAX));
		if (n > 0 && p[1].revents)
			return -ECANCELED;
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

bool cancel__triggered(const struct cancel *c)
{
	return cancel__wait(c, 0);
}

int cancel__fd(const struct cancel *c)
{
	return c->fd;
}
