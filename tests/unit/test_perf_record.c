// SPDX-License-Identifier: MIT
/*
 * perf_record: records built byte by byte as the kernel lays them out
 * (include/uapi/linux/perf_event.h), one of each type, checked field by
 * field; then cut, lying and unterminated ones. Each is parsed from a heap
 * copy of exactly its size, so the ASan build catches any read past it.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/perf_record.h"
#include "test.h"

#define TID_TIME (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

struct rec {
	uint8_t b[512];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t len)
{
	CHECK(r->n + len <= sizeof(r->b));
	memcpy(r->b + r->n, p, len);
	r->n += len;
}

static void put_u32(struct rec *r, uint32_t v)
{
	put(r, &v, sizeof(v));
}

static void put_u64(struct rec *r, uint64_t v)
{
	put(r, &v, sizeof(v));
}

/* A string as the kernel writes it: NUL-terminated, zero-padded to 8 bytes. */
static void put_str(struct rec *r, const char *s)
{
	static const uint8_t zeros[8];
	size_t len = strlen(s) + 1;

	put(r, s, len - 1);
	put(r, zeros, 8 - (len - 1) % 8);
}

static struct rec start(uint32_t type, uint16_t misc)
{
	struct rec r = {.n = 0};
	struct perf_event_header h = {.type = type, .misc = misc};

	put(&r, &h, sizeof(h));
	return r;
}

/* The sample_id_all trailer for TID|TIME, then the header's size. */
static void end(struct rec *r, uint64_t time)
{
	uint16_t size;

	put_u32(r, 4242);
	put_u32(r, 4243);
	put_u64(r, time);
	size = r->n;
	memcpy(r->b + 6, &size, sizeof(size));
}

/* A heap copy of exactly len bytes: ASan flags any read past it. */
static int parse_len(const struct rec *r, size_t len, uint64_t sample_type, struct task_event *ev,
		     void **copy)
{
	*copy = malloc(len ? len : 1);
	CHECK(*copy);
	memcpy(*copy, r->b, len);
	return perf_record__parse(*copy, len, sample_type, ev);
}

static int parse_tmp(const struct rec *r, size_t len, uint64_t sample_type)
{
	struct task_event ev;
	void *copy;
	int err = parse_len(r, len, sample_type, &ev, &copy);

	free(copy);
	return err;
}

static struct rec mmap2_record(uint16_t misc, const char *filename)
{
	struct rec r = start(PERF_RECORD_MMAP2, misc);

	put_u32(&r, 100);
	put_u32(&r, 101);
	put_u64(&r, 0x7f0000001000);
	put_u64(&r, 0x156000);
	put_u64(&r, 0x26000);
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		uint8_t id[24] = {20, 0, 0, 0};

		for (int i = 0; i < 20; i++)
			id[4 + i] = 0xa0 + i;
		put(&r, id, sizeof(id));
	} else {
		put_u32(&r, 254);
		put_u32(&r, 3);
		put_u64(&r, 332835);
		put_u64(&r, 77);
	}
	put_u32(&r, 5); /* PROT_READ | PROT_EXEC */
	put_u32(&r, 2); /* MAP_PRIVATE */
	put_str(&r, filename);
	end(&r, 5000);
	return r;
}

static struct rec task_record(uint32_t type)
{
	struct rec r = start(type, 0);

	put_u32(&r, 200); /* pid */
	put_u32(&r, 199); /* ppid */
	put_u32(&r, 201); /* tid */
	put_u32(&r, 198); /* ptid */
	put_u64(&r, 1111);
	end(&r, 2222);
	return r;
}

static struct rec comm_record(uint16_t misc, const char *comm)
{
	struct rec r = start(PERF_RECORD_COMM, misc);

	put_u32(&r, 300);
	put_u32(&r, 301);
	put_str(&r, comm);
	end(&r, 3000);
	return r;
}

TEST(perf_record_fork)
{
	struct rec r = task_record(PERF_RECORD_FORK);
	struct task_event ev;
	void *copy;

	CHECK_INT(r.n, ==, 48);
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_FORK);
	CHECK_INT(ev.pid, ==, 200);
	CHECK_INT(ev.ppid, ==, 199);
	CHECK_INT(ev.tid, ==, 201);
	CHECK_INT(ev.ptid, ==, 198);
	/* The trailer's time, not the body's. */
	CHECK_U64(ev.time, ==, 2222);
	CHECK(ev.filename == NULL);
	free(copy);
}

TEST(perf_record_exit)
{
	struct rec r = task_record(PERF_RECORD_EXIT);
	struct task_event ev;
	void *copy;

	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_EXIT);
	CHECK_INT(ev.pid, ==, 200);
	CHECK_INT(ev.tid, ==, 201);
	CHECK_INT(ev.ppid, ==, 199);
	CHECK_INT(ev.ptid, ==, 198);
	CHECK_U64(ev.time, ==, 2222);
	free(copy);
}

TEST(perf_record_comm_exec)
{
	struct rec r = comm_record(PERF_RECORD_MISC_COMM_EXEC, "true");
	struct task_event ev;
	void *copy;

	CHECK_INT(r.n, ==, 40);
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_COMM);
	CHECK_INT(ev.pid, ==, 300);
	CHECK_INT(ev.tid, ==, 301);
	CHECK(ev.exec);
	CHECK_STR(ev.comm, "true");
	CHECK_U64(ev.time, ==, 3000);
	free(copy);
}

TEST(perf_record_comm_rename)
{
	/* A prctl(PR_SET_NAME) or a thread's name: no exec flag; 15 bytes fill comm. */
	struct rec r = comm_record(0, "worker-thread-1");
	struct task_event ev;
	void *copy;

	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK(!ev.exec);
	CHECK_STR(ev.comm, "worker-thread-1");
	free(copy);
	/* Longer than the kernel's TASK_COMM_LEN: cut, still terminated. */
	r = comm_record(0, "a-name-of-twenty-four-ch");
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_STR(ev.comm, "a-name-of-twent");
	free(copy);
}

TEST(perf_record_mmap2)
{
	struct rec r = mmap2_record(PERF_RECORD_MISC_USER, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	struct task_event ev;
	void *copy;

	CHECK_INT(r.n, ==, 72 + 40 + 16);
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_MMAP);
	CHECK_INT(ev.pid, ==, 100);
	CHECK_INT(ev.tid, ==, 101);
	CHECK_U64(ev.start, ==, 0x7f0000001000);
	CHECK_U64(ev.len, ==, 0x156000);
	CHECK_U64(ev.pgoff, ==, 0x26000);
	CHECK_INT(ev.dev_major, ==, 254);
	CHECK_INT(ev.dev_minor, ==, 3);
	CHECK_U64(ev.inode, ==, 332835);
	CHECK_U64(ev.ino_generation, ==, 77);
	CHECK_INT(ev.prot, ==, 5);
	CHECK_INT(ev.flags, ==, 2);
	CHECK_INT(ev.build_id_size, ==, 0);
	CHECK_STR(ev.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* The filename is the caller's buffer, not a copy. */
	CHECK(ev.filename == (const char *)copy + 72);
	CHECK_U64(ev.time, ==, 5000);
	free(copy);
}

TEST(perf_record_mmap2_build_id)
{
	struct rec r = mmap2_record(PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID,
				    "/usr/bin/true");
	struct task_event ev;
	void *copy;
	int i;

	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_MMAP);
	CHECK_INT(ev.build_id_size, ==, 20);
	for (i = 0; i < 20; i++)
		CHECK_INT(ev.build_id[i], ==, 0xa0 + i);
	CHECK_INT(ev.dev_major, ==, 0);
	CHECK_INT(ev.dev_minor, ==, 0);
	CHECK_U64(ev.inode, ==, 0);
	CHECK_INT(ev.prot, ==, 5);
	CHECK_INT(ev.flags, ==, 2);
	CHECK_STR(ev.filename, "/usr/bin/true");
	free(copy);
	/* A build ID longer than the field holds is no build ID. */
	r.b[40] = 21;
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* Size 0: the kernel could not read it; accepted, with no ID. */
	r.b[40] = 0;
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.build_id_size, ==, 0);
	free(copy);
}

TEST(perf_record_mmap_plain)
{
	struct rec r = start(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	struct task_event ev;
	void *copy;

	put_u32(&r, 10);
	put_u32(&r, 11);
	put_u64(&r, 0x400000);
	put_u64(&r, 0x1000);
	put_u64(&r, 0);
	put_str(&r, "//anon");
	end(&r, 777);
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_MMAP);
	CHECK_INT(ev.pid, ==, 10);
	CHECK_INT(ev.tid, ==, 11);
	CHECK_U64(ev.start, ==, 0x400000);
	CHECK_U64(ev.len, ==, 0x1000);
	CHECK_INT(ev.dev_major, ==, 0);
	CHECK_U64(ev.inode, ==, 0);
	CHECK_INT(ev.prot, ==, 0);
	CHECK_STR(ev.filename, "//anon");
	CHECK_U64(ev.time, ==, 777);
	free(copy);
}

TEST(perf_record_lost)
{
	struct rec r = start(PERF_RECORD_LOST, 0);
	struct task_event ev;
	void *copy;

	put_u64(&r, 1);
	put_u64(&r, 12345);
	end(&r, 999);
	CHECK_INT(parse_len(&r, r.n, TID_TIME, &ev, &copy), ==, 0);
	CHECK_INT(ev.type, ==, TASK_EVENT_LOST);
	CHECK_U64(ev.lost, ==, 12345);
	free(copy);
}

TEST(perf_record_ignored_types)
{
	static const uint32_t types[] = {PERF_RECORD_THROTTLE,
					 PERF_RECORD_UNTHROTTLE,
					 PERF_RECORD_SAMPLE,
					 17 /* KSYMBOL */,
					 0,
					 999};
	struct rec r;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		r = start(types[i], 0);
		put_u64(&r, 1);
		put_u64(&r, 2);
		put_u64(&r, 3);
		end(&r, 4);
		CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -ENOTSUP);
	}
	/* An ignored type is still checked for a sane size first. */
	CHECK_INT(parse_tmp(&r, r.n - 1, TID_TIME), ==, -EINVAL);
}

/* Every valid record, cut anywhere before its end, is refused without a read past the cut. */
TEST(perf_record_truncated)
{
	struct rec recs[] = {
		task_record(PERF_RECORD_FORK),
		task_record(PERF_RECORD_EXIT),
		comm_record(PERF_RECORD_MISC_COMM_EXEC, "true"),
		mmap2_record(0, "/usr/bin/true"),
		mmap2_record(PERF_RECORD_MISC_MMAP_BUILD_ID, "/x"),
	};
	size_t i, len;

	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		CHECK_INT(parse_tmp(&recs[i], recs[i].n, TID_TIME), ==, 0);
		for (len = 0; len < recs[i].n; len++)
			CHECK_INT(parse_tmp(&recs[i], len, TID_TIME), ==, -EINVAL);
	}
}

TEST(perf_record_size_lies)
{
	struct rec r = mmap2_record(0, "/usr/bin/true");
	uint16_t size;

	/* The header claims more than the buffer holds. */
	size = r.n + 8;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* Less than a header. */
	size = 4;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* Less than the fixed part plus the trailer. */
	size = 72;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	r = task_record(PERF_RECORD_FORK);
	size = 40;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* A buffer longer than the record: the header's size rules. */
	r = task_record(PERF_RECORD_FORK);
	CHECK_INT(parse_tmp(&r, r.n + 8, TID_TIME), ==, 0);
}

TEST(perf_record_unterminated_strings)
{
	struct rec r = mmap2_record(0, "/usr/lib/libfoo.so");
	struct task_event ev;
	size_t i;

	/* The filename's NUL and padding overwritten, up to the trailer. */
	for (i = 72; i < r.n - 16; i++)
		r.b[i] = 'A';
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	r = comm_record(0, "sleep");
	for (i = 16; i < r.n - 16; i++)
		r.b[i] = 'B';
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* No room at all for the string. */
	r = start(PERF_RECORD_COMM, 0);
	put_u32(&r, 1);
	put_u32(&r, 1);
	end(&r, 1);
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* A failed parse leaves nothing behind. */
	memset(&ev, 0x55, sizeof(ev));
	CHECK_INT(perf_record__parse(r.b, r.n, TID_TIME, &ev), ==, -EINVAL);
	CHECK(ev.filename == NULL);
	CHECK_INT(ev.type, ==, 0);
}

TEST(perf_record_trailer_missing)
{
	struct rec r = start(PERF_RECORD_MMAP2, 0);
	uint16_t size;

	/* An MMAP2 written without sample_id_all: its filename would be read as the trailer. */
	put_u32(&r, 1);
	put_u32(&r, 1);
	put_u64(&r, 0x1000);
	put_u64(&r, 0x1000);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_str(&r, "/bin/ls");
	size = r.n;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, TID_TIME), ==, -EINVAL);
	/* A FORK without it is too short. */
	r = task_record(PERF_RECORD_FORK);
	size = 32;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, 32, TID_TIME), ==, -EINVAL);
	/* Unless the caller says there is none: then the time is unknown. */
	CHECK_INT(parse_tmp(&r, 32, 0), ==, 0);
}

TEST(perf_record_trailer_layouts)
{
	struct rec r = start(PERF_RECORD_FORK, 0);
	struct task_event ev;
	void *copy;
	uint16_t size;

	put_u32(&r, 1);
	put_u32(&r, 2);
	put_u32(&r, 3);
	put_u32(&r, 4);
	put_u64(&r, 5);
	/* TID, TIME, ID, CPU, IDENTIFIER: the time is the trailer's second u64. */
	put_u64(&r, 0x0000000700000006);
	put_u64(&r, 123456789);
	put_u64(&r, 8);
	put_u64(&r, 9);
	put_u64(&r, 10);
	size = r.n;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_len(&r, r.n,
			    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
				    PERF_SAMPLE_IDENTIFIER,
			    &ev, &copy),
		  ==, 0);
	CHECK_U64(ev.time, ==, 123456789);
	CHECK_INT(ev.pid, ==, 1);
	free(copy);
	/* Without TID the time comes first; bits that are not in sample_id are no trailer. */
	CHECK_INT(parse_len(&r, 48,
			    PERF_SAMPLE_TIME | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN |
				    PERF_SAMPLE_PERIOD,
			    &ev, &copy),
		  ==, -EINVAL); /* the header still says 72 */
	free(copy);
	size = 40;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_len(&r, 40, PERF_SAMPLE_TIME | PERF_SAMPLE_IP, &ev, &copy), ==, 0);
	CHECK_U64(ev.time, ==, 0x0000000700000006);
	free(copy);
}

static struct task_event parse_corpus(const char *name, uint8_t **buf)
{
	char path[512];
	struct task_event ev;
	size_t len;

	snprintf(path, sizeof(path), "%s/corpus/perf_record/%s", test_fixtures_dir(), name);
	*buf = test_read_file(path, &len);
	CHECK_INT(perf_record__parse(*buf, len, TID_TIME, &ev), ==, 0);
	return ev;
}

/*
 * Records captured from a 6.18 kernel's ring (the fuzzer's seeds): a child that
 * renamed itself, mapped anonymous and memfd code, ran a thread, then exec'd
 * /bin/true. The build ID and LOST ones are crafted: no such ring here.
 */
TEST(perf_record_real_kernel_records)
{
	struct task_event ev;
	uint8_t *buf;

	ev = parse_corpus("fork_thread", &buf);
	CHECK_INT(ev.type, ==, TASK_EVENT_FORK);
	CHECK_INT(ev.pid, ==, ev.ppid); /* a thread: same process */
	CHECK_INT(ev.tid, !=, ev.pid);
	CHECK_U64(ev.time, >, 0);
	free(buf);
	ev = parse_corpus("comm_prctl", &buf);
	CHECK(!ev.exec);
	CHECK_STR(ev.comm, "renamed-by-prct");
	free(buf);
	ev = parse_corpus("comm_exec", &buf);
	CHECK(ev.exec);
	CHECK_STR(ev.comm, "true");
	free(buf);
	ev = parse_corpus("mmap2_anon", &buf);
	CHECK_STR(ev.filename, "//anon");
	CHECK_U64(ev.pgoff, ==, ev.start); /* the kernel's page offset of anonymous memory */
	CHECK_U64(ev.inode, ==, 0);
	free(buf);
	ev = parse_corpus("mmap2_memfd", &buf);
	CHECK_STR(ev.filename, "/memfd:jit-code (deleted)");
	CHECK_INT(ev.flags, ==, 1); /* MAP_SHARED */
	CHECK_U64(ev.inode, >, 0);
	free(buf);
	ev = parse_corpus("mmap2_vdso", &buf);
	CHECK_STR(ev.filename, "[vdso]");
	CHECK_INT(ev.dev_major, ==, 0);
	CHECK_U64(ev.inode, ==, 0);
	free(buf);
	ev = parse_corpus("mmap2_true", &buf);
	CHECK_STR(ev.filename, "/usr/bin/true");
	CHECK_INT(ev.prot, ==, 5); /* PROT_READ | PROT_EXEC */
	CHECK_U64(ev.inode, >, 0);
	free(buf);
	ev = parse_corpus("mmap2_build_id_crafted", &buf);
	CHECK_INT(ev.build_id_size, ==, 20);
	CHECK_INT(ev.build_id[19], ==, 0xb3);
	CHECK_STR(ev.filename, "/usr/bin/true");
	free(buf);
	ev = parse_corpus("lost_crafted", &buf);
	CHECK_U64(ev.lost, ==, 123);
	free(buf);
}
