// SPDX-License-Identifier: MIT
/*
 * Folded stacks read back (cprof -i) are outside input: any bytes parse or
 * are skipped line by line, the layout keeps every frame inside its parent,
 * and the flame graph drawn from them is markup only where svg.c writes
 * markup: outside the script's CDATA, every '<' opens one of its own
 * elements and every '&' is one of its four escapes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encode/flame.h"
#include "encode/folded_input.h"
#include "encode/svg.h"

static const char *const tags[] = {
	"?xml ", "svg ",  "/",	   "!-- ", "style>", "defs>",  "linearGradient ",
	"stop ", "rect ", "text ", "g>",   "g ",     "title>", "script>",
};
static const char *const escapes[] = {"&amp;", "&lt;", "&gt;", "&quot;"};

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void check_markup(const char *svg)
{
	const char *p;
	size_t i;

	for (p = strpbrk(svg, "<&"); p; p = strpbrk(p + 1, "<&")) {
		if (*p == '&') {
			for (i = 0;
			     i < sizeof(escapes) / sizeof(escapes[0]) && !starts(p, escapes[i]);
			     i++)
				;
			if (i == sizeof(escapes) / sizeof(escapes[0]))
				abort();
			continue;
		}
		if (starts(p, "<![CDATA[")) {
			p = strstr(p, "]]>");
			if (!p)
				abort();
			continue;
		}
		for (i = 0; i < sizeof(tags) / sizeof(tags[0]) && !starts(p + 1, tags[i]); i++)
			;
		if (i == sizeof(tags) / sizeof(tags[0]))
			abort();
	}
}

static void check_layout(const struct flame *f, double min_share)
{
	struct flame_box *b;
	size_t n, i;

	if (flame__layout(f, min_share, &b, &n))
		return;
	if (!n || b[0].depth || b[0].start || b[0].count != flame__total(f))
		abort();
	for (i = 1; i < n; i++)
		if (!b[i].depth || b[i].start + b[i].count > b[0].count)
			abort();
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svg_style style = {.minwidth = size % 3 ? 0.1 : 0, .inverted = size & 1};
	struct svg_meta meta = {.target = "fuzz"};
	struct folded_input_stats st;
	struct flame *f = NULL;
	size_t len;
	char *svg;

	if (flame__new(&f))
		return 0;
	if (folded_input__parse((const char *)data, size, f, &st))
		goto out;
	if (st.stacks + st.bad_lines > size || (st.bad_lines && !st.first_bad))
		abort();
	check_layout(f, style.minwidth / 100);
	if (svg__encode_flame(f, &style, &meta, &svg, &len))
		goto out;
	if (strlen(svg) != len)
		abort();
	check_markup(svg);
	free(svg);
out:
	flame__free(f);
	return 0;
}
