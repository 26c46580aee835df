// SPDX-License-Identifier: MIT
/*
 * Exact bytes of the upload requests: Parca's WriteRawRequest in its gRPC-Web
 * frame, Pyroscope's PushRequest, and the /ingest target. The expected bytes
 * are derived by hand from the field numbers in the servers' .proto files
 * (tests/server/proto); the e2e tests have the same encoders' output decoded
 * by the real protobuf runtime behind a real Connect server.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/batch.h"
#include "deliver/parca.h"
#include "deliver/pyroscope.h"
#include "test.h"

#define ID "00000000-0000-4000-8000-000000000000"

/* One series: labels __name__=a and x=b, profile "PP". */
static struct batch *one_series(void)
{
	struct batch *b = batch__new(1700000000500000000ull, 10000000000ull);
	struct labels l = {0};
	uint8_t *p = malloc(2);

	CHECK(b && p);
	memcpy(p, "PP", 2);
	CHECK_INT(labels__set(&l, "x", "b"), ==, 0);
	CHECK_INT(labels__set(&l, "__name__", "a"), ==, 0);
	CHECK_INT(batch__add(b, &l, p, 2, ID), ==, 0);
	return b;
}

TEST(wire_parca_write_raw)
{
	struct batch *b = one_series();
	uint8_t *out;
	size_t len;

	CHECK_INT(parca__write_raw(b, &out, &len), ==, 0);
	CHECK_BYTES(out, len,
		    "\x00\x00\x00\x00\x21" /* gRPC-Web data frame of 33 bytes */
		    "\x12\x1f"		   /* WriteRawRequest.series (2) */
		    "\x0a\x17"		   /* RawProfileSeries.labels (1): LabelSet */
		    "\x0a\x0d"		   /* LabelSet.labels (1) */
		    "\x0a\x08__name__\x12\x01"
		    "a" /* Label.name (1), Label.value (2) */
		    "\x0a\x06\x0a\x01x\x12\x01"
		    "b"			   /* the second label */
		    "\x12\x04\x0a\x02PP"); /* RawProfileSeries.samples (2): raw_profile */
	free(out);
	CHECK_INT(parca__write_raw(NULL, &out, &len), ==, 0);
	CHECK_BYTES(out, len, "\x00\x00\x00\x00\x00");
	free(out);
	batch__free(b);
}

TEST(wire_pyroscope_push)
{
	struct batch *b = one_series();
	uint8_t *out;
	size_t len;

	CHECK_INT(pyroscope__push(b, &out, &len), ==, 0);
	CHECK_BYTES(out, len,
		    "\x0a\x43" /* PushRequest.series (1) */
		    "\x0a\x0d\x0a\x08__name__\x12\x01"
		    "a" /* RawProfileSeries.labels (1): LabelPair */
		    "\x0a\x06\x0a\x01x\x12\x01"
		    "b"
		    "\x12\x2a"	    /* RawProfileSeries.samples (2): RawSample */
		    "\x0a\x02PP"    /* raw_profile (1) */
		    "\x12\x24" ID); /* ID (2) */
	free(out);
	CHECK_INT(pyroscope__push(NULL, &out, &len), ==, 0);
	CHECK_INT(len, ==, 0);
	free(out);
	batch__free(b);
}

TEST(wire_only_unsent_series)
{
	struct batch *b = one_series();
	struct labels l = {0};
	uint8_t *out, *p = malloc(1);
	size_t len;

	CHECK(p);
	p[0] = 'Q';
	CHECK_INT(labels__set(&l, "k", "v"), ==, 0);
	CHECK_INT(batch__add(b, &l, p, 1, ID), ==, 0);
	b->done = 1;
	CHECK_INT(parca__write_raw(b, &out, &len), ==, 0);
	CHECK_BYTES(
		out, len,
		"\x00\x00\x00\x00\x11\x12\x0f\x0a\x08\x0a\x06\x0a\x01k\x12\x01v\x12\x03\x0a\x01Q");
	free(out);
	batch__free(b);
}

TEST(wire_ingest_target)
{
	struct batch *b = batch__new(1700000000500000000ull, 10000000000ull);
	struct labels l = {0};
	uint8_t *p = malloc(1);
	char *t;

	CHECK(b && p);
	CHECK_INT(labels__set(&l, "__name__", "process_cpu"), ==, 0);
	CHECK_INT(labels__set(&l, "service_name", "my app"), ==, 0);
	CHECK_INT(labels__set(&l, "comm", "x{y}=z"), ==, 0);
	CHECK_INT(labels__set(&l, "env", "a,b"), ==, 0);
	CHECK_INT(batch__add(b, &l, p, 1, NULL), ==, 0);
	CHECK_INT(pyroscope__ingest_target("/base", b, 0, &t), ==, 0);
	CHECK_STR(t, "/base/ingest?name=my_app%7Bcomm%3Dx_y__z%2Cenv%3Da_b%7D"
		     "&from=1700000000&until=1700000011&format=pprof");
	free(t);
	batch__free(b);
}

TEST(wire_batch_ids_are_uuids)
{
	struct batch *b = batch__new(0, 0);
	struct labels l = {0};
	size_t i;

	CHECK(b);
	for (i = 0; i < 2; i++)
		CHECK_INT(batch__add(b, &l, malloc(1), 1, NULL), ==, 0);
	CHECK_INT(strlen(b->series[0].id), ==, BATCH_ID_LEN);
	CHECK(b->series[0].id[8] == '-' && b->series[0].id[14] == '4');
	CHECK(strcmp(b->series[0].id, b->series[1].id) != 0);
	batch__free(b);
}
