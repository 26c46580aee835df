// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "build/profile.h"
#include "lib/kernel_caps.h"
#include "lib/proc_file.h"
#include "lib/short_name.h"
#include "lib/strpool.h"
#include "lib/term_text.h"
#include "lib/load_budget.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "summary.h"
#include "unwind/process_regions.h"
#include "unwind/stack_walk.h"
#include "summary_internal.h"

int summary__add_comments(struct profile *p, const struct summary_info *in)
{
	char buf[1024];
	int err;

	snprintf(buf, sizeof(buf),
		 "cprof: samples taken %" PRIu64 ", in profile %" PRIu64 ", lost %" PRIu64
		 "; never taken %" PRIu64 "; before exec %" PRIu64 "; ticks %" PRIu64 " at %" PRIu64
		 " Hz on %d CPUs; max rate %" PRIu64,
		 in->stats[CPROF_STAT_SAMPLES], profile__total_count(p), summary_lost_samples(in),
		 in->skipped_samples, in->stats[CPROF_STAT_BEFORE_EXEC],
		 in->stats[CPROF_STAT_TICKS], in->hz, in->ncpus, in->kernel_max_rate);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (summary_uncounted_samples(profile__total_count(p), in)) {
		snprintf(buf, sizeof(buf),
			 "cprof: MISMATCH: the profile holds %" PRIu64
			 " samples more than the BPF side counted",
			 summary_uncounted_samples(profile__total_count(p), in));
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	memcpy(buf, "cprof: ", 7);
	summary_fallbacks_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	snprintf(buf, sizeof(buf),
		 "cprof: stacks lost: user collisions %" PRIu64 ", kernel collisions %" PRIu64
		 ", user errors %" PRIu64 ", kernel errors %" PRIu64 ", vanished %" PRIu64
		 "; kept whole past a stack-map collision %" PRIu64,
		 in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
		 in->stats[CPROF_STAT_USER_STACK_ERR], in->stats[CPROF_STAT_KERN_STACK_ERR],
		 in->missing_stacks, in->stats[CPROF_STAT_SPILLED]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: samples unnamed %" PRIu64 ", by function start %" PRIu64
		 ", unmapped %" PRIu64 "%s%s%s; frames unnamed: user %" PRIu64 " of %" PRIu64
		 " (unmapped %" PRIu64 "), kernel %" PRIu64 " of %" PRIu64
		 "; files unopened %" PRIu64 "%s%s%s",
		 in->unnamed_samples, in->function_start_samples, in->unmapped_samples,
		 in->unmapped_who[0] ? " (" : "", in->unmapped_who, in->unmapped_who[0] ? ")" : "",
		 in->sym[SYM_STAT_UNKNOWN_USER], in->sym[SYM_STAT_USER_FRAMES],
		 in->sym[SYM_STAT_USER_UNMAPPED], in->sym[SYM_STAT_UNKNOWN_KERNEL],
		 in->sym[SYM_STAT_KERNEL_FRAMES], in->sym[SYM_STAT_FILES_UNOPENED],
		 in->unopened_who[0] ? " (" : "", in->unopened_who, in->unopened_who[0] ? ")" : "");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: processes: from /proc %" PRIu64 ", gone first %" PRIu64
		 "; followed spaces %" PRIu64 ", mappings %" PRIu64 "; released %" PRIu64
		 "; notifications lost %" PRIu64 "; perf records lost %" PRIu64 " (counted above)",
		 in->sym[SYM_STAT_PROCESSES], in->sym[SYM_STAT_PROCESSES_GONE],
		 in->sym[SYM_STAT_SPACES_FOLLOWED], in->sym[SYM_STAT_MAPPINGS_FOLLOWED],
		 in->sym[SYM_STAT_SPACES_FORGOTTEN], in->stats[CPROF_STAT_NOTIFY_LOST],
		 in->lost_notifications);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->followed)
		snprintf(buf, sizeof(buf),
			 "cprof: kernel records: read %" PRIu64
			 ", lost by the kernel (ring full) %" PRIu64 ", malformed %" PRIu64
			 ", late %" PRIu64 "; hook runs skipped %" PRIu64
			 ", forks found late %" PRIu64,
			 in->records, in->records_lost, in->records_broken, in->records_late,
			 in->skipped_hooks, in->forks_late);
	else
		snprintf(buf, sizeof(buf),
			 "cprof: kernel records: none (processes read from /proc when first "
			 "sampled)");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: symbols: debug files %" PRIu64 "; bad perf map lines %" PRIu64
		 "; ELF files %" PRIu64 ", closed idle %" PRIu64 ", let go %" PRIu64
		 ", reopened %" PRIu64 "; frames named by function start (no symbol) %" PRIu64,
		 in->sym[SYM_STAT_DEBUG_FILES], in->sym[SYM_STAT_PERF_MAP_BAD_LINES],
		 in->sym[SYM_STAT_ELF_FILES], in->sym[SYM_STAT_ELF_FILES_CLOSED],
		 in->sym[SYM_STAT_ELF_FILES_RELEASED], in->sym[SYM_STAT_ELF_FILES_REOPENED],
		 in->sym[SYM_STAT_FUNCTION_STARTS]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->lines) {
		memcpy(buf, "cprof: ", 7);
		summary_lines_sentence(buf + 7, sizeof(buf) - 7, in);
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	memcpy(buf, "cprof: ", 7);
	summary_refusals_sentence(buf + 7, sizeof(buf) - 7, in, false);
	if (!buf[7]) /* every count 0: said in a few words */
		snprintf(buf + 7, sizeof(buf) - 7, "perf maps and debug files refused: none");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	summary_end_maps_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	snprintf(buf, sizeof(buf),
		 "cprof: files on FUSE (or a user's overlay) read through a child process %" PRIu64
		 ", reads given up (no answer within %d ms, or the profile's %d ms spent) %" PRIu64,
		 in->fuse.copied, FUSE_FILE_TIMEOUT_MS, FUSE_FILE_RUN_BUDGET_MS,
		 in->fuse.unanswered);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	summary_budget_sentence(buf + 7, sizeof(buf) - 7, in);
	if (buf[7]) {
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	if (in->debuginfod) {
		memcpy(buf, "cprof: ", 7);
		summary_debuginfod_sentence(buf + 7, sizeof(buf) - 7, in);
		if (buf[7] == '\0')
			snprintf(buf + 7, sizeof(buf) - 7,
				 "debuginfod: no debug file asked for (every file was named "
				 "without one)");
		err = profile__add_comment(p, buf);
		if (err)
			return err;
	}
	summary_user_stacks_comment(buf, sizeof(buf), in);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	summary_copy_causes_comment(buf, sizeof(buf), in);
	if (buf[0] && (err = profile__add_comment(p, buf)))
		return err;
	if (in->targeted)
		snprintf(buf, sizeof(buf),
			 "cprof: idle samples: none (only the targets are sampled)");
	else
		snprintf(buf, sizeof(buf), "cprof: idle samples %s: %" PRIu64,
			 in->include_idle ? "included" : "excluded", in->stats[CPROF_STAT_IDLE]);
	return profile__add_comment(p, buf);
}

static void print_lost(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t lost = summary_lost_samples(in), stacks = summary_lost_stacks(in);

	if (lost)
		fprintf(f, "cprof: LOST %" PRIu64 " %s (%.1f%%): %s\n", lost,
			plural(lost, "sample", "samples"), summary_pct(lost, total + lost),
			in->lost_spills || in->stats[CPROF_STAT_WALKS_LOST]
				? "the counts map was full, or the perf buffer or memory for a "
				  "spilled or copied stack"
				: "the counts map was full; raise --map-size");
	else
		fprintf(f, "cprof: lost samples: 0\n");
	if (in->skipped_samples)
		fprintf(f,
			"cprof: the kernel skipped the sampling program %" PRIu64 " %s (a BPF "
			"program or a bpf() call was under way on that CPU): %s never taken\n",
			in->skipped_samples, plural(in->skipped_samples, "time", "times"),
			plural(in->skipped_samples, "that sample was", "those samples were"));
	if (stacks)
		fprintf(f,
			"cprof: %" PRIu64 " %s lost but their samples kept as placeholders: "
			"stack-map collisions user %" PRIu64 " kernel %" PRIu64 ", errors %" PRIu64
			"\n",
			stacks, plural(stacks, "stack", "stacks"),
			in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
			in->stats[CPROF_STAT_USER_STACK_ERR] +
				in->stats[CPROF_STAT_KERN_STACK_ERR] + in->missing_stacks);
}

/* part of whole in %, never rounded to 0 or 100 when it is neither. */
static void print_share(FILE *f, uint64_t part, uint64_t whole)
{
	double v = summary_pct(part, whole);

	if (part && v < 0.05)
		fprintf(f, "<0.1%%");
	else if (part < whole && v >= 99.95)
		fprintf(f, ">99.9%%");
	else
		fprintf(f, "%.1f%%", v);
}

/*
 * Stacks by frame pointers are the kernel's (bpf_get_stack), which stops at
 * 127 frames: said where --max-stack asked for more, as it does not apply.
 */
static void print_fp_depth(FILE *f, const struct summary_info *in)
{
	if (in->max_stack > CPROF_MAX_STACK_DEPTH)
		fprintf(f, "; the kernel reads those at most %d frames deep, not --max-stack's %u",
			CPROF_MAX_STACK_DEPTH, in->max_stack);
}

static void print_user_stacks(FILE *f, const struct summary_info *in)
{
	static const char *const fp_caveat =
		"callers in code built without frame pointers may be missing or wrong";
	uint64_t root = in->walk_stops[CPROF_STOP_NONE], n = in->fp_user;
	uint32_t order[CPROF_STOP_MAX];
	char who[SHOWN_SIZE];
	size_t nstops, i;

	if (in->copy_walks) {
		fprintf(f,
			"cprof: every user stack walked in user space from a copy of the stack (");
		if (in->unwind_status == -ENOENT)
			fprintf(f, "--stack-copies)\n");
		else
			fprintf(f, "the in-kernel walk cannot run here: %s)\n",
				strerror(-in->unwind_status));
	} else if (in->unwind_status == -ENOENT) {
		fprintf(f, "cprof: user stacks by frame pointers only (--frame-pointers): %s\n",
			fp_caveat);
		return;
	} else if (in->unwind_status) {
		fprintf(f,
			"cprof: user stacks by frame pointers only: the unwinder could not be "
			"loaded (%s; run with -v for the verifier log): %s",
			strerror(-in->unwind_status), fp_caveat);
		print_fp_depth(f, in);
		fputc('\n', f);
		return;
	}
	/* Nothing walked (kernel threads, or only samples taken in the kernel): nothing to say. */
	if (in->walked) {
		fprintf(f,
			"cprof: user stacks walked with the CFI tables: %" PRIu64 " of %" PRIu64
			" %s (",
			root, in->walked, plural(in->walked, "sample", "samples"));
		print_share(f, root, in->walked);
		fprintf(f, ") reached a thread root");
		nstops = summary_stops_by_count(in, order);
		for (i = 0; i < nstops; i++) {
			fprintf(f, "%s%" PRIu64 " (",
				i ? ", " : "; truncated: ", in->walk_stops[order[i]]);
			print_share(f, in->walk_stops[order[i]], in->walked);
			fprintf(f, ") %s", stack_walk__stop_name(order[i]));
		}
		if (nstops && in->truncated_who[0])
			fprintf(f, "; stopped most in %s", summary_shown(in->truncated_who, who));
		/* Their tables not loaded yet, or the in-kernel walk not: walked by cprof itself.
		 */
		if (in->stats[CPROF_STAT_COPIES] && !in->copy_walks) {
			fprintf(f,
				"; %" PRIu64 " of %" PRIu64
				" walked in user space from a copy of the stack",
				in->stats[CPROF_STAT_COPIES], in->walked);
			summary_print_copy_causes(f, in);
		}
		fputc('\n', f);
	}
	if (n) {
		fprintf(f,
			"cprof: %" PRIu64 " %s taken in the kernel %s by frame pointers, not "
			"walked with the tables: their callers may be missing",
			n, plural(n, "sample", "samples"),
			plural(n, "has its user stack", "have their user stacks"));
		print_fp_depth(f, in);
		fputc('\n', f);
	}
}

/* Distinct user frames with no name at all: not even their function's start. */
static uint64_t unnamed_user_frames(const struct summary_info *in)
{
	uint64_t all = in->sym[SYM_STAT_UNKNOWN_USER], starts = in->sym[SYM_STAT_FUNCTION_STARTS];

	return all > starts ? all - starts : 0;
}

static void print_unnamed(FILE *f, uint64_t total, const struct summary_info *in)
{
	char line[512], who[SHOWN_SIZE];
	uint64_t n;

	/* Frames named by their function's start are named, if not by a symbol: said apart. */
	n = unnamed_user_frames(in);
	if (n || in->unnamed_samples || in->sym[SYM_STAT_UNKNOWN_KERNEL])
		fprintf(f,
			"cprof: %" PRIu64 " of %" PRIu64 " %s (%.1f%%) %s a user frame with no "
			"name at all; distinct frames without one, shown as module+offset: user "
			"%" PRIu64 " of %" PRIu64 ", kernel %" PRIu64 " of %" PRIu64 "\n",
			in->unnamed_samples, total, plural(total, "sample", "samples"),
			summary_pct(in->unnamed_samples, total),
			in->unnamed_samples == 1 ? "has" : "have", n, in->sym[SYM_STAT_USER_FRAMES],
			in->sym[SYM_STAT_UNKNOWN_KERNEL], in->sym[SYM_STAT_KERNEL_FRAMES]);
	n = in->unmapped_samples;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s a user address in no mapping known to %s process, "
			"shown as [unknown]%s%s\n",
			n, plural(n, "sample has", "samples have"), plural(n, "its", "their"),
			in->unmapped_who[0] ? ": " : "", summary_shown(in->unmapped_who, who));
	n = in->sym[SYM_STAT_FILES_UNOPENED];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " mapped %s not be opened (deleted and gone, or replaced "
			"by another file): %s frames are shown as file@offset%s%s\n",
			n, plural(n, "file could", "files could"), plural(n, "its", "their"),
			in->unopened_who[0] ? "; in " : "", summary_shown(in->unopened_who, who));
	n = in->sym[SYM_STAT_FUNCTION_STARTS];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " of %" PRIu64 " %s (%.1f%%) %s a user frame named by "
			"its function's start, not by a symbol (a stripped file; the start from "
			".eh_frame), shown as FILE+0xSTART: %" PRIu64 " distinct %s\n",
			in->function_start_samples, total, plural(total, "sample", "samples"),
			summary_pct(in->function_start_samples, total),
			in->function_start_samples == 1 ? "has" : "have", n,
			plural(n, "frame", "frames"));
	n = in->sym[SYM_STAT_PERF_MAP_BAD_LINES];
	if (n)
		fprintf(f, "cprof: %" PRIu64 " malformed perf map %s skipped\n", n,
			plural(n, "line", "lines"));
	summary_refusals_sentence(line, sizeof(line), in, false);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	summary_end_maps_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	n = in->fuse.unanswered;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s of files on FUSE given up: the FUSE server did not "
			"answer within %d ms (none of its files was tried again), or the %d ms a "
			"profile gives such reads were spent\n",
			n, plural(n, "read", "reads"), FUSE_FILE_TIMEOUT_MS,
			FUSE_FILE_RUN_BUDGET_MS);
	summary_debuginfod_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f, "cprof: %s\n", line);
	n = in->store_capped;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " unwind %s or symbol %s not kept for later runs: past "
			"the cache directory's size cap (later runs build them again)\n",
			n, plural(n, "table", "tables"), plural(n, "set", "sets"));
	summary_budget_sentence(line, sizeof(line), in);
	if (*line)
		fprintf(f,
			"cprof: %s: frames in refused symbol tables show as file+address, stacks "
			"without an unwind table are walked by frame pointers\n",
			line);
}

static void print_processes(FILE *f, const struct summary_info *in)
{
	uint64_t gone = in->sym[SYM_STAT_PROCESSES_GONE], n = in->stats[CPROF_STAT_NOTIFY_LOST];

	if (in->records_lost)
		fprintf(f,
			"cprof: the kernel lost %" PRIu64 " %s of forks, execs and mmaps (its ring "
			"was full): processes that began or mapped code then may show [unknown] "
			"frames\n",
			in->records_lost, plural(in->records_lost, "record", "records"));
	if (in->records_broken)
		fprintf(f, "cprof: %" PRIu64 " malformed process %s skipped\n", in->records_broken,
			plural(in->records_broken, "record", "records"));
	if (in->skipped_hooks || in->forks_late)
		fprintf(f,
			"cprof: the kernel skipped %" PRIu64 " %s of the fork, exec and exit hooks "
			"(a BPF program or a bpf() call was under way on that CPU); %" PRIu64
			" %s followed from the kernel's records instead, a moment late\n",
			in->skipped_hooks, plural(in->skipped_hooks, "run", "runs"), in->forks_late,
			plural(in->forks_late, "child was", "children were"));

	if (gone)
		fprintf(f, "cprof: %" PRIu64 " %s before %s memory map could be read\n", gone,
			plural(gone, "process exited", "processes exited"),
			plural(gone, "its", "their"));
	if (n)
		fprintf(f, "cprof: %" PRIu64 " new-process %s lost (%s read late)\n", n,
			plural(n, "notification", "notifications"),
			plural(n, "that process was", "those processes were"));
	n = in->stats[CPROF_STAT_BEFORE_EXEC];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64
			" %s of the command before its exec not kept (cprof's own "
			"code)\n",
			n, plural(n, "sample", "samples"));
}

static void print_rate(FILE *f, const struct summary_info *in)
{
	uint64_t idle = in->stats[CPROF_STAT_IDLE];

	/*
	 * -F was checked against the limit at the start; the kernel lowers it when
	 * sampling interrupts take too long, and then throttles the events. (The
	 * tick count cannot tell: an idle CPU in a tickless sleep takes none.)
	 */
	if (in->kernel_max_rate && in->kernel_max_rate < in->hz)
		fprintf(f,
			"cprof: the kernel throttled sampling: it lowered "
			"kernel.perf_event_max_sample_rate to %" PRIu64
			" during the run, below the "
			"%" PRIu64 " Hz asked, so fewer samples were taken (%" PRIu64
			" ticks in %.2f s on %d %s)\n",
			in->kernel_max_rate, in->hz, in->stats[CPROF_STAT_TICKS],
			(double)in->duration_ns / 1e9, in->ncpus,
			plural((uint64_t)in->ncpus, "CPU", "CPUs"));
	/* With -p or a command, other CPUs' idle time is not the target's business. */
	if (!idle || in->targeted)
		return;
	if (in->include_idle)
		fprintf(f, "cprof: %" PRIu64 " idle %s included (the swapper task)\n", idle,
			plural(idle, "sample", "samples"));
	else
		fprintf(f, "cprof: %" PRIu64 " idle %s not counted (--include-idle keeps them)\n",
			idle, plural(idle, "sample", "samples"));
}

/* The kernel's fallbacks, and a profile the BPF side's counter cannot account for. */
static void print_kernel(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t extra = summary_uncounted_samples(total, in);
	char buf[512];

	summary_fallbacks_sentence(buf, sizeof(buf), in);
	if (*buf)
		fprintf(f, "cprof: %s\n", buf);
	if (extra)
		fprintf(f,
			"cprof: MISMATCH: the profile holds %" PRIu64 " %s more than the %" PRIu64
			" the BPF side counted: its counts cannot be trusted (no top list)\n",
			extra, plural(extra, "sample", "samples"), in->stats[CPROF_STAT_SAMPLES]);
}

void summary__print_losses(FILE *f, uint64_t total, const struct summary_info *in)
{
	print_kernel(f, total, in);
	print_lost(f, total, in);
	print_user_stacks(f, in);
	print_unnamed(f, total, in);
	summary_print_lines(f, in);
	print_processes(f, in);
	print_rate(f, in);
}

void summary__print(FILE *f, const struct profile *p, const struct summary_info *in, int top_n)
{
	uint64_t total = profile__total_count(p);
	struct func_total *funcs;
	struct strpool *names;
	char name[SHOWN_SIZE], module[SHOWN_SIZE];
	size_t nfuncs = 0, i;

	fprintf(f, "cprof: %" PRIu64 " %s in %.2f s at %" PRIu64 " Hz on %d %s, %zu %s\n", total,
		plural(total, "sample", "samples"), (double)in->duration_ns / 1e9, in->hz,
		in->ncpus, plural((uint64_t)in->ncpus, "CPU", "CPUs"), summary_count_processes(p),
		plural(summary_count_processes(p), "process", "processes"));
	summary__print_losses(f, total, in);
	if (!total || summary_uncounted_samples(total, in))
		return;
	names = strpool__new();
	funcs = summary_function_totals(p, names, &nfuncs);
	fprintf(f, "cprof: top functions by self samples:\n");
	fprintf(f, "  %6s %6s %8s  %s\n", "self%", "total%", "samples", "function");
	for (i = 0; i < nfuncs && (int)i < top_n; i++) {
		if (!funcs[i].self)
			break;
		fprintf(f, "  %5.1f%% %5.1f%% %8" PRIu64 "  %s%s%s%s\n",
			summary_pct(funcs[i].self, total), summary_pct(funcs[i].total, total),
			funcs[i].self, summary_shown(funcs[i].name, name),
			*funcs[i].module ? " (" : "", summary_shown(funcs[i].module, module),
			*funcs[i].module ? ")" : "");
	}
	free(funcs);
	strpool__free(names);
}
