/* SPDX-License-Identifier: MIT */
/*
 * The profile model: what cprof measured, independent of any output format.
 * It is built from the sampler's counts and copies of the symbolizer's
 * answers (profile__add_symbolized); pprof.c, folded.c and summary.c read
 * it. Keeping it format-neutral lets every encoder be tested without BPF.
 *
 * Strings are interned (profile__intern) so equal strings share one pointer
 * and frames/mappings/samples can be deduplicated by pointer comparison.
 * Mappings and frames are referenced by 1-based index (0 = none), which is
 * also the order and ID they get in the pprof tables.
 */
#ifndef CPROF_PROFILE_H
#define CPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resolve/frame_kind.h"

struct profile;
struct symbolizer;

struct profile_meta {
	uint64_t hz;	      /* sampling frequency */
	uint64_t period_ns;   /* 1e9 / hz: the CPU time one sample stands for */
	uint64_t time_ns;     /* wall-clock start of the profile, ns since the epoch */
	uint64_t duration_ns; /* wall-clock length of the profile */
	/*
	 * Whose program is the profile's main binary (pprof's "File:"): none in
	 * a whole-system profile; else main_pid's (the command, or the one -p
	 * PID), or when it has no samples in its own file (or main_pid is 0),
	 * the program with the most.
	 */
	bool whole_system;
	uint32_t main_pid;
};

struct profile_mapping {
	uint64_t start;	      /* runtime start address */
	uint64_t limit;	      /* runtime end address (exclusive) */
	uint64_t offset;      /* file offset of start */
	const char *path;     /* interned; "" for anonymous memory */
	const char *build_id; /* interned lowercase hex GNU build ID; "" if unknown */
	bool kernel;	      /* the kernel image pseudo-mapping */
	bool main_exe;	      /* a program's own file (pprof's first mapping is a program's) */
};

struct profile_frame {
	uint32_t mapping;	 /* 1-based mapping index, 0 = none */
	uint64_t address;	 /* runtime instruction address */
	const char *name;	 /* interned display name, never NULL (a fallback if unknown) */
	const char *system_name; /* interned raw/mangled name; == name when no demangling */
	bool kernel;		 /* kernel-space frame */
	enum frame_kind kind;	 /* what it holds; its name is code's or a stand-in for none */
	bool function_start;	 /* unnamed, named FILE+0xSTART of its function (no symbol) */
	/*
	 * Source file (interned; NULL: none) and line of the address (of the
	 * call for a return address), and enum symbolizer_line: why there is
	 * none. Set when the frames are finished (profile__finish_frames).
	 */
	const char *file;
	uint32_t line;
	uint8_t line_status;
	/*
	 * The functions inlined at the address (profile__inlines), innermost
	 * first; file and line are then the outermost call's, in name's code.
	 */
	uint16_t ninlines;
	uint32_t inline_first;
};

/* An inlined function at a frame's address, and the file and line in its code (interned). */
struct profile_inline {
	const char *name;
	const char *system_name;
	const char *file; /* NULL: unknown */
	uint32_t line;
};

struct profile_labels {
	uint32_t pid;		 /* host PID (thread group ID) */
	uint32_t ns_pid;	 /* PID in the process's own PID namespace; 0 if the same */
	uint32_t tid;		 /* 0 unless per-thread profiles were asked for */
	const char *comm;	 /* interned process name */
	const char *thread_name; /* interned name of the sampled thread */
};

struct profile_sample {
	const uint32_t *frames; /* 1-based frame indices, leaf first */
	uint32_t nframes;
	struct profile_labels labels;
	uint64_t count; /* number of samples */
};

struct profile *profile__new(const struct profile_meta *meta);
void profile__free(struct profile *p);

/* Returns the stable interned copy of s (NULL on allocation failure). */
const char *profile__intern(struct profile *p, const char *s);

/* Add-or-find; return the 1-based index, or 0 on allocation failure. */
uint32_t profile__add_mapping(struct profile *p, const struct profile_mapping *m);
uint32_t profile__add_frame(struct profile *p, const struct profile_frame *f);

/*
 * Replaces the names and kind of frame idx, for names resolved after the
 * frame was added (kernel symbols, named in one batch before the profile is
 * used; function_start: an unnamed one named by its function's start).
 * Samples refer to frames by index and follow. 0, -EINVAL or -ENOMEM.
 */
int profile__set_frame_names(struct profile *p, uint32_t idx, const char *name,
			     const char *system_name, enum frame_kind kind, bool function_start);

/*
 * Gives frame idx the functions inlined at its address (v[0, n), innermost
 * first; its strings interned), once: a frame that has some keeps them.
 * 0, -EINVAL or -ENOMEM.
 */
int profile__set_frame_inlines(struct profile *p, uint32_t idx, const struct profile_inline *v,
			       uint16_t n);
/* f's inlined functions, f->ninlines of them; NULL when none. */
const struct profile_inline *profile__inlines(const struct profile *p,
					      const struct profile_frame *f);

/*
 * Copies the frames a symbolizer answered (ids of symbolizer__user_frames,
 * __kernel_frames, __placeholder) into p, with their mappings, and writes
 * p's frame indices to out (which may be ids). Each distinct symbolizer frame
 * is copied once: p keeps the index it became, so a sample costs one array
 * lookup per frame. p takes its frames from one symbolizer. 0, -EINVAL (an
 * id s does not know) or -ENOMEM.
 */
int profile__add_symbolized(struct profile *p, const struct symbolizer *s, const uint32_t *ids,
			    uint32_t n, uint32_t *out);
/*
 * The end of p's frames: s names the kernel frames it answered before their
 * names were read (symbolizer__finish; last: no profile follows), and p takes
 * the names and the source lines; frames added afterwards are named by the next call. What
 * symbolizer__finish returned, or -ENOMEM.
 */
int profile__finish_frames(struct profile *p, struct symbolizer *s, bool last);

/* Adds count to the sample with the same stack and labels, or creates it. */
int profile__add_sample(struct profile *p, const uint32_t *frames, uint32_t nframes,
			const struct profile_labels *labels, uint64_t count);

/* Free-text notes for the pprof `comment` field (e.g. lost-sample counts). */
int profile__add_comment(struct profile *p, const char *text);

const struct profile_meta *profile__meta(const struct profile *p);
void profile__set_duration(struct profile *p, uint64_t duration_ns);
void profile__set_time(struct profile *p, uint64_t time_ns);
void profile__set_main_pid(struct profile *p, uint32_t pid);
size_t profile__mapping_count(const struct profile *p);
const struct profile_mapping *profile__mapping(const struct profile *p, uint32_t idx);
size_t profile__frame_count(const struct profile *p);
const struct profile_frame *profile__frame(const struct profile *p, uint32_t idx);
size_t profile__sample_count(const struct profile *p);
const struct profile_sample *profile__sample(const struct profile *p, size_t i);
size_t profile__comment_count(const struct profile *p);
const char *profile__comment(const struct profile *p, size_t i);
uint64_t profile__total_count(const struct profile *p);

/*
 * One profile per process (labels.pid), in order of first appearance, for
 * servers that keep a series per process. Each part has p's meta (its
 * process's program the main binary) and comments and only the frames and
 * mappings its samples use, renumbered 1..N. The caller frees each part
 * and the array.
 */
int profile__split_by_pid(const struct profile *p, struct profile ***parts, size_t *nparts);

#endif
