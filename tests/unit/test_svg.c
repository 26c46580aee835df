// SPDX-License-Identifier: MIT
/*
 * The flame graph: the tree and its layout (order, widths, merging under
 * the minimum width), the SVG's exact frames, escaping of hostile names,
 * a stack as deep as the sampler takes, and the kinds of a profile's frames.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "encode/flame.h"
#include "encode/folded_input.h"
#include "encode/svg.h"
#include "test.h"

static const struct svg_style plain = {.minwidth = SVG_DEFAULT_MINWIDTH};
static const struct svg_meta no_meta;

/* Adds a stack given as "a;b;c", all of kind USER. */
static void add_folded(struct flame *f, const char *stack, uint64_t count)
{
	uint32_t pieces[256], n = 0;
	char buf[1024], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		pieces[n] = flame__piece(f, tok, FLAME_USER);
		CHECK(pieces[n]);
		n++;
	}
	CHECK_INT(flame__add(f, pieces, n, count), ==, 0);
}

static struct flame *new_flame(void)
{
	struct flame *f = NULL;

	CHECK_INT(flame__new(&f), ==, 0);
	return f;
}

/* The boxes as "depth:name@start+count" lines. */
static char *boxes_text(struct flame *f, double min_share)
{
	struct flame_box *b;
	size_t n, i, off = 0;
	static char out[4096];

	CHECK_INT(flame__layout(f, min_share, &b, &n), ==, 0);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (b[i].kind == FLAME_MERGED)
			off += (size_t)snprintf(out + off, sizeof(out) - off,
						"%u:[%u merged]@%" PRIu64 "+%" PRIu64 "\n",
						b[i].depth, b[i].merged, b[i].start, b[i].count);
		else
			off += (size_t)snprintf(out + off, sizeof(out) - off,
						"%u:%s@%" PRIu64 "+%" PRIu64 "\n", b[i].depth,
						b[i].name, b[i].start, b[i].count);
		CHECK(off < sizeof(out));
	}
	free(b);
	return out;
}

TEST(flame_layout_order_and_offsets)
{
	struct flame *f = new_flame();

	add_folded(f, "main;work;hot_b", 30);
	add_folded(f, "main;work;hot_a", 70);
	add_folded(f, "main;init", 5);
	/* Equal prefixes merge; a frame's own samples (main: 2) leave room at its right. */
	add_folded(f, "main", 2);
	add_folded(f, "other", 3);
	CHECK_U64(flame__total(f), ==, 110);
	CHECK_STR(boxes_text(f, 0), "0:all@0+110\n"
				    "1:main@0+107\n"
				    "2:init@0+5\n"
				    "2:work@5+100\n"
				    "3:hot_a@5+70\n"
				    "3:hot_b@75+30\n"
				    "1:other@107+3\n");
	flame__free(f);
}

/*
 * Narrow children (under 2% of 1000 samples: under 20) become one box after
 * their wide siblings, drawn only when the merged box is wide enough itself;
 * what is under them is not drawn.
 */
TEST(flame_layout_merges_narrow_frames)
{
	struct flame *f = new_flame();

	add_folded(f, "main;a", 500);
	add_folded(f, "main;b;deep;deeper", 10);
	add_folded(f, "main;c", 15);
	add_folded(f, "main;d", 400);
	add_folded(f, "main;d;x", 19);
	add_folded(f, "main;d;y", 20);
	add_folded(f, "lonely", 19);
	add_folded(f, "zz", 17);
	CHECK_U64(flame__total(f), ==, 1000);
	CHECK_STR(boxes_text(f, 0.02), "0:all@0+1000\n"
				       "1:main@0+964\n"
				       "2:a@0+500\n"
				       "2:d@500+439\n"
				       "3:y@500+20\n"
				       "2:[2 merged]@939+25\n"
				       "1:[2 merged]@964+36\n");
	flame__free(f);
}

TEST(flame_kind_of_names)
{
	static const struct {
		const char *name;
		enum flame_kind kind;
		size_t len;
	} cases[] = {
		{"do_syscall_64_[k]", FLAME_KERNEL, 13},
		{"Interpreter_[j]", FLAME_JIT, 11},
		{"libc.so.6+0x2a1c0", FLAME_UNNAMED, 17},
		{"[anon]+0x7f0012", FLAME_UNNAMED, 15},
		{"[unknown]", FLAME_UNNAMED, 9},
		{"[kernel 0xffffffff81000000]", FLAME_UNNAMED, 27},
		{"[truncated: no unwind table]", FLAME_TRUNCATED, 28},
		{"[user stack lost: stack map collision]", FLAME_LOST, 38},
		{"[no stack]", FLAME_LOST, 10},
		{"operator+0x", FLAME_USER, 11},
		{"a+0xg", FLAME_USER, 5},
		{"+0x12", FLAME_USER, 5},
		{"_[k]", FLAME_USER, 4},
		{"std::vector<int>::push_back", FLAME_USER, 27},
	};
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(flame__kind_of_name(cases[i].name, &len), ==, cases[i].kind);
		CHECK_U64(len, ==, cases[i].len);
	}
}

static char *encode(struct flame *f, const struct svg_style *style, const struct svg_meta *meta)
{
	char *out;
	size_t len;

	CHECK_INT(svg__encode_flame(f, style, meta, &out, &len), ==, 0);
	CHECK_U64(len, ==, strlen(out));
	return out;
}

/* The text of the frames, from their <g> to the end of #frames. */
static char *frames_of(char *svg)
{
	char *from = strstr(svg, "<g id=\"frames\">\n"), *to;

	CHECK(from);
	from += strlen("<g id=\"frames\">\n");
	to = strstr(from, "</g>\n<script>");
	CHECK(to);
	*to = '\0';
	return from;
}

/*
 * Exact frames: edges at offset * 1180 / total, rounded to 1/100 px (1/3 of
 * 1180 is 393.33; the second child starts there and is 786.67 wide, so that
 * it ends where its parent does); a name cut to its room with "..", rows
 * from the bottom.
 */
TEST(svg_exact_frames)
{
	struct flame *f = new_flame();
	char *svg;

	add_folded(f, "a;b_is_a_longer_name_than_the_room_its_frame_has_so_it_is_cut_there", 1);
	add_folded(f, "a;c", 2);
	svg = encode(f, &plain, &no_meta);
	CHECK_STR(frames_of(svg),
		  "<g class=\"r\"><title>all (3 samples, 100.00%)</title><rect x=\"10.00\" "
		  "y=\"110\" width=\"1180.00\" height=\"15\" fill=\"rgb(205,205,205)\" rx=\"2\" "
		  "ry=\"2\"/><text x=\"13.00\" y=\"120.5\">all</text></g>\n"
		  "<g><title>a (3 samples, 100.00%)</title><rect x=\"10.00\" y=\"94\" "
		  "width=\"1180.00\" height=\"15\" fill=\"rgb(209,62,62)\" rx=\"2\" "
		  "ry=\"2\"/><text x=\"13.00\" y=\"104.5\">a</text></g>\n"
		  "<g><title>b_is_a_longer_name_than_the_room_its_frame_has_so_it_is_cut_there (1 "
		  "samples, 33.33%)</title><rect x=\"10.00\" y=\"78\" width=\"393.33\" "
		  "height=\"15\" fill=\"rgb(203,98,98)\" rx=\"2\" ry=\"2\"/><text x=\"13.00\" "
		  "y=\"88.5\">b_is_a_longer_name_than_the_room_its_frame_has_so_it_..</text></g>\n"
		  "<g><title>c (2 samples, 66.67%)</title><rect x=\"403.33\" y=\"78\" "
		  "width=\"786.67\" height=\"15\" fill=\"rgb(217,63,63)\" rx=\"2\" "
		  "ry=\"2\"/><text x=\"406.33\" y=\"88.5\">c</text></g>\n");
	free(svg);
	flame__free(f);
}

/* Parses "x=\"123.45\"" after key in s into hundredths. */
static uint64_t hundredths(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	unsigned long a, b;

	CHECK(p);
	CHECK_INT(sscanf(p + strlen(key), "%lu.%2lu", &a, &b), ==, 2);
	return a * 100 + b;
}

/*
 * Random trees with counts that do not divide 1180: every frame lies within
 * its parent (the frame before it one row down, in document order, or an
 * ancestor of that one), whatever the rounding.
 */
TEST(svg_children_inside_parents)
{
	struct svg_style all = {.minwidth = 0};
	uint64_t left[300] = {0}, right[300] = {0};
	uint32_t k = 12345, i, d;
	char stack[256], *svg, *g, *next;
	struct flame *f = new_flame();
	int y, y0 = -1;
	size_t nframes = 0;

	for (i = 0; i < 2000; i++) {
		size_t off = 0;

		for (d = 0; d < 6; d++) {
			k = k * 1103515245u + 12345u;
			off += (size_t)snprintf(stack + off, sizeof(stack) - off, "%sf%u",
						d ? ";" : "", (k >> 16) % 4);
		}
		add_folded(f, stack, (k >> 8) % 97 + 1);
	}
	svg = encode(f, &all, &no_meta);
	for (g = strstr(frames_of(svg), "<g"); g; g = next) {
		next = strstr(g + 2, "<g");
		y = atoi(strstr(g, " y=\"") + 4);
		if (y0 < 0)
			y0 = y;
		d = (uint32_t)(y0 - y) / 16;
		CHECK_INT(d, <, 300);
		left[d] = hundredths(g, " x=\"");
		right[d] = left[d] + hundredths(g, "width=\"");
		if (d) {
			CHECK_U64(left[d], >=, left[d - 1]);
			CHECK_U64(right[d], <=, right[d - 1]);
		}
		nframes++;
	}
	CHECK_U64(right[0], ==, 119000);
	CHECK_U64(nframes, >, 1000);
	free(svg);
	flame__free(f);
}

/* Names of any bytes stay text: escaped, made valid UTF-8, controls replaced, long ones cut. */
TEST(svg_escapes_hostile_names)
{
	static const struct {
		const char *name;
		const char *shown;
	} cases[] = {
		{"std::map<int, std::less<int> >::operator[]",
		 "std::map&lt;int, std::less&lt;int&gt; &gt;::operator[]"},
		{"operator<<(a&b, \"c\")", "operator&lt;&lt;(a&amp;b, &quot;c&quot;)"},
		{"</title></g><script>alert(1)</script>",
		 "&lt;/title&gt;&lt;/g&gt;&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"]]><!-- x -->", "]]&gt;&lt;!-- x --&gt;"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
		 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"},
		/* Invalid: a stray byte, overlong NUL, a surrogate, cut short, past U+10FFFF. */
		{"a\xff"
		 "b",
		 "a\xef\xbf\xbd"
		 "b"},
		{"\xc0\x80", "\xef\xbf\xbd\xef\xbf\xbd"},
		{"\xed\xa0\x80x", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx"},
		{"end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"},
		{"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		/* Controls XML forbids, and those it allows but no name should show. */
		{"tab\there\x01\x1f\x7f",
		 "tab\xef\xbf\xbdhere\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"\xef\xbf\xbe", "\xef\xbf\xbd"},
	};
	struct svg_style style = {.minwidth = 0, .title = "<&\"title\xff\">"};
	char want[512], *svg;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct flame *f = new_flame();
		uint32_t piece = flame__piece(f, cases[i].name, FLAME_USER);

		CHECK(piece);
		CHECK_INT(flame__add(f, &piece, 1, 1), ==, 0);
		svg = encode(f, &style, &no_meta);
		snprintf(want, sizeof(want), "<title>%s (1 samples, 100.00%%)</title>",
			 cases[i].shown);
		if (!strstr(svg, want))
			test_fail(__FILE__, __LINE__, "case %zu: no %s in %s", i, want,
				  strstr(svg, "<g id=\"frames\">"));
		CHECK(strstr(svg, "<text id=\"title\" x=\"600\" y=\"24\">&lt;&amp;&quot;title"
				  "\xef\xbf\xbd&quot;&gt;</text>"));
		/* Nothing but the frames' own markup: one <g, one <title> per frame. */
		CHECK(!strstr(strstr(svg, "<g id=\"frames\">"), "<script>alert"));
		free(svg);
		flame__free(f);
	}
}

/* The sampler's deepest stacks: 127 user frames under 127 kernel frames, root at the bottom. */
TEST(svg_deep_stack)
{
	struct flame *f = new_flame();
	struct svg_style inverted = {.minwidth = 0.1, .inverted = true};
	uint32_t pieces[254], i;
	char name[32], *svg, *last;
	size_t ng = 0;

	for (i = 0; i < 254; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		pieces[i] = flame__piece(f, name, i < 127 ? FLAME_USER : FLAME_KERNEL);
	}
	CHECK_INT(flame__add(f, pieces, 127, 3), ==, 0);
	CHECK_INT(flame__add(f, pieces, 254, 1), ==, 0);
	svg = encode(f, &plain, &no_meta);
	/* 255 rows: 78 above, 34 below. */
	CHECK(strstr(svg, "width=\"1200\" height=\"4192\" viewBox=\"0 0 1200 4192\""));
	for (last = strstr(svg, "<g id=\"frames\">") + 1; (last = strstr(last, "<g")); last++)
		ng++;
	CHECK_U64(ng, ==, 255);
	CHECK(strstr(svg, "<g><title>f126 (4 samples, 100.00%)</title><rect x=\"10.00\" "
			  "y=\"2110\""));
	CHECK(strstr(svg, "<g class=\"k\"><title>f253 (1 samples, 25.00%)</title><rect "
			  "x=\"10.00\" y=\"78\" width=\"295.00\""));
	free(svg);
	/* Inverted: the root at the top, the deepest frame at the bottom. */
	svg = encode(f, &inverted, &no_meta);
	CHECK(strstr(svg, "<title>all (4 samples, 100.00%)</title><rect x=\"10.00\" y=\"78\""));
	CHECK(strstr(svg, "<title>f253 (1 samples, 25.00%)</title><rect x=\"10.00\" y=\"4142\""));
	free(svg);
	flame__free(f);
}

/* The title and subtitle from what the session knows; --title moves the target down. */
TEST(svg_title_and_subtitle)
{
	struct flame *f = new_flame();
	struct svg_meta meta = {.target = "./app --fast",
				.host = "box",
				.kernel = "6.1.0-13-amd64",
				.time_ns = 1700000000123456789ull,
				.duration_ns = 3180000000ull,
				.hz = 499,
				.lost_known = true,
				.lost = 2};
	struct svg_style titled = {.minwidth = 0.1, .title = "Before the fix"};
	char *svg;

	add_folded(f, "main", 1498);
	svg = encode(f, &plain, &meta);
	CHECK(strstr(svg, "<text id=\"title\" x=\"600\" y=\"24\">./app --fast</text>\n"
			  "<text id=\"subtitle\" x=\"600\" y=\"44\">host box, Linux "
			  "6.1.0-13-amd64, 2023-11-14 22:13:20 UTC, 3.18 s at 499 Hz, 1,498 "
			  "samples, 2 lost</text>"));
	free(svg);
	svg = encode(f, &titled, &meta);
	CHECK(strstr(svg, ">Before the fix</text>\n<text id=\"subtitle\" x=\"600\" "
			  "y=\"44\">./app --fast, host box,"));
	free(svg);
	svg = encode(f, &plain, &no_meta);
	CHECK(strstr(svg, ">Flame Graph</text>\n<text id=\"subtitle\" x=\"600\" y=\"44\">1,498 "
			  "samples</text>"));
	free(svg);
	flame__free(f);
}

/* Self-contained: its script and style inline, no reference out of the file. */
TEST(svg_self_contained)
{
	struct flame *f = new_flame();
	char *svg, *p;

	add_folded(f, "main", 1);
	svg = encode(f, &plain, &no_meta);
	CHECK(strstr(svg, "<script><![CDATA[\n\"use strict\";"));
	CHECK(strstr(svg, "<style><![CDATA[\n"));
	for (p = svg; (p = strstr(p, "http")); p++)
		CHECK(!strncmp(p, "http://www.w3.org/2000/svg\"", 27));
	CHECK(!strstr(svg, "href="));
	CHECK(!strstr(svg, "@import"));
	free(svg);
	flame__free(f);
}

TEST(svg_empty_profile)
{
	struct flame *f = new_flame();
	char *svg;

	svg = encode(f, &plain, &no_meta);
	CHECK(strstr(svg, "<title>all (0 samples, 100.00%)</title><rect x=\"10.00\" y=\"78\" "
			  "width=\"1180.00\""));
	free(svg);
	flame__free(f);
}

/* A profile's frames, each drawn in its kind's family; process and thread levels first. */
TEST(svg_profile_kinds)
{
	struct profile_meta meta = {.hz = 99, .period_ns = 10101010};
	struct profile_mapping maps[] = {
		{.start = 0x1000, .limit = 0x9000, .path = "/bin/app", .build_id = ""},
		{.start = 0x7f0000, .limit = 0x7f9000, .path = "", .build_id = ""},
	};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x1100, .name = "main"},
		{.address = 0xffffffff81000010, .name = "do_syscall_64", .kernel = true},
		{.mapping = 2, .address = 0x7f0010, .name = "LInterpreter;run", .kind = FRAME_JIT},
		{.mapping = 1, .address = 0x1500, .name = "app+0x500", .kind = FRAME_UNNAMED},
		{.name = "[truncated: no unwind table]", .kind = FRAME_TRUNCATED},
		{.name = "[kernel stack lost: error]", .kind = FRAME_LOST, .kernel = true},
	};
	static const uint32_t s1[] = {2, 3, 1}, s2[] = {4, 5}, s3[] = {6, 1};
	struct profile_labels l1 = {.pid = 7, .tid = 8, .comm = "app", .thread_name = "worker"};
	struct profile *p = profile__new(&meta);
	struct svg_meta m = {0};
	char *svg;
	size_t len, i;

	CHECK(p);
	for (i = 0; i < 2; i++)
		CHECK_INT(profile__add_mapping(p, &maps[i]), ==, i + 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, s1, 3, &l1, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, s2, 2, &l1, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, s3, 2, &l1, 2), ==, 0);
	CHECK_INT(svg__encode(p, &plain, &m, &svg, &len), ==, 0);
	CHECK(strstr(svg, "<g class=\"p\"><title>app (10 samples, 100.00%)"));
	CHECK(strstr(svg, "<g class=\"p\"><title>worker/8 (10 samples, 100.00%)"));
	CHECK(strstr(svg, "<g><title>main (7 samples, 70.00%)"));
	CHECK(strstr(svg, "<g class=\"j\"><title>LInterpreter;run (5 samples, 50.00%)"));
	CHECK(strstr(svg, "<g class=\"k\"><title>do_syscall_64 (5 samples, 50.00%)"));
	CHECK(strstr(svg, "<g class=\"u\"><title>app+0x500 (3 samples, 30.00%)"));
	CHECK(strstr(svg, "<g class=\"t\"><title>[truncated: no unwind table] (3 samples"));
	CHECK(strstr(svg, "<g class=\"l\"><title>[kernel stack lost: error] (2 samples"));
	/* The legend names the kinds there are, and no other. */
	CHECK(strstr(svg, ">JIT (perf map)</text>"));
	CHECK(strstr(svg, ">lost stack</text>"));
	CHECK(!strstr(svg, ">merged narrow frames</text>"));
	free(svg);
	profile__free(p);
}

/* Folded text read back: what flamegraph.pl takes, each line checked; the rest skipped and counted.
 */
TEST(folded_input_lines)
{
	static const char text[] = "app;main;hot_a 70\r\n"
				   "app;main;hot_b 30\n"
				   "\n"
				   "   \t\n"
				   "app;main;;;hot_b 5\n"
				   "app;entry_SYSCALL_64_[k];do_syscall_64_[k] 4\n"
				   "app;[truncated: no unwind table];libc.so.6+0x2a1c0 2\n"
				   "a name with spaces;x 1\n"
				   "no count\n"
				   "app;main 1.5\n"
				   "app;main -3\n"
				   "app;main 4611686018427387905\n"
				   "9\n"
				   "app;nul\0byte 1\n"
				   "app;last 3";
	struct folded_input_stats st;
	struct flame *f = new_flame();

	CHECK_INT(folded_input__parse(text, sizeof(text) - 1, f, &st), ==, 0);
	CHECK_U64(st.stacks, ==, 7);
	CHECK_U64(st.bad_lines, ==, 6);
	CHECK_U64(st.first_bad, ==, 9);
	CHECK_U64(flame__total(f), ==, 115);
	CHECK_STR(boxes_text(f, 0), "0:all@0+115\n"
				    "1:a name with spaces@0+1\n"
				    "2:x@0+1\n"
				    "1:app@1+114\n"
				    "2:[truncated: no unwind table]@1+2\n"
				    "3:libc.so.6+0x2a1c0@1+2\n"
				    "2:entry_SYSCALL_64@3+4\n"
				    "3:do_syscall_64@3+4\n"
				    "2:last@7+3\n"
				    "2:main@10+105\n"
				    "3:hot_a@10+70\n"
				    "3:hot_b@80+35\n");
	flame__free(f);
}

/* The kinds folded text names, and a line deeper than any profiler's stack. */
TEST(folded_input_kinds_and_depth)
{
	struct folded_input_stats st;
	struct flame *f = new_flame();
	struct flame_box *b;
	size_t n, i, len = 0;
	char *deep = malloc(FOLDED_INPUT_MAX_DEPTH * 4 + 64), *svg;

	CHECK(deep);
	for (i = 0; i <= FOLDED_INPUT_MAX_DEPTH; i++)
		len += (size_t)sprintf(deep + len, "%s", i ? ";x" : "x");
	strcpy(deep + len, " 1\nk_[k];j_[j];m+0x1f 2\n");
	CHECK_INT(folded_input__parse(deep, strlen(deep), f, &st), ==, 0);
	CHECK_U64(st.stacks, ==, 1);
	CHECK_U64(st.bad_lines, ==, 1);
	CHECK_INT(flame__layout(f, 0, &b, &n), ==, 0);
	CHECK_U64(n, ==, 4);
	CHECK_INT(b[1].kind, ==, FLAME_KERNEL);
	CHECK_STR(b[1].name, "k");
	CHECK_INT(b[2].kind, ==, FLAME_JIT);
	CHECK_STR(b[2].name, "j");
	CHECK_INT(b[3].kind, ==, FLAME_UNNAMED);
	free(b);
	svg = encode(f, &plain, &no_meta);
	CHECK(strstr(svg, "<g class=\"k\"><title>k (2 samples"));
	free(svg);
	free(deep);
	flame__free(f);
}
