// SPDX-License-Identifier: MIT
/*
 * demangle__name on known pairs (C++ as c++filt prints them; Rust legacy and
 * v0 without hashes, as rustc's backtraces print them), names that must be
 * left alone, and a mutation run over malformed names under ASan/UBSan:
 * no crash, no read past the input, no write past the buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/demangle.h"
#include "test.h"

static const char *dm(const char *name)
{
	static char buf[1024];

	return demangle__name(name, buf, sizeof(buf)) ? buf : NULL;
}

TEST(demangle_cpp_pairs)
{
	CHECK_STR(dm("_ZN2ns3Foo3hotEi"), "ns::Foo::hot(int)");
	CHECK_STR(dm("_Z1fv"), "f()");
	CHECK_STR(dm("_ZNSt6vectorIiSaIiEE9push_backERKi"),
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	CHECK_STR(dm("_ZN3foo3barEv.part.0"), "foo::bar() [clone .part.0]");
	CHECK_STR(dm("_ZZ4mainENKUlvE_clEv"), "main::{lambda()#1}::operator()() const");
	CHECK_STR(dm("_ZN1aE"), "a");
}

TEST(demangle_rust_legacy_pairs)
{
	CHECK_STR(dm("_ZN7mycrate4hot217h6b3a7f0d1c9e2a54E"), "mycrate::hot2");
	CHECK_STR(dm("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$"
		     "u7b$closure$u7d$$u7d$$GT$17h6b3a7f0d1c9e2a54E"),
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

TEST(demangle_rust_v0_pairs)
{
	CHECK_STR(dm("_RNvCs1234_7mycrate8hot_rust"), "mycrate::hot_rust");
	CHECK_STR(dm("_RNvMNtCs9ltgdHTiPiY_4core3fmtNtB2_9Formatter3pad"),
		  "<core::fmt::Formatter>::pad");
	CHECK_STR(dm("_RINvNtCs1234_3std2io5printINtNtB4_5Write3FooEEB4_"),
		  "std::io::print::<std::Write::Foo<>>");
}

TEST(demangle_leaves_other_names_alone)
{
	char buf[64] = "x";

	CHECK(dm("main") == NULL);
	CHECK(dm("msort_with_tmp.part.0") == NULL);
	CHECK(dm("_Z") == NULL);
	CHECK(dm("_R") == NULL);
	CHECK(dm("_Zfoo") == NULL);
	CHECK(dm("") == NULL);
	CHECK(dm(NULL) == NULL);
	CHECK_INT(demangle__name("_Z1fv", buf, 0), ==, 0);
	CHECK_STR(buf, "x");
	CHECK_INT(demangle__name("_Z1fv", buf, 1), ==, 0);
	CHECK_STR(buf, "x");
}

TEST(demangle_too_long_keeps_raw_name)
{
	char small[8] = "", *big;
	size_t n = 20000, i;

	/* "std::vector<int, std::allocator<int> >::push_back(int const&)" needs 62 bytes. */
	CHECK_INT(demangle__name("_ZNSt6vectorIiSaIiEE9push_backERKi", small, sizeof(small)), ==,
		  0);
	CHECK_STR(small, "");
	/* A valid but huge name: left alone, without using its length's worth of stack. */
	big = malloc(n + 8);
	CHECK(big);
	memcpy(big, "_ZN", 3);
	for (i = 3; i + 4 < n; i += 2)
		memcpy(big + i, "1a", 2);
	memcpy(big + i, "Ev", 3);
	CHECK(dm(big) == NULL);
	free(big);
}

/*
 * Names whose demangling grows exponentially, or loops on a count read from
 * the name, fail at once (third_party/patches/libiberty): unpatched, c++filt
 * spends minutes on the first and the Rust one loops for 2^60 rounds.
 */
TEST(demangle_explosive_names_fail_fast)
{
	char name[512] = "_Z1fI1x1AIS0_S0_E";
	size_t len = strlen(name);
	int k;

	/* S2_ is A<x, x>; each "S1_IS<n>_S<n>_E" is A<that, that>: 2^30 copies of "x". */
	for (k = 2; k < 32; k++)
		len += snprintf(name + len, sizeof(name) - len, "S1_IS%c_S%c_E",
				"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k],
				"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k]);
	strcat(name, "Evv");
	CHECK(dm(name) == NULL);
	/* The same, small enough to print: the bound only stops runaway output. */
	CHECK_STR(dm("_Z1fI1x1AIS0_S0_ES1_IS2_S2_EEvv"),
		  "void f<x, A<x, x>, A<A<x, x>, A<x, x> > >()");
	/* A binder of 62^11 lifetimes ("G" + base-62 count). */
	CHECK(dm("_RINvNtC3std3fooGzzzzzzzzzzzz_FEuE") == NULL);
	CHECK(dm("_RNvINtCs34_3sI_6ZlfFFFFGGraoz2_Z") == NULL);
}

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

TEST(demangle_mutated_names_do_not_crash)
{
	static const char *seeds[] = {
		"_ZN2ns3Foo3hotEi",
		"_ZNSt6vectorIiSaIiEE9push_backERKi",
		"_ZZ4mainENKUlvE_clEv",
		"_ZN7mycrate4hot217h6b3a7f0d1c9e2a54E",
		"_RNvMNtCs9ltgdHTiPiY_4core3fmtNtB2_9Formatter3pad",
		"_RINvNtCs1234_3std2io5printINtNtB4_5Write3FooEEB4_",
		"_ZSt4sortIN9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEEEvT_S7_",
	};
	static const char alphabet[] = "_ZRNvIEST0123456789abcdefghijklmnopqrstuvwxyzB$.KCsMX";
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	char in[128], out[256];
	int round, named = 0;

	for (round = 0; round < 200000; round++) {
		const char *seed = seeds[round % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t len = strlen(seed), edits, k, r;

		memcpy(in, seed, len + 1);
		edits = 1 + next_rand(&rng) % 4;
		for (k = 0; k < edits; k++) {
			r = next_rand(&rng);
			size_t pos = 2 + (r >> 8) % (len - 1);
			char c = alphabet[(r >> 32) % (sizeof(alphabet) - 1)];

			switch (r % 3) {
			case 0: /* replace */
				if (pos < len)
					in[pos] = c;
				break;
			case 1: /* insert */
				if (len + 1 < sizeof(in) && pos <= len) {
					memmove(in + pos + 1, in + pos, len - pos + 1);
					in[pos] = c;
					len++;
				}
				break;
			default: /* delete */
				if (pos < len) {
					memmove(in + pos, in + pos + 1, len - pos);
					len--;
				}
			}
		}
		/* The output buffer is exact-size on the heap so ASan sees any overrun. */
		char *heap = malloc(64);

		CHECK(heap);
		if (demangle__name(in, heap, 64)) {
			CHECK(strlen(heap) < 64);
			named++;
		}
		free(heap);
		if (demangle__name(in, out, sizeof(out)))
			CHECK(strlen(out) < sizeof(out));
	}
	/* The mutations must also reach the demanglers' success paths. */
	CHECK_INT(named, >, 1000);
}
