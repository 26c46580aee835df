// SPDX-License-Identifier: MIT
/*
 * pprof profiles read back (cprof -i) are outside input: any bytes, gzipped
 * or not, are drawn or refused with one line of reason; what is drawn keeps
 * every frame inside the total, counts only samples the input holds, and
 * becomes an SVG of the length it says. The unpacking limit is small here
 * (4 MiB), so that a bomb costs the fuzzer little; the default rule is the
 * unit tests'.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encode/flame.h"
#include "encode/pprof_input.h"
#include "encode/svg.h"

static void check_layout(const struct flame *f)
{
	struct flame_box *b;
	size_t n, i;

	if (flame__layout(f, 0, &b, &n))
		return;
	if (!n || b[0].depth || b[0].start || b[0].count != flame__total(f))
		abort();
	for (i = 1; i < n; i++)
		if (!b[i].depth || !b[i].count || b[i].start + b[i].count > b[0].count)
			abort();
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Odd sizes ask for a type, as --sample-type does. */
	struct pprof_input_opts o = {.sample_type = size & 1 ? "cpu" : NULL,
				     .max_unpacked = 4 << 20};
	struct svg_style style = {.minwidth = 0.1};
	struct svg_meta meta = {.target = "fuzz"};
	struct pprof_input_info info;
	struct flame *f = NULL;
	size_t len;
	char *svg;
	int rc;

	if (flame__new(&f))
		return 0;
	rc = pprof_input__parse(data, size, &o, f, &info);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		/* Refused: said why, in one line. */
		if ((rc != -EBADMSG && rc != -EFBIG && rc != -ENOENT) || !info.why[0] ||
		    strchr(info.why, '\n'))
			abort();
		goto out;
	}
	/* A sample takes 4 bytes at least: its key, length, and a value's. */
	if (info.why[0] || (info.stacks && !flame__total(f)) ||
	    info.stacks > (pprof_input__is_gzip(data, size) ? o.max_unpacked : size) / 4)
		abort();
	check_layout(f);
	meta.time_ns = info.time_ns;
	meta.duration_ns = info.duration_ns;
	meta.hz = info.hz;
	if (svg__encode_flame(f, &style, &meta, &svg, &len))
		goto out;
	if (strlen(svg) != len)
		abort();
	free(svg);
out:
	flame__free(f);
	return 0;
}
