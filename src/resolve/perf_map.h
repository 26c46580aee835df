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

#include <stddef.h>
#include <stdint.h>

struct perf_map;

/* Parses perf map text; malformed lines are skipped and counted, never fatal. */
int perf_map__parse(const char *text, size_t len, struct perf_map **out);
/* Reads /tmp/perf-NSPID.map inside the root of process pid. -ENOENT if there is none. */
int perf_map__read(uint32_t pid, uint32_t ns_pid, struct perf_map **out);
void perf_map__free(struct perf_map *m);

/* Name of the code blob containing addr, or NULL. A later line wins where blobs overlap. */
const char *perf_map__lookup(const struct perf_map *m, uint64_t addr);
/* Number of well-formed lines. */
size_t perf_map__count(const struct perf_map *m);
/* Number of lines that could not be parsed. */
size_t perf_map__bad_lines(const struct perf_map *m);

#endif
