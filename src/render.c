// SPDX-License-Identifier: MIT
/*
 * cprof -i: folded stacks in, a flame graph out; see render.h. The output
 * is opened first, as a profiling run opens it, so a bad path fails before
 * the input is read; lines that are not stacks are skipped and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deliver/output.h"
#include "encode/flame.h"
#include "encode/folded_input.h"
#include "lib/file.h"
#include "render.h"

#define LOG_MODULE NULL
#include "lib/log.h"

static int read_input(const char *path, char **text, size_t *len)
{
	int err = strcmp(path, "-") ? file__read_all(path, text, len)
				    : file__read_fd(STDIN_FILENO, text, len);

	if (err) {
		pr_err("cannot read '%s': %s", path, strerror(-err));
		return err;
	}
	/* pprof's gzip magic: the common mistake, named. */
	if (*len >= 2 && (unsigned char)(*text)[0] == 0x1f && (unsigned char)(*text)[1] == 0x8b) {
		pr_err("'%s' is gzip-compressed (a pprof profile?): -i reads folded stacks, "
		       "'a;b;c COUNT' lines (cprof --format folded)",
		       path);
		return -EINVAL;
	}
	return 0;
}

int render__run(const struct render_opts *o)
{
	const char *name = strcmp(o->input, "-") ? o->input : "stdin";
	struct svg_meta meta = {.target = strrchr(name, '/') ? strrchr(name, '/') + 1 : name};
	struct folded_input_stats st;
	struct output *out = NULL;
	struct flame *f = NULL;
	char *text = NULL, *svg = NULL;
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
		err = folded_input__parse(text, len, f, &st);
	if (err) {
		pr_err("out of memory");
		goto cleanup;
	}
	if (st.bad_lines)
		pr_warn("%s: %" PRIu64 " %s not a folded stack ('a;b;c COUNT'), skipped; the first "
			"is line %" PRIu64,
			name, st.bad_lines, st.bad_lines == 1 ? "line is" : "lines are",
			st.first_bad);
	if (!st.stacks) {
		pr_err("%s: no folded stacks in it ('a;b;c COUNT' lines)", name);
		err = -EINVAL;
		goto cleanup;
	}
	err = svg__encode_flame(f, o->svg, &meta, &svg, &svg_len);
	if (!err)
		err = output__write(out, svg, svg_len);
	if (!err)
		fprintf(stderr,
			"cprof: wrote %s%s (flame graph of %" PRIu64 " stacks, %" PRIu64
			" samples, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the flame graph to ",
			output__path(out), st.stacks, flame__total(f), svg_len);
cleanup:
	free(svg);
	flame__free(f);
	free(text);
	output__free(out);
	return err ? 1 : 0;
}
