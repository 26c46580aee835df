// SPDX-License-Identifier: MIT
/*
 * The run's time for loading (lib/load_budget.h): over at its deadline, and
 * at the grace after a signal that a load under way notices itself.
 */
#include <stdint.h>

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "test.h"

static int signalled;

static int stop_requested(void)
{
	return signalled;
}

TEST(load_budget_over_by_deadline)
{
	struct load_budget b = {.deadline_ns = UINT64_MAX};

	CHECK(!load_budget__over(NULL));
	CHECK(!load_budget__over(&b));
	b.deadline_ns = 1;
	CHECK(load_budget__over(&b));
}

/* A signal leaves loads the grace from when it is seen, not more, and not less. */
TEST(load_budget_signal_leaves_the_grace)
{
	const uint64_t grace = LOAD_GRACE_MS * 1000000ull;
	struct load_budget b = {.stop_requested = stop_requested};
	uint64_t before, after;

	signalled = 0;
	CHECK(!load_budget__over(&b));
	CHECK_U64(b.deadline_ns, ==, 0);
	signalled = 2;
	before = clock__mono_ns();
	CHECK(!load_budget__over(&b));
	after = clock__mono_ns();
	CHECK_U64(b.deadline_ns, >=, before + grace);
	CHECK_U64(b.deadline_ns, <=, after + grace);
	/* Seen again later, it does not move the end. */
	b.deadline_ns = 1;
	CHECK(load_budget__over(&b));
	CHECK_U64(b.deadline_ns, ==, 1);
}
