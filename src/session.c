// SPDX-License-Identifier: MIT
/*
 * A profiling run. The main loop waits on the BPF notification buffer with a
 * short timeout, so new processes are snapshotted within milliseconds of
 * their first sample, and drains the in-kernel counts about once a second
 * (sooner when the maps fill), resolving stacks while their processes live.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "folded.h"
#include "output.h"
#include "pprof.h"
#include "procfs.h"
#include "profile.h"
#include "sampler.h"
#include "session.h"
#include "summary.h"
#include "symbolizer.h"
#include "target.h"

#define LOG_MODULE NULL
#include "log.h"

#define POLL_MS		  100
#define DRAIN_INTERVAL_MS 1000
#define MAX_FRAMES	  (2 * CPROF_MAX_STACK_DEPTH + 2)

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t forward_signal;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (stop_requested) {
		/* A second signal means "now": no profile, no waiting. */
		static const char msg[] = "cprof: interrupted again, exiting without a profile\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(130);
		_exit(130);
	}
	stop_requested = sig;
	/* A terminal's Ctrl-C already reached the command; a kill(1) did not. */
	if (info && info->si_code == SI_USER)
		forward_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK; later ones use memory
 * cgroups and ignore it. Raising it is best effort: where it is not permitted
 * (no CAP_SYS_RESOURCE) a new kernel does not care and an old one fails the
 * load with a message that names the limit.
 */
static void raise_limits(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		pr_debug("cannot raise RLIMIT_MEMLOCK: %s (only matters before Linux 5.11)",
			 strerror(errno));
	/* One descriptor per distinct mapped ELF file is kept open. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct run {
	const struct session_opts *o;
	struct profile *prof;
	struct symbolizer *sym;
	struct sampler *sampler;
	int errors;	/* entries that could not be added (allocation failures) */
	uint32_t *pids; /* -p targets, thread IDs replaced by their process */
	size_t npids;
};

static void on_process(void *ctx, uint32_t pid)
{
	struct run *r = ctx;

	symbolizer__note_process(r->sym, pid);
}

static uint32_t lost_stack_frame(struct run *r, int err, int kernel)
{
	const char *what;

	if (err == -EEXIST)
		what = kernel ? "[kernel stack lost: stack map collision]"
			      : "[user stack lost: stack map collision]";
	else
		what = kernel ? "[kernel stack lost: error]" : "[user stack lost: error]";
	return symbolizer__placeholder(r->sym, what, kernel);
}

static void on_entry(void *ctx, const struct sampler_entry *e)
{
	struct run *r = ctx;
	uint32_t frames[MAX_FRAMES], n = 0;
	struct profile_labels labels = {.pid = e->pid};
	const char *pname;

	/* Leaf first: the kernel part (if any) sits on top of the user part. */
	if (e->kern_n) {
		if (symbolizer__kernel_frames(r->sym, e->kern_ips, e->kern_n, frames + n))
			goto fail;
		n += e->kern_n;
	} else if (e->kern_err) {
		frames[n++] = lost_stack_frame(r, e->kern_err, 1);
	}
	if (e->user_n) {
		if (symbolizer__user_frames(r->sym, e->pid, e->user_ips, e->user_n, frames + n))
			goto fail;
		n += e->user_n;
	} else if (e->user_err) {
		frames[n++] = lost_stack_frame(r, e->user_err, 0);
	}
	if (n == 0)
		frames[n++] = symbolizer__placeholder(r->sym, "[no stack]", 0);

	pname = symbolizer__process_name(r->sym, e->pid);
	labels.comm = pname ? pname : profile__intern(r->prof, e->comm);
	labels.thread_name = profile__intern(r->prof, e->comm);
	if (r->o->per_thread)
		labels.tid = e->tid;
	if (!labels.comm || !labels.thread_name)
		goto fail;
	for (uint32_t i = 0; i < n; i++)
		if (!frames[i])
			goto fail;
	if (profile__add_sample(r->prof, frames, n, &labels, e->count))
		goto fail;
	return;
fail:
	r->errors++;
}

static int drain(struct run *r)
{
	int err;

	err = sampler__drain(r->sampler, on_entry, r);
	symbolizer__new_interval(r->sym);
	if (err)
		pr_warn("draining the BPF maps failed: %s", strerror(-err));
	return err;
}

static bool any_alive(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->npids; i++)
		if (procfs__pid_exists(r->pids[i]))
			return true;
	return false;
}

static int deliver(const struct session_opts *o, struct profile *prof, struct output *out)
{
	uint8_t *raw = NULL, *gz = NULL;
	char *text = NULL;
	size_t raw_len = 0, gz_len = 0, text_len = 0;
	int err;

	if (o->format == FORMAT_FOLDED) {
		err = folded__encode(prof, &text, &text_len);
		if (err) {
			pr_err("cannot encode the folded profile: %s", strerror(-err));
			goto cleanup;
		}
		err = output__write(out, text, text_len);
		goto cleanup;
	}
	err = pprof__encode(prof, &raw, &raw_len);
	if (err) {
		pr_err("cannot encode the pprof profile: %s", strerror(-err));
		goto cleanup;
	}
	err = compress__gzip(raw, raw_len, &gz, &gz_len);
	if (err) {
		pr_err("cannot compress the profile: %s", strerror(-err));
		goto cleanup;
	}
	err = output__write(out, gz, gz_len);
	if (!err)
		fprintf(stderr, "cprof: wrote %s%s (pprof, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the profile to ",
			output__path(out), gz_len);
cleanup:
	free(raw);
	free(gz);
	free(text);
	return err;
}

int session__run(const struct session_opts *o)
{
	struct sampler_opts so = {
		.hz = o->hz,
		.filter_pids = o->npids > 0 || o->command,
		.follow_children = o->follow_children,
		.include_idle = o->include_idle,
		.stack_entries = o->map_entries,
		.count_entries = o->map_entries,
	};
	struct profile_meta meta = {.hz = o->hz, .period_ns = 1000000000ull / o->hz};
	struct summary_info info = {.hz = o->hz, .include_idle = o->include_idle};
	struct run r = {.o = o};
	struct output *out = NULL;
	struct target *cmd = NULL;
	uint64_t start, deadline = 0, next_drain, now;
	int err, status = 0, exit_code = 1;
	bool cmd_done = false;
	size_t i;

	install_signals();
	raise_limits();
	r.npids = o->npids;
	r.pids = calloc(o->npids ? o->npids : 1, sizeof(*r.pids));
	if (!r.pids) {
		pr_err("out of memory");
		return 1;
	}
	memcpy(r.pids, o->pids, o->npids * sizeof(*r.pids));
	for (i = 0; i < r.npids; i++) {
		uint32_t tgid;

		if (!procfs__pid_exists(r.pids[i])) {
			pr_err("no such process: %u", r.pids[i]);
			goto cleanup;
		}
		/* Samples are matched by process; a thread ID stands for its process. */
		if (procfs__tgid(r.pids[i], &tgid) == 0 && tgid != r.pids[i]) {
			pr_warn("%u is a thread of process %u: profiling process %u", r.pids[i],
				tgid, tgid);
			r.pids[i] = tgid;
		}
	}
	err = output__open(o->output, o->format == FORMAT_PPROF, &out);
	if (err)
		goto cleanup;
	meta.time_ns = now_ns(CLOCK_REALTIME);
	r.prof = profile__new(&meta);
	if (!r.prof || symbolizer__new(r.prof, &r.sym)) {
		pr_err("out of memory");
		goto cleanup;
	}
	err = sampler__new(&so, &r.sampler);
	if (err)
		goto cleanup;
	for (i = 0; i < r.npids; i++) {
		if (sampler__add_target(r.sampler, r.pids[i]))
			goto cleanup;
		symbolizer__note_process(r.sym, r.pids[i]);
	}
	if (o->command) {
		err = target__spawn(o->command, &cmd);
		if (err)
			goto cleanup;
		if (sampler__add_target(r.sampler, (uint32_t)target__pid(cmd)))
			goto cleanup;
	}
	err = sampler__start(r.sampler);
	if (err)
		goto cleanup;
	start = now_ns(CLOCK_MONOTONIC);
	pr_info("sampling started at %u Hz on %d CPUs", o->hz, sampler__cpu_count(r.sampler));
	if (cmd) {
		err = target__release(cmd);
		if (err) {
			exit_code = 127;
			goto cleanup;
		}
	}
	if (o->duration_ms)
		deadline = start + o->duration_ms * 1000000ull;
	next_drain = start + DRAIN_INTERVAL_MS * 1000000ull;

	while (!stop_requested) {
		int timeout = POLL_MS;

		now = now_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			break;
		if (deadline && (deadline - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((deadline - now) / 1000000) + 1;
		err = sampler__poll(r.sampler, timeout, on_process, &r);
		if (err < 0)
			pr_warn("polling for new processes failed: %s", strerror(-err));
		if (cmd && target__exited(cmd, &status)) {
			cmd_done = true;
			break;
		}
		if (r.npids && !cmd && !any_alive(&r)) {
			pr_info("all target processes have exited");
			break;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= next_drain || sampler__should_drain(r.sampler)) {
			drain(&r);
			next_drain = now + DRAIN_INTERVAL_MS * 1000000ull;
		}
	}
	if (cmd && forward_signal && !cmd_done)
		kill(target__pid(cmd), forward_signal);

	info.ncpus = sampler__cpu_count(r.sampler);
	sampler__stop(r.sampler);
	now = now_ns(CLOCK_MONOTONIC);
	profile__set_duration(r.prof, now - start);
	info.duration_ns = now - start;
	drain(&r);
	sampler__read_stats(r.sampler, info.stats);
	info.lost_notifications = sampler__lost_notifications(r.sampler);
	info.missing_stacks = sampler__missing_stacks(r.sampler);
	info.sym = *symbolizer__stats(r.sym);
	if (r.errors)
		pr_warn("%d aggregated entries could not be added to the profile (out of memory)",
			r.errors);
	summary__add_comments(r.prof, &info);

	err = deliver(o, r.prof, out);
	summary__print(stderr, r.prof, &info, o->top_n);
	exit_code = err ? 1 : 0;

	/* The command outlives a -d limit: let it finish and forward its status. */
	if (cmd) {
		if (!cmd_done)
			target__wait(cmd, &status);
		if (exit_code == 0)
			exit_code = target__exit_code(status);
	}
cleanup:
	target__free(cmd);
	sampler__free(r.sampler);
	symbolizer__free(r.sym);
	profile__free(r.prof);
	output__free(out);
	free(r.pids);
	return exit_code;
}
