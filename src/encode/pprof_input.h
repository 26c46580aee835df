/* SPDX-License-Identifier: MIT */
/*
 * pprof profiles read back, to draw them (cprof -i): a
 * perftools.profiles.Profile message (github.com/google/pprof,
 * proto/profile.proto), gzipped or not, as cprof, go tool pprof, Go's
 * runtime/pprof, Parca, Pyroscope and perf_to_profile write it. The bytes are
 * outside input: every length, index and id is checked before it is used,
 * and a malformed profile is refused with one line that says what is wrong
 * and at which byte, never drawn in part. Fuzzed: tests/fuzz/fuzz_pprof_input.c.
 */
#ifndef CPROF_PPROF_INPUT_H
#define CPROF_PPROF_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct flame;

/* A sample deeper than this (inlined frames counted) is skipped, as a folded line is. */
#define PPROF_INPUT_MAX_DEPTH 4096
/*
 * The most a gzipped profile may unpack to: 128 times its own size (real
 * profiles unpack to 2 to 10 times theirs; deflate reaches 1,032), but at
 * least 64 MiB and at most 1 GiB.
 */
#define PPROF_INPUT_UNPACK_RATIO 128
#define PPROF_INPUT_UNPACK_MIN	 ((size_t)64 << 20)
#define PPROF_INPUT_UNPACK_MAX	 ((size_t)1 << 30)
/* More sample types than this is no profile any tool writes (Go's have 2 to 4). */
#define PPROF_INPUT_MAX_TYPES 1024

struct pprof_input_opts {
	/* The sample type to draw; NULL: "samples", else the profile's default, else the last. */
	const char *sample_type;
	/* The unpacking limit; 0: PPROF_INPUT_UNPACK_* (tests set less). */
	size_t max_unpacked;
};

struct pprof_input_info {
	uint64_t stacks;   /* samples drawn */
	uint64_t negative; /* samples skipped: a negative value (a diff profile) */
	uint64_t too_deep; /* samples skipped: deeper than PPROF_INPUT_MAX_DEPTH */
	uint64_t overflow; /* samples skipped: the total would pass 2^63 */
	bool counts;	   /* the type drawn is "samples" */
	char type[64];	   /* the type drawn, "type/unit" (cut to fit) */
	uint64_t time_ns, duration_ns;
	uint64_t hz;	 /* from the period, when it is in nanoseconds; else 0 */
	bool lost_known; /* cprof's own loss accounting comment was there */
	uint64_t lost;
	char why[256]; /* the reason of an error but -ENOMEM, one line */
};

/* Gzip's magic: what a .pb.gz file starts with. */
bool pprof_input__is_gzip(const void *data, size_t len);

/*
 * Draws the samples of the profile data[0..len) into f, root first: the
 * process (comm label) and thread (tid label) when the profile has them, as
 * cprof's folded stacks do, then the frames, inlined ones expanded. 0;
 * -EBADMSG (not a profile, or a malformed one), -EFBIG (it unpacks to more
 * than the limit), -ENOENT (no such sample type), all with info->why set;
 * -ENOMEM. On an error f may hold part of the samples: throw it away.
 */
int pprof_input__parse(const void *data, size_t len, const struct pprof_input_opts *o,
		       struct flame *f, struct pprof_input_info *info);

#endif
