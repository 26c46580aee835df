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

#include "encode/svg.h"

struct debuginfod_opts;
struct labels;
struct upload_opts;

/* The profile was collected and saved, but the server did not take it all. */
#define EXIT_UPLOAD_FAILED 3

enum output_format {
	FORMAT_PPROF,
	FORMAT_FOLDED,
	FORMAT_SVG, /* a flame graph */
};

struct session_opts {
	const uint32_t *pids; /* -p: profile these processes */
	size_t npids;
	char *const *command; /* -- COMMAND: start and profile it; NULL if none */
	unsigned int hz;
	uint64_t duration_ms; /* 0: until the command exits (with a command only) */
	const char *output;   /* "-" = stdout */
	enum output_format format;
	struct svg_style svg; /* FORMAT_SVG: title, minimum width, inverted */
	bool per_thread;
	bool include_idle;
	bool follow_children;
	bool frame_pointers;  /* user stacks by frame pointers only, not with the CFI tables */
	bool stack_copies;    /* every user stack walked in user space from a copy (perf's way) */
	uint32_t max_stack;   /* user frames a stack keeps (--max-stack); 0: 127 */
	bool jvm_perf_map;    /* ask running JVMs for their perf map at a profile's end */
	uint32_t map_entries; /* stack and count map entries per set */
	int top_n;
	const char *debug_dir; /* separate debug files; NULL: the default, "": none */
	bool no_lines;	       /* no source lines for pprof's frames (--no-lines) */
	bool inlines;	       /* inlined functions as frames of their own (--inlines) */
	const char *cache_dir; /* unwind tables kept between runs; NULL: the default, "": none */
	/* Debug files from debuginfod servers (DEBUGINFOD_URLS); NULL: none. */
	const struct debuginfod_opts *debuginfod;
	uint64_t debuginfod_wait_ms; /* how long the end of the run waits for them */
	/* --server: */
	const struct upload_opts *upload; /* NULL: write a file only */
	const struct labels *labels;	  /* --label pairs, validated */
	uint64_t interval_ms;		  /* continuous mode: one upload per interval; 0: once */
	const char *spool_dir;		  /* continuous mode: failed uploads wait there */
	uint64_t spool_max_bytes;
	bool output_given; /* -o given: the file is written even when the upload works */
};

/* Runs the session; returns the process exit code (see --help). */
int session__run(const struct session_opts *o);

#endif
