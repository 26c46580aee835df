/* SPDX-License-Identifier: MIT */
/*
 * One profiling run from start to delivered file: the data flow
 * sample (BPF) -> drain -> resolve -> profile -> encode -> output,
 * plus the command's lifecycle and signals. main.c only parses options.
 */
#ifndef CPROF_SESSION_H
#define CPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum output_format {
	FORMAT_PPROF,
	FORMAT_FOLDED,
};

struct session_opts {
	const uint32_t *pids; /* -p: profile these processes */
	size_t npids;
	char *const *command; /* -- COMMAND: start and profile it; NULL if none */
	unsigned int hz;
	uint64_t duration_ms; /* 0: until the command exits (with a command only) */
	const char *output;   /* "-" = stdout */
	enum output_format format;
	bool per_thread;
	bool include_idle;
	bool follow_children;
	uint32_t map_entries; /* stack and count map entries per set */
	int top_n;
};

/* Runs the session; returns the process exit code (see --help). */
int session__run(const struct session_opts *o);

#endif
