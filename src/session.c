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
#include "session_internal.h"
#include "signals.h"
#include "summary.h"

#define LOG_MODULE NULL
#include "lib/log.h"

static void on_process(void *ctx, uint32_t pid);

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

static void on_task_event(void *ctx, const struct task_event *ev)
{
	struct run *r = ctx;

	/* The kernel skips the hook where a BPF program or a bpf() call is under way. */
	if (task_event__process_fork(ev) && sampler__follow_late(r->sampler, ev->ppid, ev->pid) > 0)
		r->forks_late++;
	run__walk_copies(r, ev->time);
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
	run__walk_copies(r, r->followed_until);
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
void run__catch_up(struct run *r)
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

static int drain(struct run *r)
{
	uint64_t begun = clock__mono_ns();
	int err;

	r->caught_up = false;
	err = sampler__drain(r->sampler, run__on_entry, r);
	/* Before spaces are forgotten: the copies whose records are in. */
	run__catch_up(r);
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
	return o->upload ? run__setup_upload(r) : 0;
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
	so.on_copy = run__on_copy;
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
		if (run__end_interval(r, now, false))
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
	run__read_info(r, &info);
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
		exit_code = run__upload_or_save(r, &info, r->out);
	else
		exit_code = run__write_profile(r->o, r->prof, &info, r->out) ? 1 : 0;
	summary__print(stderr, r->prof, &info, r->o->top_n);
	return exit_code;
}

/* Continuous: the interval under way when the run stopped (-d, a signal) is sent too. */
static int finish_intervals(struct run *r, uint64_t now)
{
	struct summary_info info;

	run__end_interval(r, now, true);
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
	return run__finish_continuous(r, &info);
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
		run__free_copy(r, r->copies[i]);
	block_pool__free(r->copy_pool);
	free(r->copies);
	run__free_thread_names(r);
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
