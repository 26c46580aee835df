// SPDX-License-Identifier: MIT
/*
 * The pprof encoder: exact bytes of a tiny profile derived by hand from
 * profile.proto, table structure checked with a minimal decoder, gzip
 * round trips, and a round trip through the reference reader, go tool pprof.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "build/profile.h"
#include "encode/compress.h"
#include "encode/pprof.h"
#include "test.h"

/* A minimal protobuf reader, enough to walk the fields of one message level. */
struct field {
	uint32_t number;
	uint32_t wire_type;
	uint64_t value;	     /* varint fields */
	const uint8_t *data; /* length-delimited fields */
	size_t len;
};

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Returns the nth (0-based) field with that number, or -1 after checking the whole message. */
static int find_field(const uint8_t *buf, size_t len, uint32_t number, size_t nth,
		      struct field *out)
{
	const uint8_t *p = buf, *end = buf + len;

	while (p < end) {
		struct field f = {0};
		uint64_t key, n;

		CHECK(read_varint(&p, end, &key) == 0);
		f.number = (uint32_t)(key >> 3);
		f.wire_type = key & 7;
		if (f.wire_type == 0) {
			CHECK(read_varint(&p, end, &f.value) == 0);
		} else {
			CHECK_INT(f.wire_type, ==, 2);
			CHECK(read_varint(&p, end, &n) == 0);
			CHECK_U64(n, <=, (uint64_t)(end - p));
			f.data = p;
			f.len = n;
			p += n;
		}
		if (f.number == number && nth-- == 0) {
			*out = f;
			return 0;
		}
	}
	return -1;
}

static size_t count_fields(const uint8_t *buf, size_t len, uint32_t number)
{
	struct field f;
	size_t n = 0;

	while (find_field(buf, len, number, n, &f) == 0)
		n++;
	return n;
}

static uint64_t varint_field(const uint8_t *buf, size_t len, uint32_t number)
{
	struct field f;

	if (find_field(buf, len, number, 0, &f) != 0)
		return 0; /* proto3 default */
	CHECK_INT(f.wire_type, ==, 0);
	return f.value;
}

static void gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap = 1024;
	uint8_t *buf = malloc(cap);
	int ret;

	CHECK(buf);
	CHECK_INT(inflateInit2(&zs, 15 + 16), ==, Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		if (zs.total_out == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			CHECK(buf);
		}
		zs.next_out = buf + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
		CHECK(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR);
		CHECK(ret != Z_BUF_ERROR || zs.avail_out == 0);
	} while (ret != Z_STREAM_END);
	CHECK_U64(zs.avail_in, ==, 0);
	*out = buf;
	*out_len = zs.total_out;
	inflateEnd(&zs);
}

/* The pprof encoding of p, uncompressed: what pprof__encode_gz compressed. */
static void encode(const struct profile *p, uint8_t **out, size_t *len)
{
	uint8_t *gz;
	size_t gz_len;

	CHECK_INT(pprof__encode_gz(p, &gz, &gz_len), ==, 0);
	gunzip(gz, gz_len, out, len);
	free(gz);
}

TEST(pprof_tiny_exact_bytes)
{
	struct profile_meta meta = {
		.hz = 1000000, .period_ns = 1000, .time_ns = 5, .duration_ns = 7};
	struct profile *p = profile__new(&meta);
	struct profile_mapping m = {.start = 0x1000, .limit = 0x2000, .path = "/a", .build_id = ""};
	struct profile_frame f = {.mapping = 1, .address = 0x1234, .name = "f"};
	struct profile_labels l = {.pid = 7, .comm = "c", .thread_name = ""};
	uint32_t stack[1];
	uint8_t *out;
	size_t len;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &m), ==, 1);
	stack[0] = profile__add_frame(p, &f);
	CHECK_INT(stack[0], ==, 1);
	CHECK_INT(profile__add_sample(p, stack, 1, &l, 3), ==, 0);
	CHECK_INT(profile__add_comment(p, "hi"), ==, 0);
	encode(p, &out, &len);
	/*
	 * Strings: 0 "", 1 samples, 2 count, 3 cpu, 4 nanoseconds, 5 pid, 6 comm,
	 * 7 c, 8 /a, 9 f, 10 hi. Zero-valued scalars are left out (proto3).
	 */
	CHECK_BYTES(
		out, len,
		/* sample_type {samples, count}, {cpu, nanoseconds} */
		"\x0a\x04\x08\x01\x10\x02"
		"\x0a\x04\x08\x03\x10\x04"
		/* sample: location_id [1], value [3, 3000], label pid=7, label comm=c */
		"\x12\x14"
		"\x0a\x01\x01"
		"\x12\x03\x03\xb8\x17"
		"\x1a\x04\x08\x05\x18\x07"
		"\x1a\x04\x08\x06\x10\x07"
		/* mapping: id 1, 0x1000-0x2000, filename /a, has_functions */
		"\x1a\x0c\x08\x01\x10\x80\x20\x18\x80\x40\x28\x08\x38\x01"
		/* location: id 1, mapping 1, address 0x1234, line {function 1} */
		"\x22\x0b\x08\x01\x10\x01\x18\xb4\x24\x22\x02\x08\x01"
		/* function: id 1, name f, system_name f */
		"\x2a\x06\x08\x01\x10\x09\x18\x09"
		/* string_table */
		"\x32\x00"
		"\x32\x07samples"
		"\x32\x05"
		"count"
		"\x32\x03"
		"cpu"
		"\x32\x0bnanoseconds"
		"\x32\x03pid"
		"\x32\x04"
		"comm"
		"\x32\x01"
		"c"
		"\x32\x02/a"
		"\x32\x01"
		"f"
		"\x32\x02hi"
		/* time_nanos 5, duration_nanos 7, period_type {cpu, nanoseconds}, period 1000 */
		"\x48\x05"
		"\x50\x07"
		"\x5a\x04\x08\x03\x10\x04"
		"\x60\xe8\x07"
		/* comment [10], default_sample_type cpu */
		"\x6a\x01\x0a"
		"\x70\x03");
	free(out);
	profile__free(p);
}

TEST(pprof_empty_profile)
{
	struct profile_meta meta = {.period_ns = 10000000};
	struct profile *p = profile__new(&meta);
	struct field f;
	uint8_t *out;
	size_t len;

	CHECK(p);
	encode(p, &out, &len);
	CHECK_U64(count_fields(out, len, 1), ==, 2);
	CHECK_U64(count_fields(out, len, 2), ==, 0);
	CHECK_U64(count_fields(out, len, 6), ==, 5);
	CHECK(find_field(out, len, 6, 0, &f) == 0);
	CHECK_U64(f.len, ==, 0);
	CHECK_U64(varint_field(out, len, 12), ==, 10000000);
	free(out);
	profile__free(p);
}

/* Frames 1-5 in two mappings plus the kernel; see the go tool pprof tests for names. */
static struct profile *build_profile(void)
{
	struct profile_meta meta = {.hz = 100,
				    .period_ns = 10000000,
				    .time_ns = 1700000000000000000ull,
				    .duration_ns = 5000000000ull};
	struct profile_mapping app = {.start = 0x400000,
				      .limit = 0x500000,
				      .path = "/nonexistent/cprof-test/app",
				      .build_id = "deadbeef"};
	struct profile_mapping lib = {.start = 0x7f0000000000,
				      .limit = 0x7f0000100000,
				      .offset = 0x1000,
				      .path = "/nonexistent/cprof-test/libfoo.so",
				      .build_id = ""};
	struct profile_mapping kernel = {.start = 0xffffffff81000000,
					 .limit = 0xffffffff82000000,
					 .path = "",
					 .build_id = "",
					 .kernel = true};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x401000, .name = "main"},
		{.mapping = 1, .address = 0x401100, .name = "compute"},
		{.mapping = 2,
		 .address = 0x7f0000001234,
		 .name = "lib_work(int)",
		 .system_name = "_Z8lib_worki"},
		{.mapping = 2,
		 .address = 0x7f0000005678,
		 .name = "libfoo.so+0x6678",
		 .kind = FRAME_UNNAMED},
		{.mapping = 3,
		 .address = 0xffffffff81001000,
		 .name = "do_syscall_64",
		 .kernel = true},
		{.mapping = 0, .address = 0xdead, .name = "[unknown]", .kind = FRAME_UNNAMED},
		/* main again at another address: the same function */
		{.mapping = 1, .address = 0x401010, .name = "main"},
	};
	static const uint32_t a[] = {2, 1}, b[] = {3, 2, 7}, c[] = {5, 3, 1}, d[] = {4, 1},
			      e[] = {6};
	struct profile_labels app_labels = {.pid = 100, .comm = "app", .thread_name = "app"};
	struct profile_labels worker = {
		.pid = 100, .tid = 101, .comm = "app", .thread_name = "worker"};
	struct profile_labels other = {.pid = 200, .comm = "other", .thread_name = "other"};
	struct profile *p = profile__new(&meta);
	size_t i;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &app), ==, 1);
	CHECK_INT(profile__add_mapping(p, &lib), ==, 2);
	CHECK_INT(profile__add_mapping(p, &kernel), ==, 3);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, a, 2, &app_labels, 30), ==, 0);
	CHECK_INT(profile__add_sample(p, b, 3, &app_labels, 20), ==, 0);
	CHECK_INT(profile__add_sample(p, c, 3, &worker, 10), ==, 0);
	CHECK_INT(profile__add_sample(p, d, 2, &app_labels, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, e, 1, &other, 1), ==, 0);
	CHECK_INT(profile__add_comment(p, "cprof unit test"), ==, 0);
	return p;
}

TEST(pprof_tables)
{
	struct profile *p = build_profile();
	struct field f, g;
	uint8_t *out;
	size_t len, i;

	encode(p, &out, &len);
	CHECK_U64(count_fields(out, len, 2), ==, 5);
	CHECK_U64(count_fields(out, len, 3), ==, 3);
	CHECK_U64(count_fields(out, len, 4), ==, 7);
	/* main appears at two addresses but is one function. */
	CHECK_U64(count_fields(out, len, 5), ==, 6);
	CHECK(find_field(out, len, 6, 0, &f) == 0);
	CHECK_U64(f.len, ==, 0);

	/* IDs are 1..N in table order. */
	for (i = 0; i < 3; i++) {
		CHECK(find_field(out, len, 3, i, &f) == 0);
		CHECK_U64(varint_field(f.data, f.len, 1), ==, i + 1);
	}
	for (i = 0; i < 7; i++) {
		CHECK(find_field(out, len, 4, i, &f) == 0);
		CHECK_U64(varint_field(f.data, f.len, 1), ==, i + 1);
		CHECK(find_field(f.data, f.len, 4, 0, &g) == 0);
		CHECK_U64(count_fields(f.data, f.len, 4), ==, 1);
	}
	for (i = 0; i < 6; i++) {
		CHECK(find_field(out, len, 5, i, &f) == 0);
		CHECK_U64(varint_field(f.data, f.len, 1), ==, i + 1);
	}
	/* Location 7 (main at 0x401010) uses function 1, like location 1. */
	CHECK(find_field(out, len, 4, 6, &f) == 0);
	CHECK(find_field(f.data, f.len, 4, 0, &g) == 0);
	CHECK_U64(varint_field(g.data, g.len, 1), ==, 1);
	/* Location 6 has no mapping. */
	CHECK(find_field(out, len, 4, 5, &f) == 0);
	CHECK_U64(varint_field(f.data, f.len, 2), ==, 0);

	/* has_functions: app and kernel resolved something, and so did lib. */
	for (i = 0; i < 3; i++) {
		CHECK(find_field(out, len, 3, i, &f) == 0);
		CHECK_U64(varint_field(f.data, f.len, 7), ==, 1);
	}
	/* The worker sample carries pid, comm, thread_name and tid labels; others no tid. */
	CHECK(find_field(out, len, 2, 2, &f) == 0);
	CHECK_U64(count_fields(f.data, f.len, 3), ==, 4);
	CHECK(find_field(out, len, 2, 0, &f) == 0);
	CHECK_U64(count_fields(f.data, f.len, 3), ==, 3);
	free(out);
	profile__free(p);
}

TEST(pprof_has_functions_false_when_nothing_resolved)
{
	struct profile_meta meta = {.period_ns = 1};
	struct profile *p = profile__new(&meta);
	struct profile_mapping m = {.start = 0x1000, .limit = 0x2000, .path = "/x", .build_id = ""};
	struct profile_frame f = {
		.mapping = 1, .address = 0x1100, .name = "x+0x100", .kind = FRAME_UNNAMED};
	struct profile_labels l = {.pid = 1, .comm = "x", .thread_name = "x"};
	struct field fm;
	uint32_t s[1];
	uint8_t *out;
	size_t len;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &m), ==, 1);
	s[0] = profile__add_frame(p, &f);
	CHECK_INT(profile__add_sample(p, s, 1, &l, 1), ==, 0);
	encode(p, &out, &len);
	CHECK(find_field(out, len, 3, 0, &fm) == 0);
	CHECK_U64(count_fields(fm.data, fm.len, 7), ==, 0);
	free(out);
	profile__free(p);
}

/*
 * The main program's mapping is written first (pprof's "File:"), even when
 * a library and the kernel were seen before it: ID 1, and every location
 * keeps pointing at the mapping it is in.
 */
TEST(pprof_main_program_mapping_first)
{
	struct profile_meta meta = {.period_ns = 1};
	struct profile *p = profile__new(&meta);
	struct profile_mapping lib = {.start = 0x7f0000,
				      .limit = 0x7f1000,
				      .path = "/lib/libc.so.6",
				      .build_id = ""},
			       kernel = {.limit = ~0ull,
					 .path = "",
					 .build_id = "",
					 .kernel = true},
			       prog = {.start = 0x400000,
				       .limit = 0x401000,
				       .path = "/bin/prog",
				       .build_id = "",
				       .main_exe = true};
	struct profile_frame fl = {.mapping = 1, .address = 0x7f0100, .name = "memcpy"},
			     fk = {.mapping = 2,
				   .address = 0xffff1000,
				   .name = "irq",
				   .kernel = true},
			     fp = {.mapping = 3, .address = 0x400100, .name = "main"};
	struct profile_labels l = {.pid = 1, .comm = "prog", .thread_name = "prog"};
	uint32_t s1[3], s2[1];
	struct field f, loc;
	uint8_t *out;
	size_t len, i;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &lib), ==, 1);
	CHECK_INT(profile__add_mapping(p, &kernel), ==, 2);
	CHECK_INT(profile__add_mapping(p, &prog), ==, 3);
	s1[0] = profile__add_frame(p, &fk);
	s1[1] = profile__add_frame(p, &fl);
	s1[2] = profile__add_frame(p, &fp);
	s2[0] = s1[1];
	CHECK_INT(profile__add_sample(p, s1, 3, &l, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, s2, 1, &l, 50), ==, 0);
	encode(p, &out, &len);
	/* Mappings in order prog, libc, kernel, IDs 1..3. */
	CHECK(find_field(out, len, 3, 0, &f) == 0);
	CHECK_U64(varint_field(f.data, f.len, 1), ==, 1);
	CHECK_U64(varint_field(f.data, f.len, 2), ==, 0x400000);
	CHECK(find_field(out, len, 3, 1, &f) == 0);
	CHECK_U64(varint_field(f.data, f.len, 1), ==, 2);
	CHECK_U64(varint_field(f.data, f.len, 2), ==, 0x7f0000);
	CHECK(find_field(out, len, 3, 2, &f) == 0);
	CHECK_U64(varint_field(f.data, f.len, 1), ==, 3);
	/* Locations (irq, memcpy, main) point at mappings 3, 2, 1 now. */
	for (i = 0; i < 3; i++) {
		CHECK(find_field(out, len, 4, i, &loc) == 0);
		CHECK_U64(varint_field(loc.data, loc.len, 2), ==, 3 - i);
	}
	free(out);
	profile__free(p);
}

/*
 * Issue 38, item 11: the first mapping is pprof's main binary ("File:").
 * Whole system: a mapping of nothing, no program named. A command: its
 * process's program, not the one with the most samples.
 */
TEST(pprof_main_binary_rule)
{
	struct profile_meta meta = {.period_ns = 1, .whole_system = true};
	struct profile_mapping cc1 = {.start = 0x400000,
				      .limit = 0x401000,
				      .path = "/usr/lib/gcc/cc1",
				      .build_id = "",
				      .main_exe = true},
			       make = {.start = 0x500000,
				       .limit = 0x501000,
				       .path = "/usr/bin/make",
				       .build_id = "",
				       .main_exe = true};
	struct profile_frame f1 = {.mapping = 1, .address = 0x400100, .name = "parse"},
			     f2 = {.mapping = 2, .address = 0x500100, .name = "main"};
	struct profile_labels lc = {.pid = 20, .comm = "cc1"}, lm = {.pid = 10, .comm = "make"};
	struct profile *p;
	struct field f;
	uint32_t s1, s2;
	uint8_t *out;
	size_t len;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		p = profile__new(&meta);
		CHECK(p);
		CHECK_INT(profile__add_mapping(p, &cc1), ==, 1);
		CHECK_INT(profile__add_mapping(p, &make), ==, 2);
		s1 = profile__add_frame(p, &f1);
		s2 = profile__add_frame(p, &f2);
		CHECK_INT(profile__add_sample(p, &s1, 1, &lc, 90), ==, 0);
		CHECK_INT(profile__add_sample(p, &s2, 1, &lm, 10), ==, 0);
		if (pass == 2)
			profile__set_main_pid(p, 10);
		encode(p, &out, &len);
		CHECK(find_field(out, len, 3, 0, &f) == 0);
		CHECK_U64(varint_field(f.data, f.len, 1), ==, 1);
		if (pass == 0) {
			/* Whole system: mapping 1 has no addresses and no file; cc1 is 2. */
			CHECK_U64(varint_field(f.data, f.len, 2), ==, 0);
			CHECK_U64(varint_field(f.data, f.len, 5), ==, 0);
			CHECK(find_field(out, len, 3, 2, &f) == 0);
			CHECK_U64(varint_field(f.data, f.len, 2), ==, 0x500000);
			CHECK(find_field(out, len, 4, 0, &f) == 0);
			CHECK_U64(varint_field(f.data, f.len, 2), ==, 2);
		} else {
			/* Targeted: the most sampled (cc1), or main_pid's program (make). */
			CHECK_U64(varint_field(f.data, f.len, 2), ==,
				  pass == 1 ? 0x400000 : 0x500000);
			CHECK(find_field(out, len, 3, 2, &f) != 0);
		}
		free(out);
		profile__free(p);
		meta.whole_system = false;
	}
}

/* gz decompresses to want[0..len); frees gz. */
static void check_gunzips_to(uint8_t *gz, size_t gz_len, const uint8_t *want, size_t len)
{
	uint8_t *back;
	size_t back_len;

	gunzip(gz, gz_len, &back, &back_len);
	CHECK_U64(back_len, ==, len);
	CHECK(len == 0 || memcmp(back, want, len) == 0);
	free(back);
	free(gz);
}

static void check_gzip_roundtrip(const uint8_t *data, size_t len)
{
	uint8_t *gz;
	size_t gz_len;

	struct gzip_stream *s;

	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_write(s, data, len), ==, 0);
	CHECK_INT(compress__gzip_end(s, &gz, &gz_len), ==, 0);
	CHECK_U64(gz_len, >=, 18);
	CHECK_BYTES(gz, 3, "\x1f\x8b\x08");
	check_gunzips_to(gz, gz_len, data, len);
}

TEST(compress_gzip_roundtrip)
{
	size_t n = 3 << 20, i;
	uint8_t *data = malloc(n);
	uint32_t x = 12345;

	CHECK(data);
	check_gzip_roundtrip((const uint8_t *)"", 0);
	check_gzip_roundtrip((const uint8_t *)"hello", 5);
	/* Incompressible data makes the output larger than the input. */
	for (i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		data[i] = (uint8_t)(x >> 16);
	}
	check_gzip_roundtrip(data, n);
	memset(data, 'a', n);
	check_gzip_roundtrip(data, n);
	free(data);
}

TEST(pprof_gzip_roundtrip)
{
	struct profile *p = build_profile();
	uint8_t *pb, *gz;
	size_t pb_len, gz_len;

	encode(p, &pb, &pb_len);
	CHECK_U64(pb_len, >, 0);
	/* One gzip member, and encoded again the same bytes. */
	CHECK_INT(pprof__encode_gz(p, &gz, &gz_len), ==, 0);
	CHECK_BYTES(gz, 3, "\x1f\x8b\x08");
	check_gunzips_to(gz, gz_len, pb, pb_len);
	free(pb);
	profile__free(p);
}

/* Written a few bytes at a time, as a pb_writer does: the same bytes come back. */
TEST(compress_gzip_stream_small_writes)
{
	size_t n = 300 * 1024, i, step;
	uint8_t *data = malloc(n), *gz;
	struct gzip_stream *s;
	size_t gz_len;
	uint32_t x = 1;

	CHECK(data);
	for (i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		/* Half text-like, half noise: deflate both stores and compresses. */
		data[i] = i < n / 2 ? (uint8_t)('a' + (x >> 16) % 4) : (uint8_t)(x >> 16);
	}
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	for (i = 0, step = 1; i < n; i += step, step = step % 97 + 1)
		CHECK_INT(compress__gzip_write(s, data + i, i + step > n ? n - i : step), ==, 0);
	CHECK_INT(compress__gzip_end(s, &gz, &gz_len), ==, 0);
	check_gunzips_to(gz, gz_len, data, n);
	/* Nothing written is an empty member; an abandoned stream is freed cleanly. */
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_end(s, &gz, &gz_len), ==, 0);
	check_gunzips_to(gz, gz_len, data, 0);
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_write(s, data, 1000), ==, 0);
	compress__gzip_free(s);
	compress__gzip_free(NULL);
	free(data);
}

/* Writes the test profile as .pb.gz and returns the output of `go tool pprof ARGS FILE`. */
static char *run_go_pprof(const char *args)
{
	const char *dir = test_tmp_dir();
	char path[512], cmd[2048];
	struct profile *p;
	uint8_t *gz;
	size_t gz_len, len = 0, cap = 1 << 16, n;
	char *text;
	FILE *fp;
	int status;

	if (system("command -v go >/dev/null 2>&1") != 0)
		SKIP("go is not installed, so there is no reference pprof reader");
	p = build_profile();
	CHECK_INT(pprof__encode_gz(p, &gz, &gz_len), ==, 0);
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	fp = fopen(path, "wb");
	CHECK(fp);
	CHECK_U64(fwrite(gz, 1, gz_len, fp), ==, gz_len);
	CHECK_INT(fclose(fp), ==, 0);
	free(gz);
	profile__free(p);

	/* pprof wants a writable home; PPROF_BINARY_PATH keeps it from finding any binary. */
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' PPROF_TMPDIR='%s' PPROF_BINARY_PATH='%s' GOCACHE='%s/gocache' "
		 "GOFLAGS= go tool pprof %s '%s' 2>&1",
		 dir, dir, dir, dir, args, path);
	fp = popen(cmd, "r");
	CHECK(fp);
	text = malloc(cap);
	CHECK(text);
	while ((n = fread(text + len, 1, cap - 1 - len, fp)) > 0) {
		len += n;
		if (len == cap - 1) {
			cap *= 2;
			text = realloc(text, cap);
			CHECK(text);
		}
	}
	text[len] = '\0';
	status = pclose(fp);
	/* The scratch directory is shared by all tests; test_main removes it at the end. */
	unlink(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s\n", text);
		test_fail(__FILE__, __LINE__, "go tool pprof %s failed (status 0x%x)", args,
			  status);
	}
	return text;
}

#define CHECK_HAS(text, s)                                                              \
	do {                                                                            \
		if (!strstr((text), (s))) {                                             \
			fprintf(stderr, "--- output:\n%s--- lacks: %s\n", (text), (s)); \
			test_fail(__FILE__, __LINE__, "output lacks \"%s\"", (s));      \
		}                                                                       \
	} while (0)

/* Collapses runs of blanks so that checks do not depend on pprof's column widths. */
static void squeeze_blanks(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if ((*s == ' ' || *s == '\t') && (s[1] == ' ' || s[1] == '\t'))
			continue;
		*w++ = *s == '\t' ? ' ' : *s;
	}
	*w = '\0';
}

TEST(pprof_go_tool_raw)
{
	char *out = run_go_pprof("-raw");

	squeeze_blanks(out);
	CHECK_HAS(out, "Comment: cprof unit test\n");
	CHECK_HAS(out, "PeriodType: cpu nanoseconds\n");
	CHECK_HAS(out, "Period: 10000000\n");
	CHECK_HAS(out, "Duration: 5s\n");
	CHECK_HAS(out, "samples/count cpu/nanoseconds[dflt]\n");
	/* Counts and labels of each sample. */
	CHECK_HAS(out, " 30 300000000: ");
	CHECK_HAS(out, " 20 200000000: ");
	CHECK_HAS(out, " 10 100000000: ");
	CHECK_HAS(out, " 5 50000000: ");
	CHECK_HAS(out, " 1 10000000: ");
	CHECK_HAS(out, " comm:[app] thread_name:[app]\n pid:[100]\n");
	CHECK_HAS(out, " comm:[app] thread_name:[worker]\n pid:[100] tid:[101]\n");
	CHECK_HAS(out, " comm:[other] thread_name:[other]\n pid:[200]\n");
	/* Locations keep their mapping, address and function. */
	CHECK_HAS(out, ": 0x401100 M=1 compute ");
	CHECK_HAS(out, ": 0x401000 M=1 main ");
	CHECK_HAS(out, ": 0x401010 M=1 main ");
	CHECK_HAS(out, ": 0x7f0000001234 M=2 lib_work(int) :0 s=0(_Z8lib_worki)\n");
	CHECK_HAS(out, ": 0x7f0000005678 M=2 libfoo.so+0x6678 ");
	CHECK_HAS(out, ": 0xffffffff81001000 M=3 do_syscall_64 ");
	CHECK_HAS(out, ": 0xdead [unknown] ");
	CHECK_HAS(out, "1: 0x400000/0x500000/0x0 /nonexistent/cprof-test/app deadbeef [FN]\n");
	CHECK_HAS(
		out,
		"2: 0x7f0000000000/0x7f0000100000/0x1000 /nonexistent/cprof-test/libfoo.so [FN]\n");
	CHECK_HAS(out, "3: 0xffffffff81000000/0xffffffff82000000/0x0 [kernel.kallsyms] [FN]\n");
	free(out);
}

TEST(pprof_go_tool_traces)
{
	char *out = run_go_pprof("-traces");

	squeeze_blanks(out);
	CHECK_HAS(out, " 300ms compute\n main\n");
	CHECK_HAS(out, " 200ms lib_work(int)\n compute\n main\n");
	CHECK_HAS(out, "thread_name: worker\n pid: 100\n tid: 101\n 100ms do_syscall_64\n "
		       "lib_work(int)\n main\n");
	CHECK_HAS(out, " 50ms libfoo.so+0x6678\n main\n");
	CHECK_HAS(out, " comm: other\nthread_name: other\n pid: 200\n 10ms [unknown]\n");
	free(out);
}

TEST(pprof_go_tool_top)
{
	char *out = run_go_pprof("-top");

	squeeze_blanks(out);
	CHECK_HAS(out, "Type: cpu\n");
	CHECK_HAS(out, "Total samples = 660ms");
	CHECK_HAS(out, " 300ms 45.45% 45.45% 500ms 75.76% compute\n");
	CHECK_HAS(out, " 200ms 30.30% 75.76% 300ms 45.45% lib_work(int)\n");
	CHECK_HAS(out, " 100ms 15.15% 90.91% 100ms 15.15% do_syscall_64\n");
	CHECK_HAS(out, " 50ms 7.58% 98.48% 50ms 7.58% libfoo.so+0x6678\n");
	CHECK_HAS(out, " 10ms 1.52% 100% 10ms 1.52% [unknown]\n");
	CHECK_HAS(out, " 0 0% 100% 650ms 98.48% main\n");
	free(out);
}
