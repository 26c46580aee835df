// SPDX-License-Identifier: MIT
/*
 * A profiling run. The main loop waits on the BPF notification buffer with a
 * short timeout, so new processes are snapshotted within milliseconds of
 * their first sample, and drains the in-kernel counts about once a second
 * (sooner when the maps fill), resolving stacks while their processes live.
 *
 * With --server the profile goes to a server, and to a file only if that
 * fails (or -o asks for it). In continuous mode (--interval) the run is cut
 * into intervals: at each boundary the maps are drained, the interval's
 * profile is handed to the delivery thread, and a fresh profile begins
 * where the last one ended, so intervals neither overlap nor leave gaps.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "build/profile.h"
#include "deliver/batch.h"
#include "deliver/batcher.h"
#include "deliver/delivery.h"
#include "deliver/output.h"
#include "deliver/spool.h"
#include "deliver/upload.h"
#include "encode/folded.h"
#include "encode/pprof.h"
#include "encode/svg.h"
#include "lib/block_pool.h"
#include "lib/cancel.h"
#include "lib/clock.h"
#include "lib/fuse_file.h"
#include "lib/kernel_caps.h"
#include "lib/load_budget.h"
#include "lib/procfs.h"
#include "lib/sbuf.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "net/tls.h"
#include "resolve/debuginfod.h"
#include "resolve/debuginfod_queue.h"
#include "resolve/symbolizer.h"
#include "resolve/task_feed.h"
#include "sample/region_feed.h"
#include "sample/sampler.h"
#include "sample/target.h"
#include "sample/task_events.h"
#include "sample/unwinder.h"
#include "unwind/kernel_facts.h"
#include "unwind/stack_walk.h"
#include "unwind/table_loader.h"
#include "store/table_store.h"
#include "session.h"
#include "signals.h"
#include "summary.h"

#define LOG_MODULE NULL
#include "lib/log.h"
#include "lib/sigbus.h"

#define POLL_MS 100
/*
 * A process record is in its ring this long after the time it carries, at
 * most: records are read up to now less this, so that those of every CPU
 * come in time order. (Taken with its time, a record is written without
 * sleeping.)
 */
#define RECORD_DELAY_MS 2
/* Far finer than the second the in-kernel walk counts from it (tell_followed). */
#define FOLLOWED_STEP_NS 10000000ull
/*
 * Stack copies' memory kept for reuse, as much as was queued at once (see
 * block_pool.h), up to some 16 MB.
 */
#define COPIES_KEPT 1000
/* Per CPU, for the kernel's process records: some 90 exec'ing processes' worth. */
#define RECORD_PAGES	  16
#define DRAIN_INTERVAL_MS 1000
#define MAX_FRAMES	  (2 * CPROF_UNWIND_MAX_DEPTH + 2)
/* The unwind tables kept between runs: some 1,000 programs' and libraries' (libc's is 93 KB). */
#define TABLE_STORE_BYTES (64ull << 20)
/* Unwind table rows a profile of some processes starts with: 1 MB of map. */
#define FIRST_ROWS (1u << 18)
/* One-shot: about 3.5 s of backoff in all. Continuous: the spool takes over sooner. */
#define ONESHOT_ATTEMPTS    4
#define CONTINUOUS_ATTEMPTS 3

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
	/* When the head start began sampling (sampler_head_start); 0: it did not. */
	uint64_t head_start_ns, head_start_real_ns;
	bool first_said;
	uint64_t prev_drain_begun; /* the start of the drain before the current one */
	struct profile *prof;
	struct symbolizer *sym;
	struct sampler *sampler;
	struct unwinder *unwinder;  /* the CFI tables' maps; NULL: frame pointers */
	struct region_feed *feed;   /* keeps them current */
	struct table_store *tables; /* their tables kept between runs; NULL: none */
	/* Stack copies waiting for the records before them, oldest first (see walk_copies). */
	struct cprof_copy **copies;
	size_t ncopies, copies_cap;
	struct block_pool *copy_pool; /* their memory, reused */
	uint64_t followed_until;      /* every record timed before this was applied */
	uint64_t followed_told;	      /* what the in-kernel walk was told of it */
	uint64_t bad_copies;	      /* malformed, or no memory to keep them: lost samples */
	uint64_t forks_late;	      /* children the fork hook missed, followed from the records */
	struct u64map *thread_names;  /* tid -> its comm (malloc'd), for copies from perf samples */
	int errors;		      /* entries that could not be added (allocation failures) */
	uint32_t *pids;		      /* -p targets, thread IDs replaced by their process */
	size_t npids;
	/* --server */
	struct upload *upload;
	struct cancel *cancel; /* one-shot: a signal ends the upload */
	struct batcher *batcher;
	struct spool *spool;
	struct delivery *delivery;
	/* Debug files from debuginfod servers (NULL: none asked for), and what ends their fetches.
	 */
	struct debuginfod *dbgd;
	struct debuginfod_queue *fetches;
	struct cancel *fetch_cancel;
	struct tls_client *fetch_tls;
	struct output *out;	    /* one-shot: the file or stdout */
	struct target *cmd;	    /* the command cprof started, or NULL */
	struct task_events *events; /* the kernel's process records; NULL: not followed */
	bool caught_up;		    /* this drain's records were read before its first entry */
	bool events_failed;	    /* reading them failed once: said so */
	bool cmd_done;		    /* it exited during the profile, with cmd_status */
	int cmd_status;
	/* Clocks, CLOCK_MONOTONIC ns: UINT64_MAX for a deadline that does not apply. */
	uint64_t start, deadline, next_drain, next_boundary;
	struct load_budget budget; /* what other users' files may cost: caps, and until when */
	struct summary_info base;  /* what the counters are read into: rate, CPUs, mode */
	/* Continuous mode */
	uint64_t interval_start;
	struct summary_info prev; /* counters at the last boundary (they are cumulative) */
	uint64_t intervals, empty_intervals, unbatched, samples, unnamed_samples, unmapped_samples;
	uint64_t function_start_samples;
	uint64_t line_samples[SYM_LINE_MAX];
};

static void walk_copies(struct run *r, uint64_t before);
static void on_process(void *ctx, uint32_t pid);

static void on_task_event(void *ctx, const struct task_event *ev)
{
	struct run *r = ctx;

	/* The kernel skips the hook where a BPF program or a bpf() call is under way. */
	if (task_event__process_fork(ev) && sampler__follow_late(r->sampler, ev->ppid, ev->pid) > 0)
		r->forks_late++;
	walk_copies(r, ev->time);
	task_feed__apply(r->sym, ev);
	if (r->feed)
		region_feed__apply(r->feed, ev);
}

/*
 * Tells the in-kernel walk how far the records are applied, which is how
 * long it keeps copying the samples of young processes (see YOUNG_NS):
 * coarsely, one map write per FOLLOWED_STEP_NS at most.
 */
static void tell_followed(struct run *r)
{
	if (!r->unwinder || !r->feed || !r->events || r->followed_until == UINT64_MAX ||
	    r->followed_until < r->followed_told + FOLLOWED_STEP_NS)
		return;
	if (unwinder__set_followed(r->unwinder, r->followed_until) == 0)
		r->followed_told = r->followed_until;
}

/* With -v, once: when the head start's first sample was taken (bench/run times it). */
static void say_first_sample(struct run *r)
{
	uint64_t first;

	if (r->first_said || !r->head_start_ns || !(first = sampler__head_start_first(r->sampler)))
		return;
	r->first_said = true;
	pr_debug("the first sample was taken at CLOCK_MONOTONIC %llu ns, %.1f ms after the "
		 "sampling events were opened, before the BPF program",
		 (unsigned long long)first,
		 first > r->head_start_ns ? (double)(first - r->head_start_ns) / 1e6 : 0.0);
}

/* The kernel's process records timed up to `until` (CLOCK_MONOTONIC ns), in time order. */
static void follow(struct run *r, uint64_t until)
{
	int err = 0;

	/*
	 * A copy is walked with the records timed before it applied, and none
	 * after: every sample taken before until is in its ring, and handed out
	 * now, before those records (a ring's reader wakes at half full). The
	 * records are read first, only queued: on_process looks for forks there.
	 */
	if (r->feed)
		region_feed__pick_up(r->feed);
	if (r->events)
		err = task_events__read(r->events, 0, on_task_event, r);
	sampler__consume(r->sampler, on_process, r, true);
	say_first_sample(r);
	if (r->events && err >= 0)
		err = task_events__read(r->events, until, on_task_event, r);
	if (until > r->followed_until)
		r->followed_until = until;
	walk_copies(r, r->followed_until);
	if (r->feed)
		region_feed__reap(r->feed, r->followed_until);
	tell_followed(r);
	if (err < 0 && !r->events_failed) {
		pr_warn("reading the kernel's process records failed: %s", strerror(-err));
		r->events_failed = true;
	}
}

/*
 * Before a drain resolves its first entry: the map sets have been flipped,
 * so every sample to resolve was taken before now, and every record timed
 * before now is in its ring RECORD_DELAY_MS later.
 */
static void catch_up(struct run *r)
{
	struct timespec delay = {0, RECORD_DELAY_MS * 1000000L};
	uint64_t now = clock__mono_ns();

	if (r->caught_up)
		return;
	r->caught_up = true;
	if (r->events)
		nanosleep(&delay, NULL);
	follow(r, now);
}

/*
 * A child whose fork record is queued, of a followed parent: the record
 * gives it its parent's regions and its exec's records its own, so a
 * snapshot of its maps now would be made only to be replaced (cprof's CPU
 * on bench/stacks' sqlite3, which stacks_run forks: 30.4 -> 28.3 ms).
 */
static bool forked_under_watch(struct run *r, uint32_t pid)
{
	uint32_t ppid;

	return r->events && task_events__fork_queued(r->events, pid, &ppid) &&
	       region_feed__tracked(r->feed, ppid);
}

static void on_process(void *ctx, uint32_t pid)
{
	struct run *r = ctx;

	symbolizer__note_process(r->sym, pid);
	if (r->feed && !forked_under_watch(r, pid))
		region_feed__note_process(r->feed, pid);
	if (r->batcher)
		batcher__note_process(r->batcher, pid);
}

static uint32_t lost_stack_frame(struct run *r, int err, int kernel)
{
	const char *what;

	if (err == -EEXIST)
		what = kernel ? "[kernel stack lost: stack map collision]"
			      : "[user stack lost: stack map collision]";
	else if (err == -ENOSPC)
		what = "[user stack lost: perf buffer full]";
	else
		what = kernel ? "[kernel stack lost: error]" : "[user stack lost: error]";
	return symbolizer__placeholder(r->sym, what, FRAME_LOST, kernel);
}

/* The root end of a walk that stopped before a thread's root: why. */
static uint32_t truncated_frame(struct run *r, uint32_t stop)
{
	char what[96];

	snprintf(what, sizeof(what), FRAME_TRUNCATED_PREFIX "%s]", stack_walk__stop_name(stop));
	return symbolizer__placeholder(r->sym, what, FRAME_TRUNCATED, 0);
}

static void count_walk(struct run *r, const struct sampler_entry *e)
{
	if (e->user_walked) {
		r->base.walked += e->count;
		r->base.walk_stops[e->user_stop < CPROF_STOP_MAX ? e->user_stop
								 : CPROF_STOP_BAD_CFI] += e->count;
	} else if (e->user_n && r->base.unwind_status == 0) {
		r->base.fp_user += e->count;
	}
}

/*
 * A kernel stack the program took on an event that also records callchains
 * (the head start's, sampler_head_start) begins with the kernel's context
 * marker, PERF_CONTEXT_KERNEL: not a frame. Returns how many lead the stack.
 */
static uint32_t context_markers(const uint64_t *ips, uint32_t n)
{
	uint32_t i = 0;

	while (i < n && ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
		i++;
	return i;
}

static void add_entry(struct run *r, const struct sampler_entry *e)
{
	uint32_t frames[MAX_FRAMES], n = 0; /* symbolizer frame ids, then the profile's */
	struct symbolizer_task task = {.pid = e->pid, .space = e->space, .comm = e->comm};
	struct profile_labels labels = {.pid = e->pid};
	const char *pname;

	uint32_t skip = context_markers(e->kern_ips, e->kern_n);

	/* Leaf first: the kernel part (if any) sits on top of the user part. */
	if (e->kern_n > skip) {
		if (symbolizer__kernel_frames(r->sym, e->kern_ips + skip, e->kern_n - skip,
					      frames + n))
			goto fail;
		n += e->kern_n - skip;
	} else if (e->kern_err) {
		frames[n++] = lost_stack_frame(r, e->kern_err, 1);
	}
	if (e->user_n) {
		if (symbolizer__user_frames(r->sym, &task, e->user_ips, e->user_n, frames + n))
			goto fail;
		n += e->user_n;
	} else if (e->user_err) {
		frames[n++] = lost_stack_frame(r, e->user_err, 0);
	} else if (!e->comm[0] && symbolizer__user_frames(r->sym, &task, NULL, 0, NULL)) {
		/* A perf copy carries no name: its process, looked up, names it (swapper for 0). */
		goto fail;
	}
	count_walk(r, e);
	if (e->user_walked && e->user_n && e->user_stop != CPROF_STOP_NONE)
		frames[n++] = truncated_frame(r, e->user_stop);
	if (n == 0)
		frames[n++] = symbolizer__placeholder(r->sym, "[no stack]", FRAME_LOST, 0);

	pname = symbolizer__process_name(r->sym, &task);
	labels.comm = pname ? pname : e->comm;
	labels.thread_name = e->comm[0] ? e->comm : labels.comm;
	labels.ns_pid = symbolizer__ns_pid(r->sym, &task);
	if (r->o->per_thread)
		labels.tid = e->tid;
	/* A frame id 0 (no memory for a placeholder) is refused there. */
	if (profile__add_symbolized(r->prof, r->sym, frames, n, frames) ||
	    profile__add_sample(r->prof, frames, n, &labels, e->count))
		goto fail;
	return;
fail:
	r->errors++;
}

static void on_entry(void *ctx, const struct sampler_entry *e)
{
	struct run *r = ctx;

	catch_up(r);
	add_entry(r, e);
}

/* A stack copy, walked with the regions of the moment it was taken. */
static void walk_copy(struct run *r, const struct cprof_copy *c)
{
	struct sampler_entry e = {
		.pid = c->pid,
		.tid = c->tid,
		.space = c->space,
		.count = 1,
		.kern_ips = (const uint64_t *)c->kern,
		.kern_n = c->kern_bytes / 8 < CPROF_MAX_STACK_DEPTH ? c->kern_bytes / 8
								    : CPROF_MAX_STACK_DEPTH,
		.user_walked = true,
	};
	struct walk_result w;

	memcpy(e.comm, c->comm, CPROF_COMM_LEN);
	/* Without user registers pc 0 would be walked and shown as [unknown]. */
	if (c->flags & CPROF_COPY_NO_USER) {
		e.user_walked = false;
		add_entry(r, &e);
		return;
	}
	e.space = region_feed__space_of(r->feed, c);
	region_feed__walk(r->feed, c, &w);
	e.user_ips = w.ips;
	e.user_n = w.n;
	e.user_stop = w.stop;
	add_entry(r, &e);
}

static void free_copy(struct run *r, struct cprof_copy *c)
{
	block_pool__put(r->copy_pool, c, offsetof(struct cprof_copy, stack) + c->stack_bytes);
}

/*
 * Walks the copies taken before `before`: every record timed before them
 * has been applied, so their processes' regions are those they ran with.
 */
static void walk_copies(struct run *r, uint64_t before)
{
	size_t i;

	for (i = 0; i < r->ncopies && r->copies[i]->time < before; i++) {
		walk_copy(r, r->copies[i]);
		free_copy(r, r->copies[i]);
	}
	if (!i)
		return;
	memmove(r->copies, r->copies + i, (r->ncopies - i) * sizeof(*r->copies));
	r->ncopies -= i;
}

/*
 * A perf sample carries no comm: a thread's, read once while it lives (a
 * thread renamed later keeps its first name). NULL if it cannot be kept.
 */
static const char *thread_name(struct run *r, uint32_t tid)
{
	char *name;
	uint64_t v;

	if (!r->thread_names && !(r->thread_names = u64map__new()))
		return NULL;
	if (u64map__get(r->thread_names, tid, &v))
		return (const char *)(uintptr_t)v;
	name = calloc(1, CPROF_COMM_LEN + 1);
	if (!name)
		return NULL;
	if (procfs__comm(tid, name, CPROF_COMM_LEN + 1))
		name[0] = '\0';
	if (u64map__set(r->thread_names, tid, (uintptr_t)name)) {
		free(name);
		return NULL;
	}
	return name;
}

static void free_thread_names(struct run *r)
{
	uint64_t tid, v;
	size_t pos = 0;

	while (r->thread_names && u64map__next(r->thread_names, &pos, &tid, &v))
		free((void *)(uintptr_t)v);
	u64map__free(r->thread_names);
}

/* A stack copy from the sampler: queued in time order until its records are in. */
static void on_copy(void *ctx, const void *data, uint32_t size)
{
	const size_t head = offsetof(struct cprof_copy, stack);
	struct run *r = ctx;
	struct cprof_copy *c, **tmp;
	const char *name;
	uint32_t bytes;
	size_t i;

	memcpy(&bytes, (const char *)data + offsetof(struct cprof_copy, stack_bytes),
	       sizeof(bytes));
	if (bytes > CPROF_COPY_STACK || bytes > size - head || !r->feed) {
		r->bad_copies++;
		return;
	}
	if (r->ncopies == r->copies_cap) {
		tmp = realloc(r->copies, (r->copies_cap ? 2 * r->copies_cap : 64) * sizeof(*tmp));
		if (!tmp) {
			r->bad_copies++;
			return;
		}
		r->copies = tmp;
		r->copies_cap = r->copies_cap ? 2 * r->copies_cap : 64;
	}
	if (!r->copy_pool &&
	    block_pool__new(head + CPROF_COPY_STACK, 0, COPIES_KEPT, &r->copy_pool)) {
		r->bad_copies++;
		return;
	}
	c = block_pool__get(r->copy_pool, head + bytes);
	if (!c) {
		r->bad_copies++;
		return;
	}
	memcpy(c, data, head + bytes);
	/* A process's main thread is named as the process, in the space of the sample. */
	if ((c->flags & CPROF_COPY_FROM_PERF) && c->tid != c->pid &&
	    (name = thread_name(r, c->tid)))
		memcpy(c->comm, name, CPROF_COMM_LEN);
	/* Each CPU's buffer is in order, not the CPUs together. */
	for (i = r->ncopies; i > 0 && r->copies[i - 1]->time > c->time; i--)
		;
	memmove(r->copies + i + 1, r->copies + i, (r->ncopies - i) * sizeof(*r->copies));
	r->copies[i] = c;
	r->ncopies++;
}

static int drain(struct run *r)
{
	uint64_t begun = clock__mono_ns();
	int err;

	r->caught_up = false;
	err = sampler__drain(r->sampler, on_entry, r);
	/* Before spaces are forgotten: the copies whose records are in. */
	catch_up(r);
	/*
	 * Not this drain's start: a process is still sampled in its exit path
	 * after the kernel's exit record ended its space, and such a sample can
	 * land in the set that fills after this drain's flip. Its space goes
	 * one drain later, when no sample of it can be left.
	 */
	symbolizer__new_interval(r->sym, r->prev_drain_begun);
	r->prev_drain_begun = begun;
	sampler__prune_targets(r->sampler);
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

/* The flame graph, titled with what was profiled, where and how. */
static int write_svg(const struct session_opts *o, struct profile *prof,
		     const struct summary_info *info, struct output *out)
{
	const struct profile_meta *pm = profile__meta(prof);
	struct svg_meta meta = {.time_ns = pm->time_ns,
				.duration_ns = pm->duration_ns,
				.hz = pm->hz,
				.lost_known = true,
				.lost = summary__lost_samples(info)};
	struct sbuf target = {0};
	struct utsname uts;
	char *svg = NULL;
	size_t len = 0, i;
	int err;

	for (i = 0; o->command && o->command[i]; i++)
		sbuf__printf(&target, "%s%s", i ? " " : "", o->command[i]);
	if (o->npids)
		sbuf__str(&target, o->npids > 1 ? "PIDs " : "PID ");
	for (i = 0; i < o->npids; i++)
		sbuf__printf(&target, "%s%u", i ? ", " : "", o->pids[i]);
	if (!o->command && !o->npids)
		sbuf__str(&target, "the whole system");
	sbuf__add(&target, "", 1);
	meta.target = target.err ? NULL : target.data;
	if (uname(&uts) == 0) {
		meta.host = uts.nodename;
		meta.kernel = uts.release;
	}
	err = svg__encode(prof, &o->svg, &meta, &svg, &len);
	if (!err)
		err = output__write(out, svg, len);
	if (!err)
		fprintf(stderr, "cprof: wrote %s%s (flame graph, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the flame graph to ",
			output__path(out), len);
	free(svg);
	free(target.data);
	return err;
}

static int write_pprof(struct profile *prof, struct output *out)
{
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	int err;

	err = pprof__encode_gz(prof, &gz, &gz_len);
	if (err) {
		pr_err("cannot encode the pprof profile: %s", strerror(-err));
		return err;
	}
	err = output__write(out, gz, gz_len);
	if (!err)
		fprintf(stderr, "cprof: wrote %s%s (pprof, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the profile to ",
			output__path(out), gz_len);
	free(gz);
	return err;
}

static int write_profile(const struct session_opts *o, struct profile *prof,
			 const struct summary_info *info, struct output *out)
{
	char *text = NULL;
	size_t text_len = 0;
	int err;

	if (o->format == FORMAT_SVG)
		return write_svg(o, prof, info, out);
	if (o->format == FORMAT_PPROF)
		return write_pprof(prof, out);
	err = folded__encode(prof, &text, &text_len);
	if (err) {
		pr_err("cannot encode the folded profile: %s", strerror(-err));
		return err;
	}
	err = output__write(out, text, text_len);
	free(text);
	return err;
}

/*
 * The upload failed and -o draws a flame graph: the profile itself is kept
 * too, as the server would have had it, beside the graph (app.svg:
 * app.pb.gz; stdout: cprof.pb.gz).
 */
static void keep_pprof(const struct session_opts *o, struct profile *prof)
{
	size_t n = strlen(o->output);
	struct output *out = NULL;
	char path[PATH_MAX];

	if (!strcmp(o->output, "-"))
		snprintf(path, sizeof(path), "cprof.pb.gz");
	else if (n > 4 && !strcasecmp(o->output + n - 4, ".svg"))
		snprintf(path, sizeof(path), "%.*s.pb.gz", (int)(n - 4), o->output);
	else
		snprintf(path, sizeof(path), "%s.pb.gz", o->output);
	if (output__open(path, true, &out) == 0)
		write_pprof(prof, out);
	else
		pr_err("cannot keep the profile in %s", path);
	output__free(out);
}

/*
 * One-shot upload. Whatever the server does, the profile is kept: written
 * to the output file when the upload fails, and also when -o asked for it.
 */
static int upload_or_save(struct run *r, const struct summary_info *info, struct output *out)
{
	enum upload_result res = UPLOAD_REJECTED;
	struct batch *b = NULL;
	int err;

	err = batcher__make(r->batcher, r->prof, &b);
	if (!err && !b->nseries) {
		fprintf(stderr, "cprof: the profile has no samples: nothing to upload\n");
		res = UPLOAD_OK;
	} else if (!err) {
		signals__cancel_upload_with(r->cancel);
		res = delivery__send_now(r->upload, b, ONESHOT_ATTEMPTS, r->cancel);
		signals__cancel_upload_with(NULL);
		if (res == UPLOAD_OK)
			fprintf(stderr, "cprof: uploaded the profile to %s (%s, %zu series)\n",
				upload__url(r->upload),
				upload__protocol_name(upload__protocol(r->upload)), b->nseries);
		else
			pr_err("the upload to %s failed: %s", upload__url(r->upload),
			       res == UPLOAD_CANCELED ? "interrupted"
						      : upload__last_error(r->upload));
	}
	batch__free(b);
	if (res == UPLOAD_OK && !r->o->output_given)
		return 0;
	err = write_profile(r->o, r->prof, info, out);
	if (res != UPLOAD_OK && r->o->format != FORMAT_PPROF)
		keep_pprof(r->o, r->prof);
	if (res != UPLOAD_OK)
		return EXIT_UPLOAD_FAILED;
	return err ? 1 : 0;
}

/* The run's counters now, beside what r->base says of the run. */
static void read_info(struct run *r, struct summary_info *in)
{
	uint64_t rate;

	*in = r->base;
	if (procfs__perf_max_sample_rate(&rate) == 0)
		in->kernel_max_rate = rate;
	in->stats_unread = sampler__read_stats(r->sampler, in->stats) != 0;
	in->lost_notifications = sampler__lost_notifications(r->sampler);
	in->missing_stacks = sampler__missing_stacks(r->sampler);
	in->lost_spills = sampler__lost_spills(r->sampler) + r->bad_copies;
	sampler__skipped(r->sampler, &in->skipped_samples, &in->skipped_hooks);
	in->forks_late = r->forks_late;
	in->kernel_fallbacks = kernel_caps__fallbacks();
	in->max_stack = r->o->max_stack;
	in->kernel_as = kernel_caps__emulated();
	in->symtabs_refused = r->budget.symtabs_refused;
	in->symtabs_abandoned = r->budget.symtabs_abandoned;
	in->symtabs_over_held = r->budget.symtabs_over_held;
	in->cfi_refused = r->budget.cfi_refused;
	in->cfi_abandoned = r->budget.cfi_abandoned;
	in->cfi_left_behind = r->budget.cfi_left_behind;
	in->files_cut_short = sigbus__faults();
	if (r->feed) {
		struct region_feed_stats fs;

		region_feed__stats(r->feed, &fs);
		in->regions_over_cap = fs.regions.regions_over_cap;
	}
	memcpy(in->sym, symbolizer__stats(r->sym), sizeof(in->sym));
	symbolizer__unopened_who(r->sym, in->unopened_who, sizeof(in->unopened_who));
	fuse_file__counts(&in->fuse);
	if (r->fetches) {
		in->debuginfod = true;
		debuginfod_queue__counts(r->fetches, &in->fetched);
	}
	if (r->events) {
		struct task_events_stats st;

		task_events__stats(r->events, &st);
		in->followed = true;
		in->records = st.records;
		in->records_lost = st.lost;
		in->records_broken = st.malformed;
		in->records_late = st.late;
	}
	if (r->tables) {
		struct table_store_stats ts;

		table_store__stats(r->tables, &ts);
		in->store_capped = ts.capped;
	}
}

/* The counters are cumulative; an interval's profile reports its own share. */
static struct summary_info since(const struct summary_info *cur, const struct summary_info *prev)
{
	struct summary_info d = *cur;
	int i;

	for (i = 0; i < CPROF_STAT_MAX; i++)
		d.stats[i] -= prev->stats[i];
	/* A process first counted as gone can be read after all, a moment later. */
	for (i = 0; i < SYM_STAT_MAX; i++)
		d.sym[i] = cur->sym[i] > prev->sym[i] ? cur->sym[i] - prev->sym[i] : 0;
	d.lost_notifications -= prev->lost_notifications;
	d.missing_stacks -= prev->missing_stacks;
	d.lost_spills -= prev->lost_spills;
	d.records -= prev->records;
	d.records_lost -= prev->records_lost;
	d.records_broken -= prev->records_broken;
	d.records_late -= prev->records_late;
	d.skipped_samples -= prev->skipped_samples;
	d.skipped_hooks -= prev->skipped_hooks;
	d.forks_late -= prev->forks_late;
	d.symtabs_refused -= prev->symtabs_refused;
	d.symtabs_abandoned -= prev->symtabs_abandoned;
	d.symtabs_over_held -= prev->symtabs_over_held;
	d.cfi_refused -= prev->cfi_refused;
	d.cfi_abandoned -= prev->cfi_abandoned;
	d.cfi_left_behind -= prev->cfi_left_behind;
	d.files_cut_short -= prev->files_cut_short;
	d.regions_over_cap -= prev->regions_over_cap;
	d.walked -= prev->walked;
	for (i = 0; i < CPROF_STOP_MAX; i++)
		d.walk_stops[i] -= prev->walk_stops[i];
	d.fp_user -= prev->fp_user;
	d.store_capped -= prev->store_capped;
	return d;
}

/*
 * Continuous mode: the interval ends at now (the maps were just drained).
 * Its profile goes to the delivery thread; the next begins at the same
 * instant. Only running out of memory stops the run.
 */
static int end_interval(struct run *r, uint64_t now, bool last)
{
	struct summary_info cur, delta;
	struct profile_meta meta;
	struct profile *next;
	struct batch *b = NULL;

	/* Before the counters are read: a kernel symbol gone meanwhile counts as unknown. */
	profile__finish_frames(r->prof, r->sym, last);
	read_info(r, &cur);
	delta = since(&cur, &r->prev);
	delta.interval = true;
	delta.duration_ns = now - r->interval_start;
	delta.unnamed_samples = summary__unnamed_samples(r->prof, &delta.function_start_samples);
	r->unnamed_samples += delta.unnamed_samples;
	r->function_start_samples += delta.function_start_samples;
	summary__line_samples(r->prof, delta.line_samples);
	for (int i = 0; i < SYM_LINE_MAX; i++)
		r->line_samples[i] += delta.line_samples[i];
	delta.unmapped_samples =
		summary__unmapped_samples(r->prof, delta.unmapped_who, sizeof(delta.unmapped_who));
	r->unmapped_samples += delta.unmapped_samples;
	delta.truncated_samples = summary__truncated_samples(r->prof, delta.truncated_who,
							     sizeof(delta.truncated_who));
	r->prev = cur;
	profile__set_duration(r->prof, delta.duration_ns);
	summary__add_comments(r->prof, &delta);
	r->intervals++;
	r->samples += profile__total_count(r->prof);
	if (batcher__make(r->batcher, r->prof, &b)) {
		r->unbatched++;
	} else if (!b->nseries) {
		r->empty_intervals++;
		batch__free(b);
	} else {
		pr_info("interval %" PRIu64 ": %" PRIu64
			" samples in %zu series, %zu bytes: queued",
			r->intervals, profile__total_count(r->prof), b->nseries, batch__size(b));
		delivery__submit(r->delivery, b);
	}
	if (last)
		return 0;
	meta = *profile__meta(r->prof);
	meta.time_ns += delta.duration_ns;
	meta.duration_ns = 0;
	next = profile__new(&meta);
	if (!next) {
		pr_err("out of memory starting a new interval");
		return -ENOMEM;
	}
	profile__free(r->prof);
	r->prof = next;
	r->interval_start = now;
	return 0;
}

/* The end of a continuous run: what was sampled, and where it all went. */
static int finish_continuous(struct run *r, const struct summary_info *total)
{
	struct delivery_stats st;
	bool complete;

	fprintf(stderr,
		"cprof: %" PRIu64 " %s in %.2f s at %" PRIu64 " Hz on %d %s, %" PRIu64
		" %s of up to %.2f s\n",
		r->samples, plural(r->samples, "sample", "samples"),
		(double)total->duration_ns / 1e9, total->hz, total->ncpus,
		plural((uint64_t)total->ncpus, "CPU", "CPUs"), r->intervals,
		plural(r->intervals, "interval", "intervals"), (double)r->o->interval_ms / 1e3);
	summary__print_losses(stderr, r->samples, total);
	delivery__finish(r->delivery, &st);
	fprintf(stderr,
		"cprof: upload to %s (%s): %" PRIu64 " %s to send, %" PRIu64 " sent (%" PRIu64
		" after a stay in the spool), %" PRIu64 " spooled, %" PRIu64
		" still in the spool %s, %" PRIu64 " refused, %" PRIu64 " dropped\n",
		upload__url(r->upload), upload__protocol_name(upload__protocol(r->upload)),
		st.submitted, plural(st.submitted, "interval", "intervals"), st.sent,
		st.sent_from_spool, st.spooled, st.in_spool, spool__dir(r->spool), st.rejected,
		st.dropped);
	if (st.found_in_spool)
		fprintf(stderr,
			"cprof: %" PRIu64
			" of those sent were left in the spool by an earlier run\n",
			st.found_in_spool);
	if (st.not_ours)
		fprintf(stderr,
			"cprof: %" PRIu64 " %s in the spool %s %s not a regular file of uid %u:"
			" left there, not sent\n",
			st.not_ours, plural(st.not_ours, "entry", "entries"), spool__dir(r->spool),
			plural(st.not_ours, "was", "were"), (unsigned)geteuid());
	if (r->empty_intervals)
		fprintf(stderr, "cprof: %" PRIu64 " %s no samples: nothing to send\n",
			r->empty_intervals,
			plural(r->empty_intervals, "interval had", "intervals had"));
	if (r->unbatched)
		fprintf(stderr,
			"cprof: %" PRIu64 " %s not be prepared for upload (out of memory)\n",
			r->unbatched, plural(r->unbatched, "interval could", "intervals could"));
	complete = !st.in_spool && !st.rejected && !st.dropped && !st.not_ours && !r->unbatched;
	return complete ? 0 : EXIT_UPLOAD_FAILED;
}

/* What Pyroscope lists the profile under: the command, the process, or the host. */
static void service_name(const struct run *r, char *buf, size_t size)
{
	const char *slash;

	if (r->o->command) {
		slash = strrchr(r->o->command[0], '/');
		snprintf(buf, size, "%s", slash ? slash + 1 : r->o->command[0]);
	} else if (r->npids) {
		if (procfs__comm(r->pids[0], buf, size))
			snprintf(buf, size, "%u", r->pids[0]);
	} else {
		snprintf(buf, size, "host");
	}
}

static int setup_upload(struct run *r)
{
	const struct session_opts *o = r->o;
	char service[256];
	int err;

	service_name(r, service, sizeof(service));
	err = upload__new(o->upload, &r->upload);
	if (err)
		return err;
	/* Whole-system mode: a series per process. */
	err = batcher__new(service, o->labels, !o->npids && !o->command, &r->batcher);
	if (err) {
		pr_err("cannot set up the upload: %s", strerror(-err));
		return err;
	}
	if (o->interval_ms)
		return spool__open(o->spool_dir, o->spool_max_bytes, &r->spool);
	err = cancel__new(&r->cancel);
	if (err)
		pr_err("cannot set up the upload: %s", strerror(-err));
	return err;
}

/* -p targets: each must exist; a thread ID stands for its process. */
static int check_pids(struct run *r)
{
	const struct session_opts *o = r->o;
	char comm[64];
	uint32_t tgid;
	size_t i;

	r->npids = o->npids;
	r->pids = calloc(o->npids ? o->npids : 1, sizeof(*r->pids));
	if (!r->pids) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	memcpy(r->pids, o->pids, o->npids * sizeof(*r->pids));
	for (i = 0; i < r->npids; i++) {
		if (!procfs__pid_exists(r->pids[i])) {
			pr_err("no such process: %u", r->pids[i]);
			return -ESRCH;
		}
		/* Samples are matched by process. */
		if (procfs__tgid(r->pids[i], &tgid) == 0 && tgid != r->pids[i]) {
			pr_warn("%u is a thread of process %u: profiling process %u", r->pids[i],
				tgid, tgid);
			r->pids[i] = tgid;
		}
		if (procfs__is_kernel_thread(r->pids[i]))
			pr_warn("%u (%s) is a kernel thread: it has no user memory, so its samples "
				"are kernel stacks only",
				r->pids[i],
				procfs__comm(r->pids[i], comm, sizeof(comm)) ? "?" : comm);
	}
	return 0;
}

/* Where the profile goes, opened before sampling so that a bad path fails at once. */
static int open_destinations(struct run *r)
{
	const struct session_opts *o = r->o;
	int err;

	/* Continuous mode writes no file: what the server misses waits in the spool. */
	if (!o->interval_ms) {
		err = output__open(o->output, o->format == FORMAT_PPROF, &r->out);
		if (err)
			return err;
		signals__remove_on_abort(output__temporary_path(r->out));
	}
	return o->upload ? setup_upload(r) : 0;
}

/*
 * The kernel's process records, opened before the BPF hooks are attached
 * (so every fork and exec they stamp has its record) and after the command
 * was forked (its exec is what matters; cprof's fork of itself is not).
 */
static int open_task_events(struct run *r)
{
	const struct session_opts *o = r->o;
	uint32_t cmd;
	int err;

	if (task_events__open(RECORD_PAGES, &r->events)) {
		pr_warn("processes are not followed as they start: each is read from /proc when "
			"first sampled, so exec'd and short-lived ones may show [unknown] frames");
		return 0;
	}
	symbolizer__follow(r->sym);
	if (r->npids)
		err = symbolizer__set_scope(r->sym, r->pids, r->npids, o->follow_children);
	else if (r->cmd && (cmd = (uint32_t)target__pid(r->cmd)))
		err = symbolizer__set_scope(r->sym, &cmd, 1, o->follow_children);
	else
		err = 0;
	if (err)
		pr_err("out of memory");
	return err;
}

/* The CFI tables' maps, unless frame pointers were asked for; NULL when they cannot be. */
static struct unwinder *open_unwinder(struct run *r)
{
	struct unwinder_opts uo = {0};
	int err;

	r->base.unwind_status = -ENOENT;
	if (r->o->frame_pointers || r->o->stack_copies)
		return NULL;
	/*
	 * A profile of some processes starts with rows for a few programs' tables
	 * (python3 and its libraries: 92,000) and grows the map if they need more;
	 * a whole-system one makes room for everything at once.
	 */
	if (r->o->npids || r->o->command)
		uo.first_rows = FIRST_ROWS;
	uo.max_depth = r->o->max_stack;
	err = unwinder__new(&uo, &r->unwinder);
	r->base.unwind_status = err;
	return r->unwinder;
}

/*
 * The tables kept between runs (src/store/table_store.h), unless asked
 * for none; without them, tables are built as ever.
 */
static struct table_store *open_tables(const struct session_opts *o)
{
	char buf[PATH_MAX];
	const char *dir = o->cache_dir ? o->cache_dir : table_store__default_dir(buf, sizeof(buf));
	struct table_store *s = NULL;
	int err;

	if (!*dir)
		return NULL;
	err = table_store__open(dir, TABLE_STORE_BYTES, &s);
	/* The default may well be out of reach (a read-only home): said with -v only. */
	if (err && o->cache_dir)
		pr_warn("--cache-dir %s: cannot keep unwind tables there (%s): each run builds "
			"them",
			dir,
			err == -EPERM ? "not a directory of this user's that only it may write"
				      : strerror(-err));
	return s;
}

/*
 * A user's file can take seconds to build a table for: built on threads of
 * their own, or on the loop (as before) if they cannot start.
 */
static void build_tables_off_loop(struct run *r)
{
	int err = region_feed__load_off_loop(r->feed);

	if (err)
		pr_warn("unwind tables are built on the sampling loop: %s", strerror(-err));
}

/* Every sample comes with a copy of its user stack, walked here with the tables. */
static int start_copy_walks(struct run *r)
{
	unwinder__free(r->unwinder);
	r->unwinder = NULL;
	r->base.copy_walks = true;
	if (region_feed__new(NULL, r->sampler, r->tables, &r->feed)) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	region_feed__set_budget(r->feed, &r->budget);
	build_tables_off_loop(r);
	if (!r->o->npids && !r->o->command)
		region_feed__follow_all(r->feed);
	if (r->base.unwind_status == -ENOENT)
		pr_info("user stacks: walked in user space from stack copies (--stack-copies)");
	else
		pr_info("user stacks: walked in user space from stack copies: the in-kernel walk "
			"cannot run here: %s",
			strerror(-r->base.unwind_status));
	return 0;
}

/*
 * Says how user stacks are walked; with the tables, starts keeping them
 * current. The store keeps the files' symbols too, however stacks are walked.
 */
static int start_unwinding(struct run *r)
{
	int err;

	r->tables = open_tables(r->o);
	symbolizer__keep_symbols_in(r->sym, r->tables);
	symbolizer__set_budget(r->sym, &r->budget);
	if (r->unwinder)
		r->base.unwind_status = sampler__unwind_status(r->sampler);
	if (sampler__copies(r->sampler))
		return start_copy_walks(r);
	if (r->base.unwind_status) {
		unwinder__free(r->unwinder);
		r->unwinder = NULL;
		if (r->base.unwind_status == -ENOENT)
			pr_info("user stacks: frame pointers only (--frame-pointers)");
		else
			pr_info("user stacks: frame pointers only: the unwinder cannot run here: "
				"%s",
				strerror(-r->base.unwind_status));
		return 0;
	}
	err = region_feed__new(r->unwinder, r->sampler, r->tables, &r->feed);
	if (err) {
		pr_err("out of memory");
		return err;
	}
	region_feed__set_budget(r->feed, &r->budget);
	build_tables_off_loop(r);
	if (!r->o->npids && !r->o->command)
		region_feed__follow_all(r->feed);
	pr_info("user stacks: walked in the kernel with the CFI tables (.eh_frame)");
	return 0;
}

/*
 * A whole-system run samples from launch, tens of milliseconds before its
 * program is loaded (sampler_head_start): walking user stacks needs the
 * unwinder, and a PID filter the program.
 */
static void open_head_start(struct run *r, struct sampler_head_start *head)
{
	const struct session_opts *o = r->o;
	int err;

	head->map_fd = -1;
	head->reader = NULL;
	if (o->npids || o->command || o->frame_pointers || o->stack_copies)
		return;
	r->head_start_ns = clock__mono_ns();
	r->head_start_real_ns = clock__real_ns();
	err = sampler__open_head_start(o->hz, head);
	if (err) {
		r->head_start_ns = r->head_start_real_ns = 0;
		pr_debug("sampling starts with the BPF program: cannot open the sampling events "
			 "early: %s",
			 strerror(-err));
		return;
	}
}

/*
 * https:// debuginfod servers are checked against the system's CAs (or
 * SSL_CERT_FILE, SSL_CERT_DIR); --ca-file and the rest are --server's.
 */
static const struct tls_client *fetch_tls(struct run *r, const char *urls)
{
	struct tls_opts t = {.ca_file = getenv("SSL_CERT_FILE"), .ca_dir = getenv("SSL_CERT_DIR")};
	char why[256];

	if (!strstr(urls, "https://"))
		return NULL;
	if (t.ca_file && !*t.ca_file)
		t.ca_file = NULL;
	if (t.ca_dir && (!*t.ca_dir || t.ca_file))
		t.ca_dir = NULL;
	if (tls_client__new(&t, &r->fetch_tls, why, sizeof(why)))
		pr_warn("https:// debuginfod servers cannot be used: %s", why);
	return r->fetch_tls;
}

/*
 * Stripped files' debug files from the servers DEBUGINFOD_URLS names,
 * fetched while sampling goes on. Without them, frames stay module+offset:
 * a warning, not a failure.
 */
static void start_fetches(struct run *r)
{
	struct debuginfod_opts d = *r->o->debuginfod;
	int err;

	err = cancel__new(&r->fetch_cancel);
	if (!err) {
		d.cancel = r->fetch_cancel;
		d.tls = fetch_tls(r, d.urls);
		err = debuginfod__new(&d, &r->dbgd);
	}
	if (!err && debuginfod__enabled(r->dbgd))
		err = debuginfod_queue__new(r->dbgd, &r->fetches);
	if (err) {
		pr_warn("debug files will not be fetched from debuginfod: %s", strerror(-err));
		return;
	}
	if (r->fetches)
		symbolizer__set_debuginfod(r->sym, r->fetches,
					   r->o->debuginfod_wait_ms * 1000000ull);
}

/* Fetches still under way end now: their files are not waited for any more. */
static void stop_fetches(struct run *r)
{
	if (r->fetch_cancel)
		cancel__trigger(r->fetch_cancel);
	debuginfod_queue__free(r->fetches);
	r->fetches = NULL;
}

/* The profile, the symbolizer and the loaded BPF program with its targets. */
static int prepare(struct run *r)
{
	const struct session_opts *o = r->o;
	struct sampler_opts so = {
		.hz = o->hz,
		.filter_pids = o->npids > 0 || o->command,
		.follow_children = o->follow_children,
		.include_idle = o->include_idle,
		.stack_entries = o->map_entries,
		.count_entries = o->map_entries,
	};
	struct profile_meta meta = {.hz = o->hz,
				    .period_ns = 1000000000ull / o->hz,
				    .whole_system = !o->npids && !o->command,
				    .main_pid = r->npids == 1 ? r->pids[0] : 0};
	struct sampler_head_start head;
	size_t i;
	int err;

	open_head_start(r, &head);
	so.head_start = &head;
	meta.time_ns = clock__real_ns();
	r->prof = profile__new(&meta);
	if (!r->prof || symbolizer__new(&r->sym) ||
	    (o->debug_dir && symbolizer__set_debug_dir(r->sym, o->debug_dir))) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	symbolizer__ask_jvms(r->sym, o->jvm_perf_map);
	/*
	 * Lines are for pprof (a file, or what is uploaded); inlined functions,
	 * read with them, for every format. Folded stacks and SVG have no lines.
	 */
	r->base.lines = !o->no_lines && (o->format == FORMAT_PPROF || o->upload || o->inlines);
	symbolizer__set_lines(r->sym, r->base.lines);
	symbolizer__set_inlines(r->sym, o->inlines);
	r->base.inlines = r->base.lines && o->inlines;
	/*
	 * A load notices a signal itself: it runs on the symbol loader's
	 * thread, or on the main loop (CFI tables), which ends the run.
	 */
	r->budget.stop_requested = signals__stop_requested;
	/* Symbols load off the sampling loop: no file a user runs holds up records and drains. */
	err = symbolizer__load_off_loop(r->sym);
	if (err)
		pr_warn("symbols are loaded on the sampling loop: no thread for them: %s",
			strerror(-err));
	if (o->debuginfod)
		start_fetches(r);
	stack_walk__set_max_depth(o->max_stack);
	so.unwinder = open_unwinder(r);
	/* Without the unwinder's maps, the walk is done in user space: stack copies. */
	so.copy_samples = o->stack_copies || (!o->frame_pointers && !so.unwinder);
	so.on_copy = on_copy;
	so.copy_ctx = r;
	err = sampler__new(&so, &r->sampler);
	sampler__close_head_start(&head);
	if (err)
		return err;
	err = start_unwinding(r);
	if (err)
		return err;
	for (i = 0; i < r->npids; i++) {
		err = sampler__add_target(r->sampler, r->pids[i]);
		if (err)
			return err;
		on_process(r, r->pids[i]);
	}
	if (o->command) {
		err = target__spawn(o->command, &r->cmd);
		if (!err)
			err = sampler__add_command(r->sampler, (uint32_t)target__pid(r->cmd));
		if (err)
			return err;
		/* The command's program is the profile's main binary (pprof's "File:"). */
		profile__set_main_pid(r->prof, (uint32_t)target__pid(r->cmd));
		/* Tracked from its fork, so its exec's records build its regions. */
		if (r->feed)
			region_feed__note_command(r->feed, (uint32_t)target__pid(r->cmd));
	}
	return open_task_events(r);
}

/*
 * Samples taken in the kernel find their user registers with two facts of
 * the kernel's BTF (some 3 ms to read, unless the table store kept them):
 * after sampling has begun, which they do not delay; until then, and
 * without BTF, frame pointers.
 */
static void find_user_registers(struct run *r)
{
	struct kernel_btf_facts k;
	/* A kernel emulated without BTF has none to read (kernel_caps.h). */
	int err = kernel_caps__has(KCAP_VMLINUX_BTF) ? kernel_facts__read(r->tables, &k) : -ENOENT;

	if (!err)
		err = unwinder__set_task_regs(r->unwinder, k.task_stack_off, k.pt_regs_size);
	/* Without them, the walk by file (if loaded) finds no file: the region sets only. */
	if (!err && unwinder__set_file_offs(r->unwinder, &k.files))
		pr_debug("the walk by file: no offsets of a mapping's file in the kernel's BTF");
	if (!err)
		return;
	kernel_caps__fell_back(KCAP_VMLINUX_BTF);
	pr_info("user stacks of samples taken in the kernel: by frame pointers (the kernel's "
		"BTF: %s)",
		strerror(-err));
}

/* Sampling begins, then the command is let go. Returns an exit code: 0 to go on. */
static int start(struct run *r)
{
	const struct session_opts *o = r->o;

	if (sampler__start(r->sampler))
		return 1;
	/* The profile begins with the first samples, the head start's if it had one. */
	r->start = r->head_start_ns ? r->head_start_ns : clock__mono_ns();
	profile__set_time(r->prof, r->head_start_ns ? r->head_start_real_ns : clock__real_ns());
	r->base.ncpus = sampler__cpu_count(r->sampler);
	pr_info("sampling started at %u Hz on %d CPUs", o->hz, r->base.ncpus);
	if (r->unwinder)
		find_user_registers(r);
	r->deadline = o->duration_ms ? r->start + o->duration_ms * 1000000ull : UINT64_MAX;
	/* Loads, and debug files' CRCs, give way to -d, with room for the last drain. */
	if (o->duration_ms)
		load_budget__end_by(&r->budget, r->deadline + LOAD_GRACE_MS * 1000000ull);
	r->next_drain = r->start + DRAIN_INTERVAL_MS * 1000000ull;
	r->next_boundary = UINT64_MAX;
	if (o->interval_ms) {
		if (delivery__start(r->upload, r->spool, CONTINUOUS_ATTEMPTS, o->spool_max_bytes,
				    &r->delivery))
			return 1;
		r->interval_start = r->start;
		r->prev = r->base;
		r->next_boundary = r->start + o->interval_ms * 1000000ull;
	}
	if (r->cmd && target__release(r->cmd))
		return 127;
	return 0;
}

/* How long to wait for notifications: never past the next deadline. */
static int poll_timeout(const struct run *r, uint64_t now)
{
	uint64_t next = r->deadline < r->next_boundary ? r->deadline : r->next_boundary;

	if (next <= now || (next - now) / 1000000 >= POLL_MS)
		return POLL_MS;
	return (int)((next - now) / 1000000) + 1;
}

/* After each wait: the end of an interval, or a drain when one is due. */
static int drain_when_due(struct run *r, uint64_t now)
{
	uint64_t interval = r->o->interval_ms * 1000000ull;

	if (now >= r->next_boundary) {
		drain(r);
		if (end_interval(r, now, false))
			return -ENOMEM;
		/* After a stall, the next boundary is an interval from now, not a burst. */
		r->next_boundary += interval;
		if (r->next_boundary <= now)
			r->next_boundary = now + interval;
		r->next_drain = now + DRAIN_INTERVAL_MS * 1000000ull;
		fuse_file__new_interval();
	} else if (now >= r->next_drain || sampler__should_drain(r->sampler)) {
		drain(r);
		r->next_drain = now + DRAIN_INTERVAL_MS * 1000000ull;
	}
	return 0;
}

/*
 * Waits up to timeout_ms for new processes, and reads them: the kernel's
 * records first, so that a process's first sample finds it known. Records
 * wait RECORD_DELAY_MS to be in order: while some wait, the wait is short.
 */
static void wait_news(struct run *r, int timeout_ms)
{
	struct pollfd fds[3] = {
		{.fd = sampler__fd(r->sampler), .events = POLLIN},
		{.fd = r->events ? task_events__fd(r->events) : -1, .events = POLLIN},
		{.fd = r->feed ? region_feed__fd(r->feed) : -1, .events = POLLIN},
	};

	if (r->events && task_events__queued(r->events) && timeout_ms > RECORD_DELAY_MS + 1)
		timeout_ms = RECORD_DELAY_MS + 1;
	if (poll(fds, 3, timeout_ms) < 0 && errno != EINTR)
		pr_warn("polling for new processes failed: %s", strerror(errno));
	follow(r, clock__mono_ns() - RECORD_DELAY_MS * 1000000ull);
}

/* Samples until -d, a signal, or the end of the targets. */
static void sample(struct run *r)
{
	uint64_t now;

	while (!signals__stop_requested()) {
		now = clock__mono_ns();
		if (now >= r->deadline)
			break;
		wait_news(r, poll_timeout(r, now));
		symbolizer__recheck_new(r->sym);
		if (r->cmd && target__exited(r->cmd, &r->cmd_status)) {
			r->cmd_done = true;
			break;
		}
		if (r->npids && !r->cmd && !any_alive(r)) {
			pr_info("all target processes have exited");
			break;
		}
		now = clock__mono_ns();
		/* The last interval ends with the run, after the loop. */
		if (now >= r->deadline || drain_when_due(r, now))
			break;
	}
}

/* No table is built for a run that is over: those under way end, or are left behind. */
static void stop_builds(struct run *r)
{
	size_t left;

	if (!r->feed)
		return;
	left = region_feed__stop_builds(r->feed, clock__mono_ns() + TABLE_LOADER_STOP_NS);
	if (left)
		pr_debug("%zu unwind table builds left behind, still reading their files", left);
}

/* Sampling ends: what is still in the maps is drained. Returns when it ended. */
static uint64_t stop(struct run *r)
{
	uint64_t now;

	if (r->cmd && signals__to_forward() && !r->cmd_done)
		kill(target__pid(r->cmd), signals__to_forward());
	sampler__stop(r->sampler);
	now = clock__mono_ns();
	load_budget__end_by(&r->budget, now + LOAD_GRACE_MS * 1000000ull);
	stop_builds(r);
	profile__set_duration(r->prof, now - r->start);
	if (signals__stop_requested())
		fprintf(stderr, "cprof: %s after %.2f s: keeping what was sampled\n",
			signals__stop_requested() == SIGINT ? "SIGINT" : "SIGTERM",
			(double)(now - r->start) / 1e9);
	drain(r);
	if (r->errors)
		pr_warn("%d aggregated %s not be added to the profile (out of memory)", r->errors,
			plural((uint64_t)r->errors, "entry could", "entries could"));
	return now;
}

/* With -v: what the CFI tables cost (issue figures: rows, bytes, build time, map memory). */
static void log_unwinding(struct run *r)
{
	struct region_feed_stats st;
	struct unwinder_stats us = {0};

	if (!r->feed)
		return;
	region_feed__stats(r->feed, &st);
	if (r->unwinder)
		unwinder__stats(r->unwinder, &us);
	if (r->tables) {
		struct table_store_stats ts;

		table_store__stats(r->tables, &ts);
		pr_debug("unwind: table store: %llu read, %llu written, %llu refused (another "
			 "version, or corrupt), %llu removed for room, %llu not written for the "
			 "cap, %llu files not kept (others could write them)",
			 (unsigned long long)ts.loaded, (unsigned long long)ts.saved,
			 (unsigned long long)ts.refused, (unsigned long long)ts.pruned,
			 (unsigned long long)ts.capped, (unsigned long long)ts.foreign);
	}
	pr_debug("unwind: tables built %llu (%llu read back from the table store, %llu without "
		 "CFI) in %.1f ms, held at most %.0f KiB, now %llu (%.0f KiB); map rows at most "
		 "%llu "
		 "of %llu, pages %llu of %llu; BPF maps %.1f MB; processes %llu, regions %llu",
		 (unsigned long long)st.tables.built, (unsigned long long)st.tables.loaded,
		 (unsigned long long)st.tables.no_cfi, (double)st.tables.build_ns / 1e6,
		 (double)st.tables.peak_bytes / 1024.0, (unsigned long long)st.tables.tables,
		 (double)st.tables.bytes / 1024.0,
		 (unsigned long long)us.row_chunks_peak * CPROF_UNWIND_CHUNK,
		 (unsigned long long)us.row_chunks * CPROF_UNWIND_CHUNK,
		 (unsigned long long)us.page_chunks_peak * CPROF_UNWIND_CHUNK,
		 (unsigned long long)us.page_chunks * CPROF_UNWIND_CHUNK,
		 (double)sampler__map_bytes(r->sampler) / 1048576.0,
		 (unsigned long long)st.regions.processes, (unsigned long long)st.regions.regions);
	pr_debug("unwind: tables found by file too (the walk by file) %llu, refused by its full "
		 "map %llu",
		 (unsigned long long)st.files, (unsigned long long)st.files_refused);
	pr_debug("unwind: regions that waited for their table (built off the loop) %llu, waiting "
		 "still %llu; builds pending %llu, left behind %llu",
		 (unsigned long long)st.regions.regions_waited,
		 (unsigned long long)st.regions.regions_pending,
		 (unsigned long long)st.tables.pending, (unsigned long long)st.tables.left_behind);
}

/* One-shot: the profile is named, written or uploaded, and summed up. */
static int finish_oneshot(struct run *r, uint64_t now)
{
	struct summary_info info;
	int exit_code;

	profile__finish_frames(r->prof, r->sym, true);
	read_info(r, &info);
	stop_fetches(r);
	pr_debug("ticks %llu samples %llu, walks %llu (lost %llu); stack copies %llu (lost %llu, "
		 "malformed or unkept %llu)",
		 (unsigned long long)info.stats[CPROF_STAT_TICKS],
		 (unsigned long long)info.stats[CPROF_STAT_SAMPLES],
		 (unsigned long long)info.stats[CPROF_STAT_WALKS],
		 (unsigned long long)info.stats[CPROF_STAT_WALKS_LOST],
		 (unsigned long long)info.stats[CPROF_STAT_COPIES],
		 (unsigned long long)info.stats[CPROF_STAT_COPIES_LOST],
		 (unsigned long long)r->bad_copies);
	pr_debug(
		"stack copies: %llu of new processes, %llu early, %llu without their file's table, "
		"%llu young; regions found by file %llu (bpf_find_vma busy %llu)",
		(unsigned long long)info.stats[CPROF_STAT_COPY_NEW],
		(unsigned long long)info.stats[CPROF_STAT_COPY_EARLY],
		(unsigned long long)info.stats[CPROF_STAT_COPY_NO_TABLE],
		(unsigned long long)info.stats[CPROF_STAT_COPY_YOUNG],
		(unsigned long long)info.stats[CPROF_STAT_BY_FILE],
		(unsigned long long)info.stats[CPROF_STAT_FIND_VMA_BUSY]);
	log_unwinding(r);
	info.duration_ns = now - r->start;
	info.unnamed_samples = summary__unnamed_samples(r->prof, &info.function_start_samples);
	info.unmapped_samples =
		summary__unmapped_samples(r->prof, info.unmapped_who, sizeof(info.unmapped_who));
	summary__line_samples(r->prof, info.line_samples);
	info.truncated_samples =
		summary__truncated_samples(r->prof, info.truncated_who, sizeof(info.truncated_who));
	/* Symbol tables are done with: encoding the profile does not stack on them. */
	symbolizer__free(r->sym);
	r->sym = NULL;
	summary__add_comments(r->prof, &info);
	if (r->upload)
		exit_code = upload_or_save(r, &info, r->out);
	else
		exit_code = write_profile(r->o, r->prof, &info, r->out) ? 1 : 0;
	summary__print(stderr, r->prof, &info, r->o->top_n);
	return exit_code;
}

/* Continuous: the interval under way when the run stopped (-d, a signal) is sent too. */
static int finish_intervals(struct run *r, uint64_t now)
{
	struct summary_info info;

	end_interval(r, now, true);
	info = r->prev;
	info.duration_ns = now - r->start;
	info.unnamed_samples = r->unnamed_samples;
	info.function_start_samples = r->function_start_samples;
	info.unmapped_samples = r->unmapped_samples;
	memcpy(info.line_samples, r->line_samples, sizeof(info.line_samples));
	info.unmapped_who[0] = '\0';
	/* The markers were in the intervals' profiles, each counted in its own comments. */
	info.truncated_samples = 0;
	info.truncated_who[0] = '\0';
	return finish_continuous(r, &info);
}

/* The command outlives a -d limit: let it finish and forward its status. */
static int wait_command(struct run *r, int exit_code)
{
	if (!r->cmd_done)
		target__wait(r->cmd, &r->cmd_status);
	return exit_code == 0 ? target__exit_code(r->cmd_status) : exit_code;
}

static void teardown(struct run *r)
{
	signals__remove_on_abort(NULL);
	delivery__free(r->delivery);
	stop_fetches(r);
	debuginfod__free(r->dbgd);
	tls_client__free(r->fetch_tls);
	cancel__free(r->fetch_cancel);
	spool__free(r->spool);
	batcher__free(r->batcher);
	upload__free(r->upload);
	cancel__free(r->cancel);
	target__free(r->cmd);
	task_events__free(r->events);
	for (size_t i = 0; i < r->ncopies; i++)
		free_copy(r, r->copies[i]);
	block_pool__free(r->copy_pool);
	free(r->copies);
	free_thread_names(r);
	region_feed__free(r->feed);
	sampler__free(r->sampler);
	unwinder__free(r->unwinder);
	symbolizer__free(r->sym);
	/* After the symbolizer, which borrows it. */
	table_store__free(r->tables);
	profile__free(r->prof);
	output__free(r->out);
	free(r->pids);
}

int session__run(const struct session_opts *o)
{
	struct run r = {
		.o = o,
		.base = {.hz = o->hz,
			 .include_idle = o->include_idle,
			 .targeted = o->npids > 0 || o->command},
	};
	int exit_code = 1;
	uint64_t end;

	raise_limits();
	if (check_pids(&r) || open_destinations(&r) || prepare(&r))
		goto cleanup;
	exit_code = start(&r);
	if (exit_code)
		goto cleanup;
	sample(&r);
	end = stop(&r);
	exit_code = o->interval_ms ? finish_intervals(&r, end) : finish_oneshot(&r, end);
	if (r.cmd)
		exit_code = wait_command(&r, exit_code);
cleanup:
	teardown(&r);
	return exit_code;
}
