// SPDX-License-Identifier: MIT
/*
 * Pyroscope request encoding. For /ingest the key grammar is Pyroscope's
 * (pkg/og/flameql): the application name takes letters, digits and "_.-/",
 * label keys letters, digits, '_' and '.', and a value ends at ',' or '}'.
 * __name__ is not sent there: the server derives it from the profile type.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/batch.h"
#include "deliver/pyroscope.h"
#include "lib/pb_writer.h"

enum {
	PUSH_REQUEST_SERIES = 1,
	RAW_PROFILE_SERIES_LABELS = 1,
	RAW_PROFILE_SERIES_SAMPLES = 2,
	LABEL_PAIR_NAME = 1,
	LABEL_PAIR_VALUE = 2,
	RAW_SAMPLE_RAW_PROFILE = 1,
	RAW_SAMPLE_ID = 2,
};

static int encode_label_pair(struct pb_writer *w, const void *msg)
{
	const struct label *l = msg;

	pb_writer__string(w, LABEL_PAIR_NAME, l->name);
	return pb_writer__string(w, LABEL_PAIR_VALUE, l->value);
}

static int encode_raw_sample(struct pb_writer *w, const void *msg)
{
	const struct batch_series *s = msg;

	pb_writer__bytes(w, RAW_SAMPLE_RAW_PROFILE, s->profile, s->profile_len);
	return pb_writer__string(w, RAW_SAMPLE_ID, s->id);
}

static int encode_series(struct pb_writer *w, const void *msg)
{
	const struct batch_series *s = msg;
	size_t i;

	for (i = 0; i < s->labels.n; i++)
		pb_writer__submessage(w, RAW_PROFILE_SERIES_LABELS, encode_label_pair,
				      &s->labels.v[i]);
	return pb_writer__submessage(w, RAW_PROFILE_SERIES_SAMPLES, encode_raw_sample, s);
}

int pyroscope__push(const struct batch *b, uint8_t **out, size_t *len)
{
	struct pb_buffer buf;
	struct pb_writer w;
	size_t i;

	*out = NULL;
	*len = 0;
	pb_writer__init_buffer(&w, &buf);
	for (i = b ? b->done : 0; b && i < b->nseries; i++)
		pb_writer__submessage(&w, PUSH_REQUEST_SERIES, encode_series, &b->series[i]);
	if (w.err) {
		pb_buffer__free(&buf);
		return w.err;
	}
	*out = buf.data;
	*len = buf.len;
	return 0;
}

/* The target is built with pb_writer's byte sink, which grows as needed. */
static void put(struct pb_writer *w, const char *s, size_t n)
{
	pb_writer__raw(w, s, n);
}

static void put_str(struct pb_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Percent-encodes all but RFC 3986's unreserved characters. */
static void put_query_value(struct pb_writer *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3] = {'%', hex[c >> 4], hex[c & 15]};

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			put(w, (const char *)&c, 1);
		else
			put(w, esc, 3);
	}
}

static void put_key_part(struct pb_writer *w, const char *s, const char *allowed_extra)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char keep = (char)c;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c && strchr(allowed_extra, c))))
			keep = '_';
		put_query_value(w, &keep, 1);
	}
}

/* A value may hold anything but the key's own delimiters. */
static void put_key_value(struct pb_writer *w, const char *s)
{
	for (; *s; s++) {
		char c = strchr(",{}=", *s) ? '_' : *s;

		put_query_value(w, &c, 1);
	}
}

int pyroscope__ingest_target(const char *base_path, const struct batch *b, size_t i, char **out)
{
	const struct batch_series *s = &b->series[i];
	const char *service = labels__get(&s->labels, "service_name");
	uint64_t from = b->time_ns / 1000000000ull;
	uint64_t until = (b->time_ns + b->duration_ns + 999999999ull) / 1000000000ull;
	struct pb_buffer buf;
	struct pb_writer w;
	char num[64];
	bool first = true;
	size_t j;

	*out = NULL;
	pb_writer__init_buffer(&w, &buf);
	put_str(&w, base_path);
	put_str(&w, PYROSCOPE_INGEST_PATH "?name=");
	put_key_part(&w, service && *service ? service : "cprof", "_.-/");
	put_query_value(&w, "{", 1);
	for (j = 0; j < s->labels.n; j++) {
		const struct label *l = &s->labels.v[j];

		if (strcmp(l->name, "__name__") == 0 || strcmp(l->name, "service_name") == 0)
			continue;
		if (!first)
			put_query_value(&w, ",", 1);
		first = false;
		put_key_part(&w, l->name, "_.");
		put_query_value(&w, "=", 1);
		put_key_value(&w, l->value);
	}
	put_query_value(&w, "}", 1);
	snprintf(num, sizeof(num), "&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof", from,
		 until > from ? until : from + 1);
	put(&w, num, strlen(num) + 1); /* with its NUL: the target is a C string */
	if (w.err) {
		pb_buffer__free(&buf);
		return w.err;
	}
	*out = (char *)buf.data;
	return 0;
}
