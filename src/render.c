// SPDX-License-Identifier: MIT
/*
 * cprof -i: a profile in, a flame graph out; see render.h. The output is
 * opened first, as a profiling run opens it, so a bad path fails before the
 * input is read. The format is told by the content, never the file's name:
 * gzip is a pprof profile (.pb.gz); else a message that reads whole as a
 * profile.proto is one; else it is folded text, whose lines that are not
 * stacks are skipped and counted. Text does not read as a profile: a
 * profile's string table opens with the empty string, a NUL byte. Binary
 * that is neither is named as the broken profile it most likely is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deliver/output.h"
#include "encode/flame.h"
#include "encode/folded_input.h"
#include "encode/pprof_input.h"
#include "lib/file.h"
#include "render.h"

#define LOG_MODULE NULL
#include "lib/log.h"

/* What was drawn, for the last line. */
struct drawn {
	uint64_t stacks;
	const char *unit; /* "samples", or a pprof sample type */
};

static int read_input(const char *path, char **text, size_t *len)
{
	int err = strcmp(path, "-") ? file__read_all(path, text, len)
				    : file__read_fd(STDIN_FILENO, text, len);

	if (err)
		pr_err("cannot read '%s': %s", path, strerror(-err));
	return err;
}

/* The warnings and the subtitle of a pprof profile read; -EINVAL if it has nothing to draw. */
static int pprof_drawn(const char *name, const struct pprof_input_info *pi, struct svg_meta *meta,
		       char *target, size_t size, struct drawn *d)
{
	if (pi->negative)
		pr_warn("%s: %" PRIu64 " samples with a negative value skipped (a diff profile?)",
			name, pi->negative);
	if (pi->too_deep)
		pr_warn("%s: %" PRIu64 " samples deeper than %d frames skipped", name, pi->too_deep,
			PPROF_INPUT_MAX_DEPTH);
	if (pi->overflow)
		pr_warn("%s: %" PRIu64 " samples skipped: the values add up past 2^63", name,
			pi->overflow);
	if (!pi->stacks) {
		pr_err("%s: a pprof profile without samples%s%s", name, pi->type[0] ? " of " : "",
		       pi->type);
		return -EINVAL;
	}
	meta->time_ns = pi->time_ns;
	meta->duration_ns = pi->duration_ns;
	meta->hz = pi->hz;
	meta->lost_known = pi->lost_known;
	meta->lost = pi->lost;
	/* The graph says "samples" of any value: the title says what they are. */
	if (!pi->counts) {
		snprintf(target, size, "%s, %s", meta->target, pi->type);
		meta->target = target;
	}
	d->stacks = pi->stacks;
	d->unit = pi->counts ? "samples" : pi->type;
	return 0;
}

/* Control characters other than tab and line ends: what a profile.proto has and text has not. */
static bool binary(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 && text[i] != '\t' && text[i] != '\n' &&
		    text[i] != '\r')
			return true;
	return false;
}

static int folded_drawn(const char *name, const struct folded_input_stats *st,
			const struct pprof_input_info *pi, const char *text, size_t len,
			const struct render_opts *o, struct drawn *d)
{
	/* Binary: a profile.proto gone wrong, more likely than text. */
	if (!st->stacks && binary(text, len)) {
		pr_err("%s: not a valid pprof profile (%s), nor folded stacks", name, pi->why);
		return -EINVAL;
	}
	if (st->bad_lines)
		pr_warn("%s: %" PRIu64 " %s not a folded stack ('a;b;c COUNT'), skipped; the first "
			"is line %" PRIu64,
			name, st->bad_lines, st->bad_lines == 1 ? "line is" : "lines are",
			st->first_bad);
	if (!st->stacks) {
		pr_err("%s: no folded stacks in it ('a;b;c COUNT' lines)", name);
		return -EINVAL;
	}
	if (o->sample_type) {
		pr_err("%s holds folded stacks, one count each: --sample-type is for pprof "
		       "profiles",
		       name);
		return -EINVAL;
	}
	d->stacks = st->stacks;
	d->unit = "samples";
	return 0;
}

/* f: the graph of text, read as its content says. */
static int read_profile(const struct render_opts *o, const char *name, const char *text, size_t len,
			struct flame **f, struct svg_meta *meta, char *target, size_t size,
			struct drawn *d)
{
	struct pprof_input_opts po = {.sample_type = o->sample_type};
	struct pprof_input_info pi;
	struct folded_input_stats st;
	int err;

	err = pprof_input__parse(text, len, &po, *f, &pi);
	if (!err)
		return pprof_drawn(name, &pi, meta, target, size, d);
	if (err == -ENOMEM)
		return err;
	if (pprof_input__is_gzip(text, len) || err != -EBADMSG) {
		pr_err("%s: %s%s", name, err == -EBADMSG ? "not a valid pprof profile: " : "",
		       pi.why);
		return -EINVAL;
	}
	/* Not a profile: text, drawn into a graph of its own. */
	flame__free(*f);
	err = flame__new(f);
	if (!err)
		err = folded_input__parse(text, len, *f, &st);
	if (err)
		return err;
	return folded_drawn(name, &st, &pi, text, len, o, d);
}

int render__run(const struct render_opts *o)
{
	const char *name = strcmp(o->input, "-") ? o->input : "stdin";
	struct svg_meta meta = {.target = strrchr(name, '/') ? strrchr(name, '/') + 1 : name};
	struct output *out = NULL;
	struct flame *f = NULL;
	char *text = NULL, *svg = NULL, target[512];
	struct drawn d = {0};
	size_t len = 0, svg_len = 0;
	int err;

	err = output__open(o->output, false, &out);
	if (err)
		goto cleanup;
	err = read_input(o->input, &text, &len);
	if (err)
		goto cleanup;
	err = flame__new(&f);
	if (!err)
		err = read_profile(o, name, text, len, &f, &meta, target, sizeof(target), &d);
	if (err == -ENOMEM)
		pr_err("out of memory");
	if (err)
		goto cleanup;
	err = svg__encode_flame(f, o->svg, &meta, &svg, &svg_len);
	if (!err)
		err = output__write(out, svg, svg_len);
	if (!err)
		fprintf(stderr,
			"cprof: wrote %s%s (flame graph of %" PRIu64 " stacks, %" PRIu64
			" %s, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the flame graph to ",
			output__path(out), d.stacks, flame__total(f), d.unit, svg_len);
cleanup:
	free(svg);
	flame__free(f);
	free(text);
	output__free(out);
	return err ? 1 : 0;
}
