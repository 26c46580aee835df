// SPDX-License-Identifier: MIT
/*
 * Decodes the side-band records of include/uapi/linux/perf_event.h. Every
 * length comes from the record itself, so each field is bounds-checked
 * against the header's size before it is read, and read with memcpy: a copy
 * out of the ring, or a fuzzer's input, need not be aligned.
 *
 * With sample_id_all, the kernel appends the sample_id fields the attr's
 * sample_type selects (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, 8 bytes
 * each) at the very end of every record, after the strings that are padded
 * to 8 bytes; so the trailer is found from the end, the way perf reads it.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "sample/perf_record.h"

/* The fixed part of each record, header included, before any string. */
#define MMAP_FIXED  40 /* header, pid, tid, addr, len, pgoff */
#define MMAP2_FIXED 72 /* MMAP_FIXED, then maj, min, ino, ino_generation, prot, flags */
#define COMM_FIXED  16 /* header, pid, tid */
#define TASK_FIXED  32 /* header, pid, ppid, tid, ptid, time */
#define LOST_FIXED  24 /* header, id, lost */

/* A record's body: the bytes between the header's start and the trailer. */
struct body {
	const unsigned char *p;
	size_t len;
};

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static size_t trailer_size(uint64_t sample_type)
{
	static const uint64_t fields[] = {PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
					  PERF_SAMPLE_ID,  PERF_SAMPLE_STREAM_ID,
					  PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER};
	size_t i, n = 0;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (sample_type & fields[i])
			n += 8;
	return n;
}

/* The time of the trailer, which starts at rec + body_len. */
static uint64_t trailer_time(const unsigned char *trailer, uint64_t sample_type)
{
	if (!(sample_type & PERF_SAMPLE_TIME))
		return 0;
	return get_u64(trailer + (sample_type & PERF_SAMPLE_TID ? 8 : 0));
}

/*
 * A NUL-terminated string at body offset off, or NULL if the body ends
 * without a NUL (the kernel always writes one and pads with zeros).
 */
static const char *body_string(const struct body *b, size_t off)
{
	if (off >= b->len || !memchr(b->p + off, '\0', b->len - off))
		return NULL;
	return (const char *)b->p + off;
}

static int parse_task(const struct body *b, enum task_event_type type, struct task_event *out)
{
	if (b->len < TASK_FIXED)
		return -EINVAL;
	out->type = type;
	out->pid = get_u32(b->p + 8);
	out->ppid = get_u32(b->p + 12);
	out->tid = get_u32(b->p + 16);
	out->ptid = get_u32(b->p + 20);
	return 0;
}

static int parse_comm(const struct body *b, uint16_t misc, struct task_event *out)
{
	const char *comm = body_string(b, COMM_FIXED);

	if (!comm)
		return -EINVAL;
	out->type = TASK_EVENT_COMM;
	out->pid = get_u32(b->p + 8);
	out->tid = get_u32(b->p + 12);
	out->exec = misc & PERF_RECORD_MISC_COMM_EXEC;
	/* TASK_COMM_LEN is 16 today; a longer name is cut, not refused. */
	strncpy(out->comm, comm, sizeof(out->comm) - 1);
	return 0;
}

/* The union of MMAP2: device and inode, or a build ID (PERF_RECORD_MISC_MMAP_BUILD_ID). */
static int parse_mmap2_file(const unsigned char *p, uint16_t misc, struct task_event *out)
{
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		/* Size 0 is the kernel's "could not read the build ID". */
		out->build_id_size = p[0];
		if (out->build_id_size > sizeof(out->build_id))
			return -EINVAL;
		memcpy(out->build_id, p + 4, out->build_id_size);
		return 0;
	}
	out->dev_major = get_u32(p);
	out->dev_minor = get_u32(p + 4);
	out->inode = get_u64(p + 8);
	out->ino_generation = get_u64(p + 16);
	return 0;
}

static int parse_mmap(const struct body *b, bool mmap2, uint16_t misc, struct task_event *out)
{
	size_t fixed = mmap2 ? MMAP2_FIXED : MMAP_FIXED;
	int err;

	if (b->len < fixed)
		return -EINVAL;
	out->filename = body_string(b, fixed);
	if (!out->filename)
		return -EINVAL;
	out->type = TASK_EVENT_MMAP;
	out->pid = get_u32(b->p + 8);
	out->tid = get_u32(b->p + 12);
	out->start = get_u64(b->p + 16);
	out->len = get_u64(b->p + 24);
	out->pgoff = get_u64(b->p + 32);
	if (!mmap2)
		return 0;
	err = parse_mmap2_file(b->p + 40, misc, out);
	if (err)
		return err;
	out->prot = get_u32(b->p + 64);
	out->flags = get_u32(b->p + 68);
	return 0;
}

static int parse_lost(const struct body *b, struct task_event *out)
{
	if (b->len < LOST_FIXED)
		return -EINVAL;
	out->type = TASK_EVENT_LOST;
	out->lost = get_u64(b->p + 16);
	return 0;
}

static int parse_body(const struct body *b, const struct perf_event_header *hdr,
		      struct task_event *out)
{
	switch (hdr->type) {
	case PERF_RECORD_FORK:
		return parse_task(b, TASK_EVENT_FORK, out);
	case PERF_RECORD_EXIT:
		return parse_task(b, TASK_EVENT_EXIT, out);
	case PERF_RECORD_COMM:
		return parse_comm(b, hdr->misc, out);
	case PERF_RECORD_MMAP:
		return parse_mmap(b, false, hdr->misc, out);
	case PERF_RECORD_MMAP2:
		return parse_mmap(b, true, hdr->misc, out);
	case PERF_RECORD_LOST:
		return parse_lost(b, out);
	default:
		return -ENOTSUP;
	}
}

int perf_record__parse(const void *rec, size_t size, uint64_t sample_type, struct task_event *out)
{
	struct perf_event_header hdr;
	size_t tsize = trailer_size(sample_type);
	struct body b = {.p = rec};
	int err;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	/* The header's size is the record's; a buffer shorter than that is truncated. */
	if (hdr.size < sizeof(hdr) + tsize || hdr.size > size)
		return -EINVAL;
	b.len = hdr.size - tsize;
	err = parse_body(&b, &hdr, out);
	if (err) {
		memset(out, 0, sizeof(*out));
		return err;
	}
	out->time = trailer_time(b.p + b.len, sample_type);
	return 0;
}
