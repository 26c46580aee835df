// SPDX-License-Identifier: MIT
#include <time.h>

#include "lib/clock.h"

static uint64_t read_ns(clockid_t clk)
{
	struct timespec ts;

	/* Cannot fail for these clocks with a valid pointer. */
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock__mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

int64_t clock__mono_ms(void)
{
	return (int64_t)(read_ns(CLOCK_MONOTONIC) / 1000000);
}

uint64_t clock__real_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}
