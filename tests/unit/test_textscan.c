// SPDX-License-Identifier: MIT
#include "lib/textscan.h"
#include "test.h"

TEST(textscan_hex_bounds_and_overflow)
{
	const char *s = "7fff0000-x", *p = s;
	uint64_t v = 0;

	CHECK(textscan__hex(&p, s + 8, &v));
	CHECK_U64(v, ==, 0x7fff0000);
	CHECK(p == s + 8);
	/* Stops at `end` even when more digits follow. */
	p = s;
	CHECK(textscan__hex(&p, s + 2, &v));
	CHECK_U64(v, ==, 0x7f);
	p = "ffffffffffffffff";
	CHECK(textscan__hex(&p, p + 16, &v));
	CHECK_U64(v, ==, UINT64_MAX);
	p = "10000000000000000"; /* 17 digits */
	CHECK(!textscan__hex(&p, p + 17, &v));
	p = "-1";
	CHECK(!textscan__hex(&p, p + 2, &v));
}

TEST(textscan_dec_overflow)
{
	const char *p = "18446744073709551615 ";
	uint64_t v = 0;

	CHECK(textscan__dec(&p, p + 21, &v));
	CHECK_U64(v, ==, UINT64_MAX);
	p = "18446744073709551616";
	CHECK(!textscan__dec(&p, p + 20, &v));
	p = "";
	CHECK(!textscan__dec(&p, p, &v));
}
