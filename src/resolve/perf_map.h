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
	bool stale;			/* the last file found predates its process */
};

/*
 * What is needed to read a process's map after it exited, taken while it
 * lives: once it is gone, /proc/PID/root is too, and its PID may be
 * another process's.
 */
struct perf_map_owner {
	uint32_t pid, ns_pid; /* ns_pid: in its own namespace (0: the same) */
	uint32_t uid;	      /* real uid: the owner rule's user */
	uint64_t start_time;  /* clock ticks after boot, /proc/PID/stat */
	/*
	 * It shared cprof's mount namespace and root, so its /tmp is the one
	 * cprof sees: the only /tmp read after it exited (another namespace's
	 * may be torn down, or be any directory by then).
	 */
	bool host_root;
};

/* How reading a map after its process exited ended. */
enum perf_map_exit {
	PERF_MAP_EXIT_READ,	/* *out holds it */
	PERF_MAP_EXIT_ALIVE,	/* the process still runs: nothing was read */
	PERF_MAP_EXIT_NONE,	/* no map, or it could not be read (counted by the reader's rule) */
	PERF_MAP_EXIT_OTHER_NS, /* it lived in another mount namespace or root: not read */
	PERF_MAP_EXIT_NOT_ITS,	/* written before it started, or by the PID's next process */
	PERF_MAP_EXIT_REFUSED,	/* by lib/proc_file.h's rule: *why */
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
/* Fills o for a living process pid: 0, or -errno (-ESRCH: gone). */
int perf_map__owner(uint32_t pid, uint32_t ns_pid, struct perf_map_owner *o);
/*
 * Reads the map o's process left when it exited, within the caps of a live
 * one; *why says which rule refused it (PERF_MAP_EXIT_REFUSED).
 */
enum perf_map_exit perf_map__read_exited(const struct perf_map_owner *o, struct perf_map **out,
					 enum proc_file_refusal *why);
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
