// SPDX-License-Identifier: MIT
/*
 * The cancel token: it stays triggered, and a trigger from a signal handler
 * ends a wait at once.
 */
#include "cancel_alarm.h"
#include "lib/cancel.h"
#include "test.h"

TEST(cancel_token_stays_triggered)
{
	struct cancel *c;
	int64_t t0;

	CHECK_INT(cancel__new(&c), ==, 0);
	CHECK(!cancel__triggered(c));
	t0 = cancel_alarm__now_ms();
	CHECK(!cancel__wait(c, 50));
	CHECK_INT(cancel_alarm__now_ms() - t0, >=, 50);
	CHECK(!cancel__wait(NULL, 10));
	cancel__trigger(c);
	cancel__trigger(c);
	CHECK(cancel__triggered(c));
	CHECK(cancel__triggered(c));
	CHECK(cancel__wait(c, 60000));
	cancel__free(c);
	cancel__free(NULL);
}

TEST(cancel_token_from_a_signal_ends_a_wait)
{
	struct cancel *c;
	int64_t t0;

	CHECK_INT(cancel__new(&c), ==, 0);
	t0 = cancel_alarm__now_ms();
	cancel_alarm__start(c, 100);
	CHECK(cancel__wait(c, 20000));
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 5000);
	cancel__free(c);
}
