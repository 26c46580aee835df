/* SPDX-License-Identifier: MIT */
/*
 * Names of JIT-compiled code from a perf map: the text file
 * /tmp/perf-PID.map that runtimes write for profilers (Node with
 * --perf-basic-prof, JVM agents, LuaJIT, ...), one "START SIZE NAME" line
 * per code blob, START and SIZE in hex. PID is the process's PID in its own
 * namespace and /tmp is its own /tmp, so a containerized process's map is
 * read through its root directory.
 *
 * Parsing works on a buffer so it can be tested on fixture text;
 * perf_map__read() is the thin file wrapper.
 */
#ifndef CPROF_PERF_MAP_H
#define CPROF_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proc_file.h"

struct perf_map;

/*
 * What was read last of one process's map, so that a map is read again
 * only when it changed, and never more often than its reading cost allows:
 * a miss on the sampling loop re-reads it, and a hostile map must not
 * stretch the run. Zeroed: nothing read yet.
 */
struct perf_map_source {
	uint64_t dev, ino, size; /* the file read last (ino 0: none) */
	int64_t mtime_ns;
	uint64_t next_read_ns;		/* CLOCK_MONOTONIC: not read again before */
	bool capped;			/* only its head was read: appending changes nothing */
	enum proc_file_refusal refused; /* of the last attempt */
};

/* Parses perf map text; malformed lines are skipped and counted, never fatal. */
int perf_map__parse(const char *text, size_t len, struct perf_map **out);
/*
 * Reads /tmp/perf-NSPID.map inside the root of process pid, if it changed
 * since src's read and src allows a read now: 1 with *out, 0 when there is
 * nothing new (the map read before still holds), or -errno (-ENOENT: none;
 * src->refused says when the rule refused the file).
 */
int perf_map__reread(uint32_t pid, uint32_t ns_pid, struct perf_map_source *src,
		     struct perf_map **out);
/* The same once, with no memory of a last read: 0 with *out, or -errno. */
int perf_map__read(uint32_t pid, uint32_t ns_pid, struct perf_map **out);
void perf_map__free(struct perf_map *m);

/* Name of the code blob containing addr, or NULL. A later line wins where blobs overlap. */
const char *perf_map__lookup(const struct perf_map *m, uint64_t addr);
/* Number of well-formed lines. */
size_t perf_map__count(const struct perf_map *m);
/* Number of lines that could not be parsed. */
size_t perf_map__bad_lines(const struct perf_map *m);
/* The memory its names and ranges hold (roughly what it costs to keep). */
size_t perf_map__bytes(const struct perf_map *m);
/* Whether the file was longer than the caps, so that only its head was read. */
bool perf_map__capped(const struct perf_map *m);

#endif
