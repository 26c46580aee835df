// SPDX-License-Identifier: MIT
/* The summary's words: every loss under one reason, counts that agree with their nouns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "lib/kernel_caps.h"
#include "summary.h"
#include "test.h"
#include "unwind/stack_walk.h"

/* What summary__print_losses says of info, for total samples. */
static char *losses(const struct summary_info *in, uint64_t total)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	summary__print_losses(f, total, in);
	fclose(f);
	return text;
}

/*
 * Spilled stacks and notifications share one perf buffer. A full buffer is
 * counted by the BPF side under each record's own reason (a collision kept
 * as a placeholder, a lost notification); the buffer's own count of lost
 * records is the same losses again and must not become a second reason.
 */
TEST(summary_each_loss_has_one_reason)
{
	struct summary_info in = {.hz = 10000, .ncpus = 2, .duration_ns = 2000000000ull};
	char *text;

	in.stats[CPROF_STAT_USER_COLLISION] = 49;
	in.stats[CPROF_STAT_KERN_COLLISION] = 213;
	in.lost_notifications = 262;
	text = losses(&in, 1000);
	CHECK(strstr(text, "cprof: 262 stacks lost but their samples kept as placeholders: "
			   "stack-map collisions user 49 kernel 213, errors 0\n"));
	CHECK(!strstr(text, "notification"));
	free(text);
	in.stats[CPROF_STAT_NOTIFY_LOST] = 1;
	text = losses(&in, 1000);
	CHECK(strstr(text,
		     "cprof: 1 new-process notification lost (that process was read late)\n"));
	free(text);
}

TEST(summary_counts_agree_with_nouns)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text;

	in.sym[SYM_STAT_PROCESSES_GONE] = 1;
	in.stats[CPROF_STAT_COUNTS_FULL] = 1;
	in.stats[CPROF_STAT_IDLE] = 1;
	in.stats[CPROF_STAT_BEFORE_EXEC] = 1;
	text = losses(&in, 1);
	CHECK(strstr(text, "cprof: LOST 1 sample (50.0%)"));
	CHECK(strstr(text, "cprof: 1 process exited before its memory map could be read\n"));
	CHECK(strstr(text, "cprof: 1 idle sample not counted"));
	CHECK(strstr(text, "cprof: 1 sample of the command before its exec not kept"));
	free(text);
	in.sym[SYM_STAT_PROCESSES_GONE] = 2;
	text = losses(&in, 1);
	CHECK(strstr(text, "cprof: 2 processes exited before their memory map could be read"));
	free(text);
}

/* With -p or a command, the idle time of other CPUs is not the target's business. */
TEST(summary_idle_only_for_the_whole_system)
{
	struct summary_info in = {.hz = 99, .ncpus = 2, .targeted = true};
	char *text;

	in.stats[CPROF_STAT_IDLE] = 600;
	text = losses(&in, 10);
	CHECK(!strstr(text, "idle"));
	free(text);
	in.targeted = false;
	text = losses(&in, 10);
	CHECK(strstr(text, "cprof: 600 idle samples not counted (--include-idle keeps them)\n"));
	free(text);
}

/* Unnamed frames: the share of samples first, then what the distinct-frame counts are. */
TEST(summary_unnamed_share_of_samples)
{
	struct summary_info in = {.hz = 99, .ncpus = 2};
	char *text;

	in.unnamed_samples = 25;
	in.sym[SYM_STAT_UNKNOWN_USER] = 4937;
	in.sym[SYM_STAT_USER_FRAMES] = 4947;
	in.sym[SYM_STAT_KERNEL_FRAMES] = 10;
	text = losses(&in, 100);
	CHECK(strstr(text, "cprof: 25 of 100 samples (25.0%) have a user frame with no name at "
			   "all; distinct frames without one, shown as module+offset: user 4937 "
			   "of 4947, kernel 0 of 10\n"));
	CHECK(!strstr(text, "function's start"));
	free(text);
}

/*
 * Issue 38, item 8: frames of stripped files named by their function's
 * start are named; the share with no name at all is said apart from them
 * ("99.7% of samples have a user frame no symbol names" alarmed for cc1).
 */
TEST(summary_function_starts_said_apart)
{
	struct summary_info in = {.hz = 99, .ncpus = 2};
	struct profile *p = profile__new(NULL);
	struct profile_frame start = {.address = 0x1234,
				      .name = "cc1+0x1200",
				      .kind = FRAME_UNNAMED,
				      .function_start = true},
			     none = {.address = 0x5678,
				     .name = "[anon]+0x5678",
				     .kind = FRAME_UNNAMED},
			     named = {.address = 0x9abc, .name = "main"};
	struct profile_labels cc1 = {.pid = 1, .comm = "cc1"};
	uint32_t f[3];
	char *text;

	CHECK(p);
	f[0] = profile__add_frame(p, &start);
	f[1] = profile__add_frame(p, &none);
	f[2] = profile__add_frame(p, &named);
	CHECK(f[0] && f[1] && f[2]);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){f[0], f[2]}, 2, &cc1, 997), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){f[1], f[0]}, 2, &cc1, 2), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){f[2]}, 1, &cc1, 1), ==, 0);
	in.unnamed_samples = summary__unnamed_samples(p, &in.function_start_samples);
	CHECK_U64(in.unnamed_samples, ==, 2);
	CHECK_U64(in.function_start_samples, ==, 999);
	in.sym[SYM_STAT_UNKNOWN_USER] = 801;
	in.sym[SYM_STAT_FUNCTION_STARTS] = 800;
	in.sym[SYM_STAT_USER_FRAMES] = 900;
	text = losses(&in, 1000);
	CHECK(strstr(text, "cprof: 2 of 1000 samples (0.2%) have a user frame with no name at all; "
			   "distinct frames without one, shown as module+offset: user 1 of 900, "
			   "kernel 0 of 0\n"));
	CHECK(strstr(text, "cprof: 999 of 1000 samples (99.9%) have a user frame named by its "
			   "function's start, not by a symbol (a stripped file; the start from "
			   ".eh_frame), shown as FILE+0xSTART: 800 distinct frames\n"));
	free(text);
	/* Named by a symbol later (a debug file came): no longer a function start. */
	CHECK_INT(profile__set_frame_names(p, f[0], "cc1_main", NULL, FRAME_CODE, false), ==, 0);
	CHECK_U64(summary__unnamed_samples(p, &in.function_start_samples), ==, 2);
	CHECK_U64(in.function_start_samples, ==, 0);
	profile__free(p);
}

/* The kernel lowered its limit below -F during the run: it throttled, and the summary says so. */
TEST(summary_says_when_the_kernel_throttled)
{
	struct summary_info in = {.hz = 999, .ncpus = 2, .duration_ns = 1000000000ull};
	char *text;

	in.kernel_max_rate = 100000;
	text = losses(&in, 10);
	CHECK(!strstr(text, "throttled"));
	free(text);
	in.kernel_max_rate = 500;
	in.stats[CPROF_STAT_TICKS] = 1000;
	text = losses(&in, 10);
	CHECK(strstr(text,
		     "cprof: the kernel throttled sampling: it lowered "
		     "kernel.perf_event_max_sample_rate to 500 during the run, below the 999 "
		     "Hz asked, so fewer samples were taken (1000 ticks in 1.00 s on 2 CPUs)\n"));
	free(text);
}

/* Addresses in no known mapping are counted per sample and named by the processes that had them. */
TEST(summary_unmapped_samples_by_process)
{
	struct profile *p = profile__new(NULL);
	struct profile_frame unmapped = {.address = 0x1234,
					 .name = "[unknown]",
					 .kind = FRAME_UNNAMED},
			     lost = {.name = "[user stack lost: error]", .kind = FRAME_LOST},
			     named = {.address = 0x5678, .name = "main"};
	struct profile_labels sh = {.pid = 1, .comm = "sh"}, mk = {.pid = 2, .comm = "make"};
	struct summary_info in = {.hz = 99, .ncpus = 1};
	uint32_t f[3];
	char who[64], *text;

	CHECK(p);
	unmapped.system_name = unmapped.name;
	lost.system_name = lost.name;
	named.system_name = named.name;
	f[0] = profile__add_frame(p, &unmapped);
	f[1] = profile__add_frame(p, &lost);
	f[2] = profile__add_frame(p, &named);
	CHECK(f[0] && f[1] && f[2]);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){f[2], f[0]}, 2, &sh, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){f[0], f[0]}, 2, &mk, 12), ==, 0);
	CHECK_INT(profile__add_sample(p, &f[1], 1, &mk, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, &f[2], 1, &sh, 7), ==, 0);
	in.unmapped_samples =
		summary__unmapped_samples(p, in.unmapped_who, sizeof(in.unmapped_who));
	CHECK_U64(in.unmapped_samples, ==, 15);
	CHECK_STR(in.unmapped_who, "make 12, sh 3");
	text = losses(&in, 27);
	CHECK(strstr(text, "cprof: 15 samples have a user address in no mapping known to their "
			   "process, shown as [unknown]: make 12, sh 3\n"));
	free(text);
	/* Too little room: whole entries only. */
	CHECK_U64(summary__unmapped_samples(p, who, 10), ==, 15);
	CHECK_STR(who, "make 12");
	profile__free(p);
}

/*
 * Issue 38, item 10: a process whose name shows nothing (empty, blanks, only
 * control characters) is listed by its PID, not as a blank ("cc1 469,  135").
 */
TEST(summary_blank_process_names_by_pid)
{
	struct profile *p = profile__new(NULL);
	struct profile_frame unmapped = {
		.address = 0x1234, .name = "[unknown]", .kind = FRAME_UNNAMED};
	struct profile_labels cc1 = {.pid = 7, .comm = "cc1"}, empty = {.pid = 42, .comm = ""},
			      blank = {.pid = 43, .comm = "  "}, ctl = {.pid = 44, .comm = ""},
			      none = {.pid = 45};
	char who[160];
	uint32_t f;

	CHECK(p);
	unmapped.system_name = unmapped.name;
	f = profile__add_frame(p, &unmapped);
	CHECK(f);
	CHECK_INT(profile__add_sample(p, &f, 1, &cc1, 469), ==, 0);
	CHECK_INT(profile__add_sample(p, &f, 1, &empty, 135), ==, 0);
	CHECK_INT(profile__add_sample(p, &f, 1, &empty, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, &f, 1, &blank, 12), ==, 0);
	CHECK_INT(profile__add_sample(p, &f, 1, &ctl, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, &f, 1, &none, 2), ==, 0);
	CHECK_U64(summary__unmapped_samples(p, who, sizeof(who)), ==, 624);
	CHECK_STR(who, "cc1 469, [pid 42] 136, [pid 43] 12, [pid 44] 5, [pid 45] 2");
	profile__free(p);
}

/* Records of processes the kernel could not write are a loss of their own, with its consequence. */
TEST(summary_lost_process_records)
{
	struct summary_info in = {.hz = 99, .ncpus = 1, .followed = true};
	char *text;

	text = losses(&in, 10);
	CHECK(!strstr(text, "records"));
	free(text);
	in.records_lost = 1;
	in.records_broken = 2;
	text = losses(&in, 10);
	CHECK(strstr(text,
		     "cprof: the kernel lost 1 record of forks, execs and mmaps (its ring was "
		     "full): processes that began or mapped code then may show [unknown] "
		     "frames\n"));
	CHECK(strstr(text, "cprof: 2 malformed process records skipped\n"));
	free(text);
}

/* Mapped files that could not be opened: counted, with whose. */
TEST(summary_unopened_files_by_process)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text;

	in.sym[SYM_STAT_FILES_UNOPENED] = 2;
	snprintf(in.unopened_who, sizeof(in.unopened_who), "make 2");
	text = losses(&in, 10);
	CHECK(strstr(text, "cprof: 2 mapped files could not be opened (deleted and gone, or "
			   "replaced by another file): their frames are shown as file@offset; in "
			   "make 2\n"));
	free(text);
}

/* Tables and symbols the store's cap kept from being kept: counted, and only then. */
TEST(summary_store_cap)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text;

	text = losses(&in, 10);
	CHECK(!strstr(text, "size cap"));
	free(text);
	in.store_capped = 1;
	text = losses(&in, 10);
	CHECK(strstr(text, "cprof: 1 unwind table or symbol set not kept for later runs: past the "
			   "cache directory's size cap (later runs build them again)\n"));
	free(text);
}

enum { LZMA = 1, PY, JIT, LZMA2, LIBC, UNMAPPED, NO_TABLE, NO_CFI, LOST, NFRAMES };

/* A profile with the frames above (1-based, in order) and no samples. */
static struct profile *places_profile(void)
{
	static const struct profile_mapping maps[] = {
		{.start = 0x1000,
		 .limit = 0x2000,
		 .path = "/usr/lib/x86_64-linux-gnu/liblzma.so.5"},
		{.start = 0x3000, .limit = 0x4000, .path = "/usr/bin/python3.11"},
		{.start = 0x5000, .limit = 0x6000, .path = ""},
		{.start = 0x7000, .limit = 0x8000, .path = "/lib/x86_64-linux-gnu/liblzma.so.5"},
		{.start = 0x9000, .limit = 0xa000, .path = "/usr/lib/libc.so.6"},
	};
	static const struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x1100, .name = "lzma_code"},
		{.mapping = 2, .address = 0x3100, .name = "_PyEval_EvalFrameDefault"},
		{.mapping = 3, .address = 0x5100, .name = "[anon]+0x5100", .kind = FRAME_UNNAMED},
		{.mapping = 4,
		 .address = 0x7100,
		 .name = "liblzma.so.5+0x100",
		 .kind = FRAME_UNNAMED},
		{.mapping = 5, .address = 0x9100, .name = "__libc_start_call_main"},
		{.address = 0xdead, .name = "[unknown]", .kind = FRAME_UNNAMED},
		{.name = "[truncated: no unwind table yet]", .kind = FRAME_TRUNCATED},
		{.name = "[truncated: no CFI for the code]", .kind = FRAME_TRUNCATED},
		{.name = "[user stack lost: error]", .kind = FRAME_LOST},
	};
	struct profile *p = profile__new(NULL);
	struct profile_frame f;
	size_t i;

	CHECK(p);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		CHECK_INT(profile__add_mapping(p, &maps[i]), ==, i + 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		f = frames[i];
		f.system_name = f.name;
		CHECK_INT(profile__add_frame(p, &f), ==, i + 1);
	}
	CHECK_INT(NFRAMES, ==, i + 1);
	return p;
}

/*
 * Walks that stopped before a root end in a "[truncated: REASON]" marker;
 * the frame before it is where the walk stopped, named by its file's base
 * name (one entry for two paths of one name), "[anon]" in anonymous memory,
 * or the frame's own name in no mapping. Only a marker in last place counts.
 */
TEST(summary_truncated_samples_by_file)
{
	struct profile_labels xz = {.pid = 1, .comm = "xz"}, py = {.pid = 2, .comm = "python3"};
	struct profile *p = places_profile();
	char who[160];
	uint64_t n;

	/* liblzma.so.5 under two paths: 100 + 20. */
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LIBC, LZMA, NO_CFI}, 3, &xz, 100), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LZMA2, NO_TABLE}, 2, &xz, 20), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){PY, NO_TABLE}, 2, &py, 7), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){UNMAPPED, NO_CFI}, 2, &py, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){PY, JIT, NO_CFI}, 3, &py, 2), ==, 0);
	/* Not truncated: a whole walk, a lost stack, a marker not at the root end. */
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LZMA, LIBC}, 2, &xz, 1000), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LOST}, 1, &py, 50), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){NO_CFI, PY}, 2, &py, 9), ==, 0);

	CHECK_U64(summary__truncated_samples(p, who, sizeof(who)), ==, 134);
	CHECK_STR(who, "liblzma.so.5 120, python3.11 7, [unknown] 5");
	/* The marker is no unnamed code: only the samples with liblzma's unnamed frame, the
	 * unmapped address, [anon] and the lost stack's placeholder. */
	CHECK_U64(summary__unnamed_samples(p, &n), ==, 20 + 5 + 2 + 50);
	CHECK_U64(n, ==, 0);
	/* Too little room: whole entries only. */
	CHECK_U64(summary__truncated_samples(p, who, 20), ==, 134);
	CHECK_STR(who, "liblzma.so.5 120");
	profile__free(p);

	/* Ties list by name; anonymous memory is "[anon]". */
	p = places_profile();
	CHECK_INT(profile__add_sample(p, (uint32_t[]){PY, NO_CFI}, 2, &py, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){JIT, NO_CFI}, 2, &py, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LIBC, NO_TABLE}, 2, &py, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, (uint32_t[]){LZMA, NO_TABLE}, 2, &py, 1), ==, 0);
	CHECK_U64(summary__truncated_samples(p, who, sizeof(who)), ==, 10);
	CHECK_STR(who, "[anon] 3, libc.so.6 3, python3.11 3");
	profile__free(p);

	p = profile__new(NULL);
	CHECK(p);
	CHECK_U64(summary__truncated_samples(p, who, sizeof(who)), ==, 0);
	CHECK_STR(who, "");
	profile__free(p);
}

/* A typical run with the unwinder: shares of the walked samples, reasons most first. */
TEST(summary_user_stacks_walked)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text;

	in.walked = 12345;
	in.walk_stops[CPROF_STOP_NONE] = 12086;
	in.walk_stops[CPROF_STOP_NO_CFI] = 37;
	in.walk_stops[CPROF_STOP_NO_TABLE] = 222;
	snprintf(in.truncated_who, sizeof(in.truncated_who), "liblzma.so.5 120, python3.11 7");
	in.stats[CPROF_STAT_SAMPLES] = 12555;
	in.fp_user = 210;
	text = losses(&in, 12555);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks walked with the CFI tables: 12086 of 12345 samples "
			"(97.9%) reached a thread root; truncated: 222 (1.8%) no unwind table yet, "
			"37 (0.3%) no CFI for the code; stopped most in liblzma.so.5 120, "
			"python3.11 7\n"
			"cprof: 210 samples taken in the kernel have their user stacks by frame "
			"pointers, not walked with the tables: their callers may be missing\n");
	free(text);

	/* Never 100% or 0% unless it is; equal counts in the enum's order. */
	memset(&in, 0, sizeof(in));
	in.walked = 10002;
	in.walk_stops[CPROF_STOP_NONE] = 10000;
	in.walk_stops[CPROF_STOP_DEPTH] = 1;
	in.walk_stops[CPROF_STOP_READ] = 1;
	in.fp_user = 1;
	in.stats[CPROF_STAT_SAMPLES] = 10003;
	text = losses(&in, 10003);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks walked with the CFI tables: 10000 of 10002 samples "
			"(>99.9%) reached a thread root; truncated: 1 (<0.1%) stack memory "
			"unreadable, 1 (<0.1%) deeper than 127 frames\n"
			"cprof: 1 sample taken in the kernel has its user stack by frame pointers, "
			"not walked with the tables: their callers may be missing\n");
	free(text);

	memset(&in, 0, sizeof(in));
	in.walked = 1;
	in.walk_stops[CPROF_STOP_NONE] = 1;
	in.stats[CPROF_STAT_SAMPLES] = 1;
	text = losses(&in, 1);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks walked with the CFI tables: 1 of 1 sample (100.0%) "
			"reached a thread root\n");
	free(text);

	/* Nothing walked (kernel threads only): no share of nothing. */
	memset(&in, 0, sizeof(in));
	in.stats[CPROF_STAT_SAMPLES] = 5;
	text = losses(&in, 5);
	CHECK_STR(text, "cprof: lost samples: 0\n");
	free(text);
}

/* Stacks walked from copies, not in the kernel: how many and why, each cause that occurred. */
TEST(summary_user_stacks_copied_by_cause)
{
	struct summary_info in = {.hz = 999, .ncpus = 2};
	char *text;

	in.walked = 15000;
	in.walk_stops[CPROF_STOP_NONE] = 15000;
	in.stats[CPROF_STAT_SAMPLES] = 15000;
	in.stats[CPROF_STAT_COPIES] = 2000;
	in.stats[CPROF_STAT_COPY_YOUNG] = 1500;
	in.stats[CPROF_STAT_COPY_NO_TABLE] = 300;
	in.stats[CPROF_STAT_COPY_EARLY] = 200;
	text = losses(&in, 15000);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks walked with the CFI tables: 15000 of 15000 samples "
			"(100.0%) reached a thread root; 2000 of 15000 walked in user space from a "
			"copy of the stack (1500 because the process was new: code it had just "
			"mapped, 300 because its file's table was not built yet, 200 because the "
			"in-kernel walk was not loaded yet)\n");
	free(text);
	in.stats[CPROF_STAT_COPY_YOUNG] = in.stats[CPROF_STAT_COPY_NO_TABLE] = 0;
	in.stats[CPROF_STAT_COPY_EARLY] = 0;
	in.stats[CPROF_STAT_COPY_NEW] = 2000;
	text = losses(&in, 15000);
	CHECK(strstr(text, "; 2000 of 15000 walked in user space from a copy of the stack (2000 "
			   "because cprof had not followed the process yet)\n"));
	free(text);
}

/* Without the unwinder, the report says so, why, and what it costs. */
TEST(summary_user_stacks_by_frame_pointers)
{
	struct summary_info in = {.hz = 99, .ncpus = 1, .unwind_status = -ENOENT};
	char *text;

	in.fp_user = 3; /* not said: every user stack is by frame pointers */
	in.stats[CPROF_STAT_SAMPLES] = 5;
	text = losses(&in, 5);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks by frame pointers only (--frame-pointers): callers in "
			"code built without frame pointers may be missing or wrong\n");
	free(text);
	in.unwind_status = -EINVAL; /* the verifier refused the walk */
	text = losses(&in, 5);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks by frame pointers only: the unwinder could not be "
			"loaded (Invalid argument; run with -v for the verifier log): "
			"callers in code built without frame pointers may be missing or wrong\n");
	free(text);
	/* --max-stack does not reach the kernel's frame-pointer stacks: said. */
	in.max_stack = 1024;
	text = losses(&in, 5);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: user stacks by frame pointers only: the unwinder could not be "
			"loaded (Invalid argument; run with -v for the verifier log): "
			"callers in code built without frame pointers may be missing or wrong; "
			"the kernel reads those at most 127 frames deep, not --max-stack's 1024\n");
	free(text);
	in.unwind_status = 0;
	in.walked = 2;
	in.walk_stops[CPROF_STOP_NONE] = 2;
	in.fp_user = 1;
	in.max_stack = 200;
	text = losses(&in, 5);
	CHECK_STR(text,
		  "cprof: lost samples: 0\n"
		  "cprof: user stacks walked with the CFI tables: 2 of 2 samples (100.0%) "
		  "reached a thread root\n"
		  "cprof: 1 sample taken in the kernel has its user stack by frame pointers, "
		  "not walked with the tables: their callers may be missing; the kernel reads "
		  "those at most 127 frames deep, not --max-stack's 200\n");
	free(text);
}

/* The comment of profile p that begins with prefix, or NULL. */
static const char *comment_of(const struct profile *p, const char *prefix)
{
	size_t i;

	for (i = 0; i < profile__comment_count(p); i++)
		if (!strncmp(profile__comment(p, i), prefix, strlen(prefix)))
			return profile__comment(p, i);
	return NULL;
}

/* The profile carries the same facts, in stable snake_case tokens. */
/* Every stack walked in user space from perf samples' copies: said, with why. */
TEST(summary_user_stacks_from_stack_copies)
{
	struct summary_info in = {.hz = 99, .ncpus = 1, .unwind_status = -ENOENT};
	struct profile *p;
	char *text;

	in.copy_walks = true;
	in.walked = 100;
	in.walk_stops[CPROF_STOP_NONE] = 99;
	in.walk_stops[CPROF_STOP_COPY_END] = 1;
	in.stats[CPROF_STAT_COPIES] = 100; /* every sample: not said again */
	in.stats[CPROF_STAT_SAMPLES] = 100;
	text = losses(&in, 100);
	CHECK_STR(text, "cprof: lost samples: 0\n"
			"cprof: every user stack walked in user space from a copy of the stack "
			"(--stack-copies)\n"
			"cprof: user stacks walked with the CFI tables: 99 of 100 samples (99.0%) "
			"reached a thread root; truncated: 1 (1.0%) beyond the stack copy\n");
	free(text);
	in.unwind_status = -EPERM; /* the unwinder's object could not be loaded */
	text = losses(&in, 100);
	CHECK(strstr(text, "(the in-kernel walk cannot run here: Operation not permitted)\n"));
	free(text);
	p = profile__new(NULL);
	CHECK(p);
	CHECK_INT(summary__add_comments(p, &in), ==, 0);
	CHECK_STR(comment_of(p, "cprof: user stacks:"),
		  "cprof: user stacks: cfi_in_user_space (stack copies: Operation not permitted); "
		  "walked 100: root 99, copy_end 1; samples ending in a truncation marker 0; not "
		  "walked, by frame pointers (taken in the kernel) 0");
	profile__free(p);
}

TEST(summary_user_stacks_comment)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	struct profile *p = profile__new(NULL);

	CHECK(p);
	in.walked = 12345;
	in.walk_stops[CPROF_STOP_NONE] = 12086;
	in.walk_stops[CPROF_STOP_NO_CFI] = 37;
	in.walk_stops[CPROF_STOP_NO_TABLE] = 222;
	in.truncated_samples = 259;
	snprintf(in.truncated_who, sizeof(in.truncated_who), "liblzma.so.5 120, python3.11 7");
	in.fp_user = 210;
	CHECK_INT(summary__add_comments(p, &in), ==, 0);
	CHECK_STR(comment_of(p, "cprof: user stacks:"),
		  "cprof: user stacks: cfi; walked 12345: root 12086, no_table 222, no_cfi 37; "
		  "samples ending in a truncation marker 259 (stopped most in: liblzma.so.5 120, "
		  "python3.11 7); not walked, by frame pointers (taken in the kernel) 210");
	profile__free(p);

	memset(&in, 0, sizeof(in));
	p = profile__new(NULL);
	CHECK(p);
	CHECK_INT(summary__add_comments(p, &in), ==, 0);
	CHECK_STR(comment_of(p, "cprof: user stacks:"),
		  "cprof: user stacks: cfi; walked 0: root 0; samples ending in a truncation "
		  "marker 0; not walked, by frame pointers (taken in the kernel) 0");
	profile__free(p);

	in.unwind_status = -ENOENT;
	p = profile__new(NULL);
	CHECK(p);
	CHECK_INT(summary__add_comments(p, &in), ==, 0);
	CHECK_STR(comment_of(p, "cprof: user stacks:"),
		  "cprof: user stacks: frame_pointers (asked for)");
	profile__free(p);

	in.unwind_status = -EINVAL; /* the verifier refused the walk */
	p = profile__new(NULL);
	CHECK(p);
	CHECK_INT(summary__add_comments(p, &in), ==, 0);
	CHECK_STR(comment_of(p, "cprof: user stacks:"),
		  "cprof: user stacks: frame_pointers (the unwinder could not be loaded: "
		  "Invalid argument)");
	profile__free(p);
}

/* Every reason a walk stops has words and a distinct snake_case token (none left NULL). */
TEST(summary_every_stop_reason_has_words_and_token)
{
	const char *tok, *other;
	uint32_t r, q;

	for (r = 0; r < CPROF_STOP_MAX; r++) {
		tok = stack_walk__stop_token(r);
		CHECK(stack_walk__stop_name(r) && *stack_walk__stop_name(r));
		CHECK(tok && *tok && strspn(tok, "abcdefghijklmnopqrstuvwxyz_") == strlen(tok));
		for (q = 0; q < r; q++) {
			other = stack_walk__stop_token(q);
			CHECK(!tok || !other || strcmp(tok, other));
		}
	}
	CHECK_STR(stack_walk__stop_token(CPROF_STOP_NO_TABLE), "no_table");
	CHECK_STR(stack_walk__stop_token(CPROF_STOP_MAX), "unknown");
}

/* Runs the kernel skipped are said, never counted as taken; a fork hook's as children followed
 * late. */
TEST(summary_says_what_the_kernel_skipped)
{
	struct summary_info in = {.hz = 999, .ncpus = 2};
	char *text;

	text = losses(&in, 100);
	CHECK(!strstr(text, "skipped"));
	free(text);
	in.skipped_samples = 1;
	in.skipped_hooks = 3;
	in.forks_late = 1;
	text = losses(&in, 100);
	CHECK(strstr(text, "cprof: lost samples: 0\n"));
	CHECK(strstr(text, "cprof: the kernel skipped the sampling program 1 time (a BPF program "
			   "or a bpf() call was under way on that CPU): that sample was never "
			   "taken\n"));
	CHECK(strstr(text, "cprof: the kernel skipped 3 runs of the fork, exec and exit hooks (a "
			   "BPF program or a bpf() call was under way on that CPU); 1 child was "
			   "followed from the kernel's records instead, a moment late\n"));
	free(text);
}

/*
 * The top functions: self from leaves, total once per sample however often
 * a function recurs in its stack, the same name at two addresses one function.
 */
TEST(summary_top_functions_count_recursion_once)
{
	struct profile_meta meta = {.hz = 100, .period_ns = 10000000};
	struct profile_mapping app = {
		.start = 0x400000, .limit = 0x500000, .path = "/nonexistent/app", .build_id = ""};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x401000, .name = "main"},
		{.mapping = 1, .address = 0x401100, .name = "sort"},
		{.mapping = 1, .address = 0x401180, .name = "sort"},
		{.mapping = 1, .address = 0x401200, .name = "cmp"},
	};
	/* cmp <- sort <- sort <- sort <- main, 3 samples; sort <- main, 1 (leaf first). */
	static const uint32_t deep[] = {4, 2, 3, 2, 1}, shallow[] = {3, 1};
	struct profile_labels l = {.pid = 1, .comm = "app", .thread_name = "app"};
	struct summary_info in = {.hz = 100, .ncpus = 1, .duration_ns = 1000000000ull};
	struct profile *p = profile__new(&meta);
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &app), ==, 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, deep, 5, &l, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, shallow, 2, &l, 1), ==, 0);
	in.stats[CPROF_STAT_SAMPLES] = 4;
	f = open_memstream(&text, &len);
	CHECK(f);
	summary__print(f, p, &in, 10);
	fclose(f);
	CHECK(strstr(text, "   75.0%  75.0%        3  cmp (app)\n"));
	CHECK(strstr(text, "   25.0% 100.0%        1  sort (app)\n"));
	CHECK(!strstr(text, "  main"));
	free(text);
	profile__free(p);
}

/* A profile of n samples of hot_a in each of two programs, and what summary__print says of it. */
static char *two_programs(struct summary_info *in, uint64_t n)
{
	struct profile_meta meta = {.hz = 100, .period_ns = 10000000};
	struct profile_mapping one = {
		.start = 0x400000, .limit = 0x500000, .path = "/x/one", .build_id = ""};
	struct profile_mapping two = {
		.start = 0x600000, .limit = 0x700000, .path = "/y/two", .build_id = ""};
	struct profile_frame a1 = {.mapping = 1, .address = 0x401000, .name = "hot_a"};
	struct profile_frame a2 = {.mapping = 2, .address = 0x601000, .name = "hot_a"};
	struct profile_labels l = {.pid = 1, .comm = "app", .thread_name = "app"};
	struct profile *p = profile__new(&meta);
	static const uint32_t first[] = {1}, second[] = {2};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(p);
	CHECK_INT(profile__add_mapping(p, &one), ==, 1);
	CHECK_INT(profile__add_mapping(p, &two), ==, 2);
	CHECK_INT(profile__add_frame(p, &a1), ==, 1);
	CHECK_INT(profile__add_frame(p, &a2), ==, 2);
	CHECK_INT(profile__add_sample(p, first, 1, &l, n), ==, 0);
	CHECK_INT(profile__add_sample(p, second, 1, &l, n), ==, 0);
	f = open_memstream(&text, &len);
	CHECK(f);
	summary__print(f, p, in, 10);
	fclose(f);
	profile__free(p);
	return text;
}

/* The hot_a of two programs are two functions of the top list, each with its file. */
TEST(summary_top_functions_by_program)
{
	struct summary_info in = {.hz = 100, .ncpus = 1, .duration_ns = 1000000000ull};
	char *text;

	in.stats[CPROF_STAT_SAMPLES] = 6;
	text = two_programs(&in, 3);
	CHECK(strstr(text, "   50.0%  50.0%        3  hot_a (one)\n"));
	CHECK(strstr(text, "   50.0%  50.0%        3  hot_a (two)\n"));
	CHECK(!strstr(text, "MISMATCH"));
	free(text);
}

/* A profile the BPF side's counter cannot account for is said to be so, with no top list. */
TEST(summary_mismatch_with_the_bpf_count)
{
	struct summary_info in = {.hz = 100, .ncpus = 1, .duration_ns = 1000000000ull};
	char *text;

	in.stats[CPROF_STAT_SAMPLES] = 100;
	text = two_programs(&in, 1000000000000000ull);
	CHECK(strstr(text, "cprof: MISMATCH: the profile holds 1999999999999900 samples more than "
			   "the 100 the BPF side counted"));
	CHECK(!strstr(text, "top functions"));
	free(text);
	/* An interval's counters may lag its profile: no verdict there. */
	in.interval = true;
	text = two_programs(&in, 1000);
	CHECK(!strstr(text, "MISMATCH"));
	free(text);
}

/* The kernel's fallbacks: one line, naming the release emulated. */
TEST(summary_kernel_fallbacks)
{
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text;

	text = losses(&in, 0);
	CHECK(!strstr(text, "fallbacks"));
	free(text);
	in.kernel_fallbacks = (1u << KCAP_BATCH_OPS) | (1u << KCAP_BPF_LOOP);
	in.kernel_as = "5.4";
	text = losses(&in, 0);
	CHECK(strstr(text,
		     "cprof: kernel fallbacks (as Linux 5.4, CPROF_KERNEL_AS): BPF maps "
		     "drained and filled key by key (no batched map operations); the in-kernel "
		     "walk verified frame by frame (no bpf_loop)\n"));
	free(text);
	/* Where no walk runs in the kernel (before 5.5), nothing is said of its verification. */
	in.kernel_fallbacks |= 1u << KCAP_UNWINDER;
	in.kernel_as = "4.19";
	text = losses(&in, 0);
	CHECK(strstr(text,
		     "user stacks walked in user space from stack copies (no in-kernel walk)"));
	CHECK(!strstr(text, "bpf_loop"));
	free(text);
}

/*
 * Names are data: a function, a file and a process named with escape
 * sequences and newlines are shown escaped, in the top list and the loss
 * lines alike; every newline of the summary is one of its own line ends.
 */
TEST(summary_names_shown_escaped)
{
	struct profile *p = profile__new(NULL);
	struct profile_frame unmapped = {.address = 0x1234,
					 .name = "[unknown]",
					 .kind = FRAME_UNNAMED},
			     evil = {.address = 0x5678, .name = "f\033]0;pwned\a\ncprof: FORGED"};
	struct profile_labels who = {.pid = 1, .comm = "\033[2J\r\xc2\x9b"};
	struct summary_info in = {.hz = 99, .ncpus = 1};
	char *text = NULL, *line, *end;
	size_t len = 0, i;
	uint32_t f[2];
	FILE *out;

	CHECK(p);
	unmapped.system_name = unmapped.name;
	evil.system_name = evil.name;
	f[0] = profile__add_frame(p, &evil);
	f[1] = profile__add_frame(p, &unmapped);
	CHECK(f[0] && f[1]);
	CHECK_INT(profile__add_sample(p, f, 2, &who, 5), ==, 0);
	in.stats[CPROF_STAT_SAMPLES] = 5;
	in.unmapped_samples =
		summary__unmapped_samples(p, in.unmapped_who, sizeof(in.unmapped_who));
	snprintf(in.unopened_who, sizeof(in.unopened_who), "lib\n\033x.so 1");
	in.sym[SYM_STAT_FILES_UNOPENED] = 1;
	out = open_memstream(&text, &len);
	CHECK(out);
	summary__print(out, p, &in, 10);
	fclose(out);
	CHECK(strstr(text, "  f\\x1b]0;pwned\\x07\\x0acprof: FORGED\n"));
	CHECK(strstr(text, "shown as [unknown]: \\x1b[2J\\x0d\\xc2\\x9b 5\n"));
	CHECK(strstr(text, "; in lib\\x0a\\x1bx.so 1\n"));
	for (line = text; *line; line = end + 1) {
		end = strchr(line, '\n');
		CHECK(end);
		CHECK(!strncmp(line, "cprof: ", 7) || !strncmp(line, "  ", 2));
		CHECK(strncmp(line, "cprof: FORGED", 13));
	}
	for (i = 0; i < len; i++)
		CHECK(text[i] == '\n' || ((unsigned char)text[i] >= 0x20 && text[i] != 0x7f));
	CHECK(!strstr(text, "\xc2\x9b"));
	profile__free(p);
	free(text);
}
