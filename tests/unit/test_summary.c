// SPDX-License-Identifier: MIT
/* The summary's words: every loss under one reason, counts that agree with their nouns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "summary.h"
#include "test.h"

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
	CHECK(strstr(text, "cprof: 25 of 100 samples (25.0%) have a user frame no symbol names; "
			   "distinct frames without a symbol, shown as module+offset: user 4937 "
			   "of 4947, kernel 0 of 10\n"));
	free(text);
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
	struct profile_frame unmapped = {.address = 0x1234, .name = "[unknown]", .unknown = true},
			     lost = {.name = "[user stack lost: error]", .unknown = true},
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
			   "replaced by another file): their frames are shown as file+offset; in "
			   "make 2\n"));
	free(text);
}
