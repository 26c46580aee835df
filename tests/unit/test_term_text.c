// SPDX-License-Identifier: MIT
/*
 * What a terminal could act on is escaped, and nothing else: C0, DEL, C1
 * in UTF-8 and as lone bytes, bidirectional overrides, broken UTF-8; plain
 * ASCII, accents and CJK stay as they are. A cut never splits an escape.
 */
#include <string.h>

#include "lib/term_text.h"
#include "test.h"

TEST(term_text_escapes_what_a_terminal_acts_on)
{
	char buf[256];

	CHECK_STR(term_text__escape("main", buf, sizeof(buf)), "main");
	CHECK_STR(term_text__escape("\033]0;pwned\007", buf, sizeof(buf)), "\\x1b]0;pwned\\x07");
	CHECK_STR(term_text__escape("a\nb\rc\td\x7f", buf, sizeof(buf)),
		  "a\\x0ab\\x0dc\\x09d\\x7f");
	/* U+009B (CSI) in UTF-8, and as a lone byte an 8-bit terminal reads as CSI. */
	CHECK_STR(term_text__escape("x\xc2\x9b"
				    "2Jy\x9b",
				    buf, sizeof(buf)),
		  "x\\xc2\\x9b2Jy\\x9b");
	/* U+202E RIGHT-TO-LEFT OVERRIDE; overlong '/', a surrogate, a cut sequence. */
	CHECK_STR(term_text__escape("\xe2\x80\xae"
				    "a",
				    buf, sizeof(buf)),
		  "\\xe2\\x80\\xaea");
	CHECK_STR(term_text__escape("\xc0\xaf\xed\xa0\x80\xe6\x97", buf, sizeof(buf)),
		  "\\xc0\\xaf\\xed\\xa0\\x80\\xe6\\x97");
	CHECK_STR(term_text__escape("\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", buf,
				    sizeof(buf)),
		  "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
}

TEST(term_text_cuts_between_characters)
{
	char buf[8];

	CHECK_STR(term_text__escape("abc\033def", buf, sizeof(buf)), "abc\\x1b");
	CHECK_STR(term_text__escape("abcd\033ef", buf, sizeof(buf)), "abcd");
	CHECK_STR(term_text__escape("ab\xc3\xa9\xc3\xa9\xc3\xa9", buf, sizeof(buf)),
		  "ab\xc3\xa9\xc3\xa9");
	CHECK_STR(term_text__escape("abcdefghij", buf, 1), "");
}

TEST(term_text_char_lengths)
{
	bool control;

	CHECK_INT(term_text__char("\xe6\x97\xa5", 3, &control), ==, 3);
	CHECK(!control);
	CHECK_INT(term_text__char("\xe6\x97\xa5", 2, &control), ==, 1);
	CHECK(control);
	CHECK_INT(term_text__char("\xc2\x85", 2, &control), ==, 2);
	CHECK(control);
	CHECK_INT(term_text__char("\xf4\x90\x80\x80", 4, &control), ==, 1);
	CHECK(control);
	CHECK_INT(term_text__char(" ", 1, &control), ==, 1);
	CHECK(!control);
}

/* A name that shows nothing to tell it by: a list shows something else for it. */
TEST(term_text_blank_names)
{
	CHECK(term_text__blank(""));
	CHECK(term_text__blank("   "));
	CHECK(term_text__blank("\x01\x1b\t"));
	CHECK(term_text__blank(" \xc2\x9b\xff"));
	CHECK(!term_text__blank("sh"));
	CHECK(!term_text__blank(" a "));
	CHECK(!term_text__blank("\x1b[2J"));
	CHECK(!term_text__blank("\xc3\xa9"));
}
