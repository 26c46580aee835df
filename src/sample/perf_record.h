/* SPDX-License-Identifier: MIT */
/*
 * The side-band records the kernel writes into a perf ring when a task forks,
 * execs, maps executable memory or exits (PERF_RECORD_FORK, COMM, MMAP2,
 * EXIT, LOST), decoded into one flat struct. No syscalls: the bytes are
 * outside input like a file, so the parser is tested and fuzzed on its own.
 */
#ifndef CPROF_PERF_RECORD_H
#define CPROF_PERF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum task_event_type {
	TASK_EVENT_FORK = 1,
	TASK_EVENT_EXIT,
	TASK_EVENT_COMM,
	TASK_EVENT_MMAP,
	TASK_EVENT_LOST,
};

struct task_event {
	enum task_event_type type;
	uint32_t pid, tid;   /* FORK/EXIT: the new or exiting task; COMM/MMAP: the task */
	uint32_t ppid, ptid; /* FORK/EXIT only */
	uint64_t time;	     /* CLOCK_MONOTONIC ns, from the sample_id_all trailer; 0 if absent */
	bool exec;	     /* COMM: PERF_RECORD_MISC_COMM_EXEC (the name exec set) */
	char comm[16];	     /* COMM: NUL-terminated (truncated if needed) */
	/*
	 * MMAP, from PERF_RECORD_MMAP2, or from a plain PERF_RECORD_MMAP, which
	 * has no dev/inode/prot/flags (left 0).
	 */
	uint64_t start, len, pgoff, inode, ino_generation;
	uint32_t dev_major, dev_minor, prot, flags;
	uint8_t build_id_size; /* > 0 when the record carried a build ID instead of dev/inode */
	uint8_t build_id[20];
	const char *filename; /* MMAP: NUL-terminated; points into the parsed buffer or a copy */
	uint64_t lost;	      /* LOST: how many records the kernel dropped */
};

/*
 * Parses one record (header included, size from the header, as copied out of
 * the ring). sample_type is the event attr's: it gives the layout of the
 * sample_id_all trailer at the end of every record. Returns 0, -EINVAL for a
 * malformed or truncated record (nothing past size is read), or -ENOTSUP for
 * a record type that carries no task event (THROTTLE, KSYMBOL...), which
 * callers skip.
 */
int perf_record__parse(const void *rec, size_t size, uint64_t sample_type, struct task_event *out);

/* A new process (its main thread's fork), not a new thread of one. */
static inline bool task_event__process_fork(const struct task_event *ev)
{
	return ev->type == TASK_EVENT_FORK && ev->pid == ev->tid;
}

#endif
