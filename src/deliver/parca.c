// SPDX-License-Identifier: MIT
/*
 * WriteRawRequest encoding with the pb_writer primitives. `normalized` stays
 * false: cprof sends runtime addresses with their mappings, and Parca turns
 * them into file offsets itself. The deprecated `tenant` field is left empty;
 * --tenant travels as the X-Scope-OrgID header instead.
 */
#include <errno.h>
#include <stdlib.h>

#include "deliver/batch.h"
#include "deliver/grpcweb.h"
#include "deliver/parca.h"
#include "lib/pb_writer.h"

enum {
	WRITE_RAW_REQUEST_SERIES = 2,
	RAW_PROFILE_SERIES_LABELS = 1,
	RAW_PROFILE_SERIES_SAMPLES = 2,
	LABEL_SET_LABELS = 1,
	LABEL_NAME = 1,
	LABEL_VALUE = 2,
	RAW_SAMPLE_RAW_PROFILE = 1,
};

static int encode_label(struct pb_writer *w, const void *msg)
{
	const struct label *l = msg;

	pb_writer__string(w, LABEL_NAME, l->name);
	return pb_writer__string(w, LABEL_VALUE, l->value);
}

static int encode_label_set(struct pb_writer *w, const void *msg)
{
	const struct labels *ls = msg;
	size_t i;

	for (i = 0; i < ls->n; i++)
		pb_writer__submessage(w, LABEL_SET_LABELS, encode_label, &ls->v[i]);
	return w->err;
}

static int encode_raw_sample(struct pb_writer *w, const void *msg)
{
	const struct batch_series *s = msg;

	return pb_writer__bytes(w, RAW_SAMPLE_RAW_PROFILE, s->profile, s->profile_len);
}

static int encode_series(struct pb_writer *w, const void *msg)
{
	const struct batch_series *s = msg;

	pb_writer__submessage(w, RAW_PROFILE_SERIES_LABELS, encode_label_set, &s->labels);
	return pb_writer__submessage(w, RAW_PROFILE_SERIES_SAMPLES, encode_raw_sample, s);
}

static int encode_request(struct pb_writer *w, const struct batch *b)
{
	size_t i;

	for (i = b ? b->done : 0; b && i < b->nseries; i++)
		pb_writer__submessage(w, WRITE_RAW_REQUEST_SERIES, encode_series, &b->series[i]);
	return w->err;
}

int parca__write_raw(const struct batch *b, uint8_t **out, size_t *len)
{
	uint8_t header[GRPCWEB_FRAME_HEADER];
	struct pb_buffer buf;
	struct pb_writer w;
	int err;

	*out = NULL;
	*len = 0;
	pb_writer__init_counting(&w);
	err = encode_request(&w, b);
	if (!err)
		err = grpcweb__frame_header(header, w.bytes_written);
	if (err)
		return err;
	pb_writer__init_buffer(&w, &buf);
	pb_writer__raw(&w, header, sizeof(header));
	err = encode_request(&w, b);
	if (err) {
		pb_buffer__free(&buf);
		return err;
	}
	*out = buf.data;
	*len = buf.len;
	return 0;
}
