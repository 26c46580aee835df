// SPDX-License-Identifier: MIT
/*
 * The SVG flame graph; see svg.h. The geometry is flamegraph.pl's (1200
 * pixels wide, 10 of padding each side, frames 16 high, Verdana 12), so
 * its readers and the tools that take its SVGs apart find what they know.
 *
 * Widths: a frame's left and right edges are each its sample offset times
 * 1180 pixels over all samples, rounded to a hundredth of a pixel, and its
 * width is their difference. Rounding edges rather than widths keeps every
 * child inside its parent and siblings edge to edge, with no drift. The
 * script (flamegraph.js) places zoomed frames by the same rule.
 *
 * Names come from symbol tables and command lines, so anything: each is
 * written as valid UTF-8 (a byte that starts no valid character becomes
 * U+FFFD, as do control characters and what XML does not allow), with &, <,
 * > and " escaped, so the document is well-formed XML whatever it shows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_MODULE "svg"
#include "encode/flame.h"
#include "encode/svg.h"
#include "lib/log.h"
#include "lib/sbuf.h"

#define IMAGE_W	     1200
#define XPAD	     10
#define FRAME_W	     (IMAGE_W - 2 * XPAD)
#define FRAME_H	     16
#define FONT	     12
#define FONT_W	     0.59 /* a character's width, in font sizes: flamegraph.pl's guess for Verdana */
#define TITLE_Y	     24
#define SUBTITLE_Y   44
#define LEGEND_Y     64
#define YPAD_TOP     78 /* title, subtitle, legend */
#define YPAD_BOTTOM  34 /* the details line */
#define TITLE_CHARS  100
#define LINE_CHARS   160
#define REPLACEMENT  "\xef\xbf\xbd" /* U+FFFD */
#define SEARCH_COLOR "rgb(230,0,230)"

static const char script[] =
#include "flamegraph_js.inc"
	;
static const char style_sheet[] =
#include "flamegraph_css.inc"
	;

/* Of kind k: the class its <g> gets (none for user code), and the legend's words. */
static const struct {
	const char *cls;
	const char *legend;
} kinds[FLAME_KINDS] = {
	[FLAME_USER] = {NULL, "code"},
	[FLAME_KERNEL] = {"k", "kernel"},
	[FLAME_JIT] = {"j", "JIT (perf map)"},
	[FLAME_UNNAMED] = {"u", "no symbol (module+0xOFFSET)"},
	[FLAME_TRUNCATED] = {"t", "truncated stack"},
	[FLAME_LOST] = {"l", "lost stack"},
	[FLAME_PROCESS] = {"p", "process, thread"},
	[FLAME_MERGED] = {"m", "merged narrow frames"},
	[FLAME_ROOT] = {"r", NULL},
};

/*
 * One character of s: its code point, or -1 for a byte that starts no
 * valid UTF-8 sequence (overlong, a surrogate, past U+10FFFF, cut short);
 * *n is how many bytes it took.
 */
static int32_t utf8_char(const unsigned char *s, size_t *n)
{
	uint32_t c = s[0], min;
	size_t len, i;

	*n = 1;
	if (c < 0x80)
		return (int32_t)c;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, c &= 0x07, min = 0x10000;
	else
		return -1;
	/* A NUL is no continuation byte: the end of s stops the loop. */
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*n = len;
	return (int32_t)c;
}

/* XML 1.0's characters, less the controls it allows (tab, newline): no name has them. */
static bool xml_char(int32_t c)
{
	return (c >= 0x20 && c < 0x7f) || (c >= 0xa0 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;
}

static size_t count_chars(const char *s)
{
	size_t n = 0, step;

	for (; *s; s += step, n++)
		utf8_char((const unsigned char *)s, &step);
	return n;
}

/*
 * s as XML text, at most max characters (0: all): a longer one is cut to
 * max - 2 and ends in "..", as flamegraph.pl cuts names.
 */
static void put_text(struct sbuf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t keep = max && count_chars(s) > max ? max - 2 : SIZE_MAX, step, i;
	int32_t c;

	for (i = 0; *p && i < keep; p += step, i++) {
		c = utf8_char(p, &step);
		if (c == '&')
			sbuf__str(b, "&amp;");
		else if (c == '<')
			sbuf__str(b, "&lt;");
		else if (c == '>')
			sbuf__str(b, "&gt;");
		else if (c == '"')
			sbuf__str(b, "&quot;");
		else if (c < 0 || !xml_char(c))
			sbuf__str(b, REPLACEMENT);
		else
			sbuf__add(b, (const char *)p, step);
	}
	if (*p)
		sbuf__str(b, "..");
}

/* n with a comma every three digits, as flamegraph.pl writes counts. */
static const char *commas(uint64_t n, char *buf, size_t size)
{
	char digits[24];
	size_t len = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n), i, o = 0;

	for (i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* A frame's edge at sample offset s of total, in hundredths of a pixel (see the top). */
static uint64_t edge(uint64_t s, uint64_t total)
{
	unsigned __int128 num = (unsigned __int128)s * (2 * 100 * FRAME_W) + total;

	return XPAD * 100 + (uint64_t)(num / (2 * (unsigned __int128)total));
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * A color of the kind's family, flamegraph.pl's where it has one (red for
 * code, orange for the kernel, green for JIT, aqua, yellow), varied by a
 * hash of the name: a function has the same color in every graph.
 */
static void put_color(struct sbuf *b, enum flame_kind kind, const char *name)
{
	uint32_t h = name ? fnv1a(name) : 0x808080;
	unsigned v1 = h & 0xff, v2 = h >> 8 & 0xff, r, g, bl;

#define V(base, span, v) ((base) + (span) * (v) / 255)
	switch (kind) {
	case FLAME_KERNEL:
		r = V(190, 65, v1), g = V(90, 65, v1), bl = 0;
		break;
	case FLAME_JIT:
		r = V(50, 60, v1), g = V(200, 55, v1), bl = r;
		break;
	case FLAME_UNNAMED:
		r = V(160, 40, v1), g = V(120, 40, v1), bl = V(200, 55, v1);
		break;
	case FLAME_TRUNCATED:
		r = V(50, 60, v1), g = V(165, 55, v1), bl = g;
		break;
	case FLAME_LOST:
		r = V(150, 30, v1), g = V(105, 20, v1), bl = V(70, 20, v1);
		break;
	case FLAME_PROCESS:
		r = V(175, 55, v1), g = r, bl = V(50, 20, v2);
		break;
	case FLAME_MERGED:
	case FLAME_ROOT:
		r = g = bl = V(190, 20, v1);
		break;
	default:
		r = V(200, 55, v1), g = V(50, 80, v2), bl = g;
		break;
	}
#undef V
	sbuf__printf(b, "rgb(%u,%u,%u)", r, g, bl);
}

/* The text's room in characters, for w hundredths of a pixel, or 0 if below three. */
static size_t room(uint64_t w)
{
	size_t chars = (size_t)((double)w / 100.0 / (FONT * FONT_W));

	return chars < 3 ? 0 : chars;
}

struct draw {
	struct sbuf b;
	const struct svg_style *style;
	uint64_t total;
	uint32_t depth; /* the deepest drawn */
	uint32_t height;
	char merged_name[96];
};

static void put_frame(struct draw *d, const struct flame_box *box)
{
	struct sbuf *b = &d->b;
	uint64_t total = d->total ? d->total : 1, end = d->total ? box->start + box->count : 1;
	uint64_t x0 = edge(box->start, total), x1 = edge(end, total);
	const char *name = box->name;
	uint32_t y;
	char n[32];
	size_t chars;

	if (box->kind == FLAME_MERGED) {
		snprintf(d->merged_name, sizeof(d->merged_name), "[%u frames narrower than %g%%]",
			 box->merged, d->style->minwidth);
		name = d->merged_name;
	}
	y = d->style->inverted ? YPAD_TOP + box->depth * FRAME_H
			       : d->height - YPAD_BOTTOM - (box->depth + 1) * FRAME_H;
	sbuf__str(b, "<g");
	if (kinds[box->kind].cls)
		sbuf__printf(b, " class=\"%s\"", kinds[box->kind].cls);
	sbuf__str(b, "><title>");
	put_text(b, name, 0);
	sbuf__printf(b, " (%s samples, %.2f%%)</title>", commas(box->count, n, sizeof(n)),
		     d->total ? 100.0 * (double)box->count / (double)d->total : 100.0);
	sbuf__printf(b,
		     "<rect x=\"%" PRIu64 ".%02u\" y=\"%u\" width=\"%" PRIu64
		     ".%02u\" height=\"%u\" "
		     "fill=\"",
		     x0 / 100, (unsigned)(x0 % 100), y, (x1 - x0) / 100,
		     (unsigned)((x1 - x0) % 100), FRAME_H - 1);
	put_color(b, box->kind, name);
	sbuf__printf(b, "\" rx=\"2\" ry=\"2\"/><text x=\"%" PRIu64 ".%02u\" y=\"%u.5\">",
		     x0 / 100 + 3, (unsigned)(x0 % 100), y + 10);
	chars = room(x1 - x0);
	if (chars)
		put_text(b, name, chars);
	sbuf__str(b, "</text></g>\n");
}

/* "5 s", "1.25 s", "2 min 5 s" */
static void put_duration(struct sbuf *b, uint64_t ns)
{
	double s = (double)ns / 1e9;

	if (s < 120)
		sbuf__printf(b, "%.2f s", s);
	else
		sbuf__printf(b, "%" PRIu64 " min %" PRIu64 " s", ns / UINT64_C(60000000000),
			     ns / UINT64_C(1000000000) % 60);
}

/* host, kernel, date, duration and rate, samples and losses: what is known of them. */
static void subtitle(struct sbuf *line, const struct svg_style *style, const struct svg_meta *m,
		     uint64_t total)
{
	const char *sep = "";
	char n[32];
	time_t t = (time_t)(m->time_ns / 1000000000ull);
	struct tm tm;

	if (style->title && m->target) {
		sbuf__str(line, m->target);
		sep = ", ";
	}
	if (m->host && *m->host) {
		sbuf__printf(line, "%shost %s", sep, m->host);
		sep = ", ";
	}
	if (m->kernel && *m->kernel) {
		sbuf__printf(line, "%sLinux %s", sep, m->kernel);
		sep = ", ";
	}
	/* Not strftime: it brings the time zone code along (6 KB), for a fixed format in UTC. */
	if (m->time_ns && gmtime_r(&t, &tm)) {
		sbuf__printf(line, "%s%04d-%02d-%02d %02d:%02d:%02d UTC", sep, tm.tm_year + 1900,
			     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		sep = ", ";
	}
	if (m->duration_ns) {
		sbuf__str(line, sep);
		put_duration(line, m->duration_ns);
		sep = ", ";
	}
	if (m->hz) {
		sbuf__printf(line, "%s%" PRIu64 " Hz", m->duration_ns ? " at " : sep, m->hz);
		sep = ", ";
	}
	sbuf__printf(line, "%s%s samples", sep, commas(total, n, sizeof(n)));
	if (m->lost_known)
		sbuf__printf(line, ", %s lost", commas(m->lost, n, sizeof(n)));
}

/* The kinds drawn, each a swatch and its words, centered. */
static void put_legend(struct draw *d, const struct flame_box *boxes, size_t n)
{
	bool seen[FLAME_KINDS] = {false};
	double width = 0, x;
	size_t i;
	int k;

	for (i = 0; i < n; i++)
		seen[boxes[i].kind] = true;
	for (k = 0; k < FLAME_KINDS; k++)
		if (seen[k] && kinds[k].legend)
			width += 14 + strlen(kinds[k].legend) * FONT * FONT_W + 18;
	x = (IMAGE_W - width) / 2;
	sbuf__str(&d->b, "<g id=\"legend\">");
	for (k = 0; k < FLAME_KINDS; k++) {
		if (!seen[k] || !kinds[k].legend)
			continue;
		sbuf__printf(&d->b, "<rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"",
			     x, LEGEND_Y - 9);
		put_color(&d->b, (enum flame_kind)k, NULL);
		sbuf__printf(&d->b, "\"/><text x=\"%.0f\" y=\"%d\">%s</text>", x + 14, LEGEND_Y,
			     kinds[k].legend);
		x += 14 + strlen(kinds[k].legend) * FONT * FONT_W + 18;
	}
	sbuf__str(&d->b, "</g>\n");
}

static void put_head(struct draw *d, const struct svg_meta *meta, const struct flame_box *boxes,
		     size_t n)
{
	struct sbuf *b = &d->b, line = {0};
	const char *title = d->style->title ? d->style->title
			    : meta->target  ? meta->target
					    : "Flame Graph";

	sbuf__printf(b,
		     "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n"
		     "<!-- A flame graph written by cprof: one <g> per frame. "
		     "Click a frame to zoom, Ctrl-F to search. -->\n"
		     "<style><![CDATA[\n%s]]></style>\n"
		     "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		     "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
		     "<stop stop-color=\"#eeeeb0\" offset=\"95%%\"/></linearGradient></defs>\n"
		     "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		     "fill=\"url(#background)\"/>\n",
		     IMAGE_W, d->height, IMAGE_W, d->height, style_sheet);
	sbuf__printf(b, "<text id=\"title\" x=\"%d\" y=\"%d\">", IMAGE_W / 2, TITLE_Y);
	put_text(b, title, TITLE_CHARS);
	sbuf__printf(b, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"%d\">", IMAGE_W / 2,
		     SUBTITLE_Y);
	subtitle(&line, d->style, meta, d->total);
	sbuf__add(&line, "", 1);
	if (line.err)
		b->err = line.err;
	else
		put_text(b, line.data, LINE_CHARS);
	free(line.data);
	sbuf__str(b, "</text>\n");
	put_legend(d, boxes, n);
	sbuf__printf(b,
		     "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		     "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n"
		     "<text id=\"ignorecase\" x=\"%d\" y=\"%d\">ic</text>\n"
		     "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"%u\"> </text>\n",
		     XPAD, TITLE_Y, IMAGE_W - XPAD - 30, TITLE_Y, IMAGE_W - XPAD, TITLE_Y, XPAD,
		     d->height - YPAD_BOTTOM / 2 + 5, IMAGE_W - XPAD,
		     d->height - YPAD_BOTTOM / 2 + 5);
}

int svg__encode_flame(const struct flame *f, const struct svg_style *style,
		      const struct svg_meta *meta, char **out, size_t *len)
{
	struct draw d = {.style = style, .total = flame__total(f)};
	struct flame_box *boxes = NULL;
	size_t n = 0, i;
	int err;

	*out = NULL;
	*len = 0;
	err = flame__layout(f, style->minwidth / 100.0, &boxes, &n);
	if (err)
		goto cleanup;
	for (i = 0; i < n; i++)
		if (boxes[i].depth > d.depth)
			d.depth = boxes[i].depth;
	d.height = YPAD_TOP + (d.depth + 1) * FRAME_H + YPAD_BOTTOM;
	/* Some 200 bytes a frame, and the names. */
	sbuf__reserve(&d.b, n * 256 + sizeof(script) + sizeof(style_sheet) + 4096);
	put_head(&d, meta, boxes, n);
	sbuf__str(&d.b, "<g id=\"frames\">\n");
	for (i = 0; i < n; i++)
		put_frame(&d, &boxes[i]);
	sbuf__printf(&d.b, "</g>\n<script><![CDATA[\n%s]]></script>\n</svg>\n", script);
	sbuf__add(&d.b, "", 1);
	err = d.b.err;
	if (err)
		goto cleanup;
	*out = d.b.data;
	*len = d.b.len - 1;
	d.b.data = NULL;
cleanup:
	if (err)
		pr_err("drawing the flame graph: %s", strerror(-err));
	free(d.b.data);
	free(boxes);
	return err;
}

int svg__encode(const struct profile *p, const struct svg_style *style, const struct svg_meta *meta,
		char **out, size_t *len)
{
	struct flame *f = NULL;
	int err;

	*out = NULL;
	*len = 0;
	err = flame__new(&f);
	if (!err)
		err = flame__add_profile(f, p);
	if (!err)
		err = svg__encode_flame(f, style, meta, out, len);
	else
		pr_err("drawing the flame graph: %s", strerror(-err));
	flame__free(f);
	return err;
}
