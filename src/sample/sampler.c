// SPDX-License-Identifier: MIT
/*
 * Drives the embedded BPF program (bpf/sampler.bpf.c). The program counts
 * samples into one of two map sets; draining flips the active set, waits
 * for samples in flight on the old one, then reads and clears it. This keeps
 * stack ids stable while counts refer to them and bounds how full the stack
 * map gets, which is what causes hash collisions (lost stacks).
 *
 * Both sets are made before the load, on threads (parallel_maps.c) while
 * the events are opened: with the unwinder's object a set is a count map,
 * which the kernel fills as it goes where it can (lazy_maps.c), and stacks
 * are kept by their hashes, each sent once (walked_stacks.h); with the
 * sampler's, a set also has a stack-trace map.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "lib/kernel_caps.h"
#include "lib/u64map.h"
#include "sample/event_reader.h"
#include "sample/lazy_maps.h"
#include "sample/map_take.h"
#include "sample/parallel_maps.h"
#include "sample/perf_attach.h"
#include "sample/perf_sample.h"
#include "sample/sampler.h"
#include "sample/unwinder.h"
#include "sample/walked_stacks.h"
#include "unwind_abi.h"
#include "sampler.skel.h"
#include "unwinder.skel.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

#define NOTIFY_PAGES 8 /* per-CPU perf buffer for first-sight notifications */
/*
 * With the unwinder it also carries the stack copies of processes not yet
 * bound to their tables (up to 17 KiB each): processes that live a few
 * milliseconds send all their samples so, 10,000 a second at -F 9999. At
 * 32 pages a busy machine lost a fifth of them; 128 (512 KiB, perf
 * record's default) is what the kernel lets any user lock per CPU.
 */
#define COPY_PAGES 128
/*
 * Per-CPU buffer of the walked stacks the kernel sends, each once (up to
 * 1 KiB, most a few hundred bytes), and how many records of a CPU wake
 * its reader: they wait for the next drain, not for a wakeup each.
 */
#define WALKED_PAGES	  64
#define WALKED_WAKE	  64
#define IN_FLIGHT_WAIT_US 1000000
/*
 * Per-CPU ring of the sampling events when they copy stacks (16 KiB a
 * sample), as perf record's default: read at half full, every 16 samples.
 */
#define SAMPLE_RING_PAGES 128
/*
 * The head start's memory, its rings' and its queue's each: every busy CPU
 * sends some 16 KiB a tick until the program is attached, tens of ms.
 * Past it, its samples are counted lost; its rings share it (a reading
 * thread empties them), 8 to SAMPLE_RING_PAGES pages a CPU.
 */
#define HEAD_START_BYTES (8u << 20)

/* The tracepoints that follow processes: see `spaces` in the BPF program. */
enum hook { HOOK_FORK, HOOK_EXEC, HOOK_EXIT, HOOK_MAX };
static const char *const hook_names[HOOK_MAX] = {"sched_process_fork", "sched_process_exec",
						 "sched_process_exit"};

/*
 * One instance of a BPF object: the sampler's (user stacks by frame
 * pointers) or the unwinder's (by CFI tables), which define the same maps
 * and programs for sampling (bpf/sample.h), found by name.
 */
struct instance {
	struct sampler_bpf *sk;
	struct unwinder_bpf *uk;
	struct bpf_object *obj;
	/* The kernel has bpf_loop (5.17): the unwinder's loops are verified once, not per frame. */
	bool loop;
	/* And bpf_find_vma (5.17): the walk finds tables by file (cprof_walk_file). */
	bool by_file;
};

#define MAP(i, name)  bpf_object__find_map_by_name((i)->obj, #name)
#define PROG(i, name) bpf_object__find_program_by_name((i)->obj, #name)
#define FD(i, name)   bpf_map__fd(MAP(i, name))

/* The unwinder's walk, loaded on a thread (see start_walker). */
struct walker {
	struct unwinder_bpf *k;
	struct bpf_program *prog;
	pthread_t thread;
	bool started;
	int err;
};

/* A sample a stack's record counted: its set and key (see struct cprof_ustack). */
struct counted {
	__u32 set;
	struct cprof_key key;
};

struct sampler {
	/* The loaded object. */
	struct instance cur;
	struct unwinder *unwinder; /* the tables' maps, when the unwinder's object is loaded */
	struct walker walker;
	int unwind_err; /* why it is not: it was not asked for, or could not load */
	bool lazy;	/* hash maps allocate their entries as they fill (lazy_maps.h) */
	/*
	 * Samples go to the sampling events' own rings with a copy of the user
	 * stack (copy_samples), read by `copies`, whose events libbpf opened on
	 * the perf event array copies_map_fd; those before copies_from predate
	 * the program (libbpf enables the events at once).
	 */
	bool copy;
	struct event_reader *copies;
	int copies_map_fd;
	uint64_t copies_from;
	uint64_t copies_bad; /* malformed samples */
	/*
	 * The head start (sampler_head_start): the copies' events sampled
	 * before the program was attached. Its samples (all before copies_from:
	 * should the samples become copies, the events wait disabled from then
	 * until the program takes them) are counted here as the program counts
	 * its runs, and each process they show is announced once, as the
	 * program announces one.
	 */
	bool head_start;
	uint64_t head_first; /* the time of its first sample, 0 before one */
	uint64_t head_lost;  /* its reader's losses, once it is gone */
	uint64_t head_stats[CPROF_STAT_MAX];
	struct u64map *head_seen;
	struct perf_sample_layout layout;
	struct cprof_copy *copy_buf; /* the sample being handed out */
	bool head_over;		     /* the head start's events were replaced (end_head_start) */
	int head_err;		     /* why they could not be: not tried again */
	const char *tracefs;	     /* where tracepoints are, or NULL */
	struct perf_attach *pa;
	struct perf_attach *next_pa; /* the head start's successors, until handed over */
	/* The fork, exec and exit hooks (enum hook): links, and events until a link owns them (or
	 * -1). */
	struct bpf_link *hook_links[HOOK_MAX];
	int hook_fds[HOOK_MAX];
	int tracepoint_err;		    /* why they could not be opened */
	bool spaces;			    /* `spaces` is maintained: every hook attached */
	uint32_t command_pid;		    /* the process that will exec the command, or 0 */
	struct event_reader *reader;	    /* of `events` */
	int events_fd;			    /* the map the reader reads */
	struct event_reader *walked_reader; /* of `walked_out`, with the unwinder's object */
	int walked_fd;
	struct sampler_opts opts;
	struct cprof_config cfg;
	int ncpus_possible;
	bool started;
	bool stopped;
	uint64_t keys_at_flip; /* NEW_KEYS of the active set when it became active */
	uint64_t collisions_at_flip;
	uint64_t lost_notify;
	uint64_t missing_stacks;
	/* Valid during sampler__poll only. */
	sampler_process_fn poll_fn;
	void *poll_ctx;
	int polled;
	/* Read from the buffer outside sampler__poll: handed to the next one. */
	uint32_t *early_pids;
	size_t nearly, early_cap;
	/* Spilled samples (see the BPF side), until the drain of their set. */
	struct cprof_spill *spills;
	size_t nspills, spills_cap;
	uint64_t spills_dropped; /* no memory to keep one, or a counted stack's count */
	/* Samples their stack's record counted (struct cprof_ustack), until their set's drain. */
	struct counted *counted;
	size_t ncounted, counted_cap;
	/* Runs of the hooks the kernel skipped (see prog_skipped), as they went. */
	uint64_t hooks_skipped_before;
	/* Per drain: stack id -> frames, so a stack shared by many keys is read once. */
	uint64_t **stack_cache;
	uint32_t *stack_cache_ids;
	uint32_t stack_cache_n;
	/* Per drain: the counts taken in batches. */
	struct map_take *take;
	/* The walked stacks the kernel sent (with the unwinder's object). */
	struct walked_stacks *walked;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[65536]; /* verifier logs come as one message */
	size_t n;

	/*
	 * libbpf is chatty about feature probes on old kernels, and its errors
	 * are restated by explain_load_error(): all of it is -v material.
	 */
	(void)level;
	if (log_get_level() < LOG_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	/* libbpf starts its own messages with "libbpf: "; the prefix is said once. */
	fprintf(stderr, "cprof: libbpf: %s\n", strncmp(buf, "libbpf: ", 8) == 0 ? buf + 8 : buf);
	return 0;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Says up front what is missing instead of letting the kernel answer EPERM
 * somewhere inside libbpf. CAP_SYS_ADMIN covers both on every kernel.
 */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return 0; /* cannot tell: let the kernel decide */
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	pr_err("cprof needs root, or the capabilities CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN "
	       "before Linux 5.8); running as uid %u without them",
	       (unsigned int)geteuid());
	return -EPERM;
}

/*
 * Before Linux 5.11 BPF maps are charged to RLIMIT_MEMLOCK, since then to the
 * memory cgroup. True, with the limit, when that explains a refused load: an
 * old kernel and a limit still finite because session.c could not raise it
 * (no CAP_SYS_RESOURCE).
 */
static bool memlock_too_low(unsigned long long *limit_kib)
{
	unsigned version = kernel_caps__version();
	struct rlimit rl;

	if (!version || version >= kernel_caps__since(KCAP_MEMCG_ACCOUNTING))
		return false;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	*limit_kib = rl.rlim_cur / 1024;
	return true;
}

static void explain_load_error(int err)
{
	unsigned long long limit_kib;

	switch (err) {
	case -EPERM:
	case -EACCES:
		if (memlock_too_low(&limit_kib)) {
			pr_err("cannot load the BPF program: %s; this kernel (before 5.11) charges "
			       "BPF maps to RLIMIT_MEMLOCK, which is %llu KiB and cannot be raised "
			       "without CAP_SYS_RESOURCE: run `ulimit -l unlimited` first",
			       strerror(-err), limit_kib);
			break;
		}
		pr_err("cannot load the BPF program: %s; check kernel.unprivileged_bpf_disabled "
		       "and lockdown, and before Linux 5.11 RLIMIT_MEMLOCK (ulimit -l); -v shows "
		       "libbpf's log",
		       strerror(-err));
		break;
	case -ENOSYS:
		pr_err("cannot load the BPF program: this kernel has no bpf() system call "
		       "(CONFIG_BPF_SYSCALL=n)");
		break;
	case -EINVAL:
	case -E2BIG:
	case -EOPNOTSUPP:
		pr_err("cannot load the BPF program: %s; the kernel rejected it (cprof needs "
		       "Linux 4.18 or later with BPF perf_event programs); run with -v for "
		       "the verifier log",
		       strerror(-err));
		break;
	default:
		pr_err("cannot load the BPF program: %s (run with -v for libbpf's log)",
		       strerror(-err));
	}
}

/* libbpf resolves tracepoints through tracefs; mount it where it is missing. */
static const char *tracefs_dir(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (access(path, F_OK) == 0)
			return dirs[i];
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		pr_debug("mounted tracefs on /sys/kernel/tracing");
		return dirs[0];
	}
	pr_debug("cannot mount tracefs: %s", strerror(errno));
	return NULL;
}

/* Reads the offset of child_pid in sched_process_fork to pick the record layout. */
static enum cprof_fork_layout fork_layout(const char *dir)
{
	char path[256], line[256];
	enum cprof_fork_layout layout = CPROF_FORK_NONE;
	FILE *f;
	int off;

	if (!dir)
		return CPROF_FORK_NONE;
	snprintf(path, sizeof(path), "%s/events/sched/sched_process_fork/format", dir);
	f = fopen(path, "re");
	if (!f)
		return CPROF_FORK_NONE;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "child_pid;");

		if (!p || !(p = strstr(p, "offset:")) || sscanf(p, "offset:%d", &off) != 1)
			continue;
		if (off == 44)
			layout = CPROF_FORK_STATIC_COMM;
		else if (off == 20)
			layout = CPROF_FORK_DYNAMIC_COMM;
		break;
	}
	fclose(f);
	return layout;
}

static int update_config(struct sampler *s)
{
	__u32 zero = 0;
	int err;

	err = bpf_map_update_elem(FD(&s->cur, config), &zero, &s->cfg, BPF_ANY);
	if (err) {
		err = -errno;
		pr_err("cannot update the configuration map: %s", strerror(-err));
	}
	return err;
}

static void close_hook_fds(struct sampler *s)
{
	int i;

	for (i = 0; i < HOOK_MAX; i++) {
		if (s->hook_fds[i] >= 0)
			close(s->hook_fds[i]);
		s->hook_fds[i] = -1;
	}
}

/* The hooks' tracepoints as perf events, for the programs to be attached later: all or none. */
static void open_tracepoints(struct sampler *s, const char *tracefs)
{
	int i, fd;

	for (i = 0; i < HOOK_MAX; i++) {
		fd = perf_attach__tracepoint(tracefs, "sched", hook_names[i]);
		if (fd < 0) {
			s->tracepoint_err = fd;
			close_hook_fds(s);
			return;
		}
		s->hook_fds[i] = fd;
	}
}

/* Grows *p (of *cap elements of size) to hold n + 1; false without memory. */
static bool room_for_one(void **p, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *q;

	if (n < *cap)
		return true;
	q = realloc(*p, want * size);
	if (!q)
		return false;
	*p = q;
	*cap = want;
	return true;
}

/* data is a perf record's payload, 4-byte aligned only: copied, never read as the struct. */
static void keep_spill(struct sampler *s, const void *data)
{
	if (!room_for_one((void **)&s->spills, &s->spills_cap, s->nspills, sizeof(*s->spills))) {
		s->spills_dropped++;
		return;
	}
	memcpy(&s->spills[s->nspills++], data, sizeof(*s->spills));
}

/* A process seen for the first time, handed to the caller of sampler__consume. */
static void announce_pid(struct sampler *s, uint32_t pid)
{
	if (!s->poll_fn) {
		/* Read by a drain: the process is announced at the next poll. */
		if (room_for_one((void **)&s->early_pids, &s->early_cap, s->nearly,
				 sizeof(*s->early_pids)))
			s->early_pids[s->nearly++] = pid;
		else
			s->lost_notify++;
		return;
	}
	s->poll_fn(s->poll_ctx, pid);
	s->polled++;
}

/* Keeps a counted sample for the drain of its set; without memory, it is lost and counted so. */
static void add_counted(struct sampler *s, const struct counted *c)
{
	if (!room_for_one((void **)&s->counted, &s->counted_cap, s->ncounted,
			  sizeof(*s->counted))) {
		s->spills_dropped++;
		return;
	}
	s->counted[s->ncounted++] = *c;
}

/* The sample a new stack's record counts, if it counts one. */
static void keep_counted(struct sampler *s, const void *data, uint32_t size)
{
	struct cprof_ustack head;

	if (size < offsetof(struct cprof_ustack, ips))
		return;
	memcpy(&head, data, offsetof(struct cprof_ustack, ips));
	if (!head.count_set || head.count_set > 2)
		return;
	add_counted(s, &(struct counted){.set = head.count_set - 1, .key = head.key});
}

static void on_notify(void *ctx, const void *data, uint32_t size)
{
	struct sampler *s = ctx;
	const struct cprof_event *ev = data;
	__u32 magic = 0;

	if (size >= sizeof(magic))
		memcpy(&magic, data, sizeof(magic));
	if (magic == CPROF_USTACK_MAGIC) {
		if (s->walked) {
			walked_stacks__add(s->walked, data, size);
			keep_counted(s, data, size);
		}
		return;
	}
	if (magic == CPROF_SPILL_MAGIC && size >= sizeof(struct cprof_spill)) {
		keep_spill(s, data);
		return;
	}
	if (magic == CPROF_COPY_MAGIC && size >= offsetof(struct cprof_copy, stack)) {
		if (s->opts.on_copy)
			s->opts.on_copy(s->opts.copy_ctx, data, size);
		else
			s->spills_dropped++;
		return;
	}
	if (size >= sizeof(*ev))
		announce_pid(s, ev->pid);
}

static uint32_t known_stacks_size(const struct sampler *s)
{
	return 2 * s->opts.count_entries;
}

/* The hash maps whose entries the kernel can allocate as they are added. */
static void allocate_lazily(struct instance *k)
{
	struct bpf_map *maps[] = {MAP(k, counts0), MAP(k, counts1), MAP(k, targets)};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (maps[i])
			lazy_maps__apply(maps[i]);
}

/* Sizes, and which programs the object loads. */
static void configure(struct sampler *s, struct instance *k)
{
	bool fork = s->cfg.fork_layout != CPROF_FORK_NONE;

	for (int set = 0; set < 2; set++) {
		bpf_map__set_max_entries(set ? MAP(k, stacks1) : MAP(k, stacks0),
					 s->opts.stack_entries);
		bpf_map__set_max_entries(set ? MAP(k, counts1) : MAP(k, counts0),
					 s->opts.count_entries);
		/* The unwinder's object keeps every stack by its hash: no stack map. */
		if (k->uk)
			bpf_map__set_autocreate(set ? MAP(k, stacks1) : MAP(k, stacks0), false);
	}
	if (k->uk)
		bpf_map__set_autocreate(MAP(k, spill), false);
	/* Unused without a PID filter; a full-size hash map costs startup time to allocate. */
	if (!s->opts.filter_pids)
		bpf_map__set_max_entries(MAP(k, targets), 1);
	if (s->lazy)
		allocate_lazily(k);
	bpf_program__set_autoload(PROG(k, cprof_fork_static_comm),
				  fork && s->cfg.fork_layout == CPROF_FORK_STATIC_COMM);
	bpf_program__set_autoload(PROG(k, cprof_fork_dynamic_comm),
				  fork && s->cfg.fork_layout == CPROF_FORK_DYNAMIC_COMM);
	bpf_program__set_autoload(PROG(k, cprof_exec), fork);
	bpf_program__set_autoload(PROG(k, cprof_exit), fork);
}

/*
 * Creates maps on other threads while fn(s) runs on this one. Returns the
 * first map's error (unexplained), else fn's (which fn has logged).
 */
static int create_maps_while(struct bpf_map *const *maps, int n, int (*fn)(struct sampler *s),
			     struct sampler *s, bool *explained)
{
	struct parallel_maps *pm = NULL;
	int err, fn_err;

	*explained = false;
	err = parallel_maps__start(maps, n, &pm);
	if (err) {
		pr_err("cannot create the BPF maps: %s", strerror(-err));
		*explained = true;
		return err;
	}
	fn_err = fn(s);
	err = parallel_maps__finish(pm);
	parallel_maps__free(pm);
	/* fn has said why it failed, most often the maps' reason too (RLIMIT_MEMLOCK): once. */
	if (fn_err) {
		*explained = true;
		err = fn_err;
	}
	return err;
}

/*
 * A perf buffer of the program's map `name`, ready before the load, on a
 * map of our own (*fd): the buffer keeps using the descriptor it was given,
 * which must outlive the object (should the unwinder's be refused, the
 * sampler's is loaded on it). what names it in errors.
 */
static int open_buffer(struct sampler *s, const char *name, const char *what, size_t pages,
		       uint32_t wake_every, int *fd, struct event_reader **reader)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->cur.obj, name);
	unsigned long long limit_kib;
	int err;

	*fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
			     bpf_map__value_size(m), s->ncpus_possible, NULL);
	err = *fd < 0 ? -errno : bpf_map__reuse_fd(m, *fd);
	if (!err)
		err = event_reader__new(*fd, pages, wake_every, reader);
	/* Without the unwinder (before 5.5) this is the first map made: name the limit. */
	if (*fd < 0 && (err == -EPERM || err == -EACCES) && memlock_too_low(&limit_kib))
		explain_load_error(err);
	else if (err)
		pr_err("cannot create the %s perf buffer: %s", what, strerror(-err));
	return err;
}

/*
 * The notification buffer, and with the unwinder the walked stacks' (see
 * WALKED_WAKE).
 */
static int open_notifications(struct sampler *s)
{
	int err;

	err = open_buffer(s, "events", "notification", s->unwinder ? COPY_PAGES : NOTIFY_PAGES, 1,
			  &s->events_fd, &s->reader);
	if (err)
		return err;
	/* The head start's rings, opened before, wake the caller's one poll too. */
	if (s->copies)
		event_reader__wake_with(s->copies, s->reader);
	if (!s->cur.uk)
		return 0;
	return open_buffer(s, "walked_out", "walked stacks'", WALKED_PAGES, WALKED_WAKE,
			   &s->walked_fd, &s->walked_reader);
}

/* The perf event array of the copies' rings: a descriptor, or a negative errno. */
static int create_rings_map(int ncpus_possible)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "copies", sizeof(__u32),
				sizeof(__u32), ncpus_possible, NULL);

	return fd < 0 ? -errno : fd;
}

/*
 * Sampling events with rings of pages pages on map_fd, on every online CPU,
 * sampling at once.
 */
static int open_rings(unsigned int hz, int map_fd, size_t pages, const struct event_reader *wake,
		      struct event_reader **reader)
{
	struct perf_event_attr attr;

	perf_attach__copy_attr(hz, &attr);
	return event_reader__new_raw(map_fd, pages, &attr, wake, reader);
}

/* The head start's ring pages a CPU: a power of two, HEAD_START_BYTES over all. */
static size_t head_start_pages(int ncpus)
{
	size_t pages = SAMPLE_RING_PAGES;

	while (pages > 8 && pages * 4096 * (size_t)ncpus > HEAD_START_BYTES)
		pages /= 2;
	return pages;
}

/*
 * The CPU of each event of the copies' reader: libbpf opens one on each
 * online CPU in order. NULL (unknown) if the list changed since.
 */
static int *ring_cpus(int n)
{
	int *cpus = NULL, online;

	online = perf_attach__online_cpus(&cpus);
	if (online == n)
		return cpus;
	free(cpus);
	return NULL;
}

/*
 * The sampling events with rings of their own, for samples with stack
 * copies: opened on a perf event array of ours (unless the head start
 * opened them), perf_attach takes copies of their descriptors to attach the
 * program. The head start's keep sampling meanwhile, unless the samples
 * are to be copies from now on: then they wait for the program.
 */
static int open_copies(struct sampler *s)
{
	int *fds = NULL, *cpus, i, n, err;
	bool running = s->head_start && !s->copy;

	if (!s->copies) {
		s->copies_map_fd = create_rings_map(s->ncpus_possible);
		if (s->copies_map_fd < 0) {
			err = s->copies_map_fd;
			explain_load_error(err);
			return err;
		}
		err = open_rings(s->opts.hz, s->copies_map_fd, SAMPLE_RING_PAGES, s->reader,
				 &s->copies);
		if (err) {
			pr_err("cannot open the sampling events with their rings: %s%s",
			       strerror(-err),
			       err == -EPERM
				       ? " (over kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK?)"
				       : "");
			return err;
		}
	}
	/* The head start's, for copies from now on: their queue as any copies' (its rings stay). */
	if (!running)
		event_reader__limit(s->copies, 0);
	n = event_reader__count(s->copies);
	fds = calloc(n ? n : 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		fds[i] = event_reader__event_fd(s->copies, i);
	cpus = ring_cpus(n);
	err = perf_attach__adopt(s->opts.hz, fds, cpus, n, running, &s->pa);
	free(cpus);
	free(fds);
	/* The unwinder's program hands no sample to the rings: all they get is the head start's. */
	s->copies_from = running ? UINT64_MAX : clock__mono_ns();
	return err;
}

int sampler__open_head_start(unsigned int hz, struct sampler_head_start *out)
{
	int ncpus = libbpf_num_possible_cpus(), err;
	unsigned long long limit_kib;

	out->map_fd = -1;
	out->reader = NULL;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	/* A ring's pages beyond kernel.perf_event_mlock_kb count there too: the maps come first. */
	if (memlock_too_low(&limit_kib))
		return -EDQUOT;
	out->map_fd = create_rings_map(ncpus);
	if (out->map_fd < 0)
		return out->map_fd;
	err = open_rings(hz, out->map_fd, head_start_pages(ncpus), NULL, &out->reader);
	if (err) {
		sampler__close_head_start(out);
		return err;
	}
	event_reader__limit(out->reader, HEAD_START_BYTES);
	return 0;
}

void sampler__close_head_start(struct sampler_head_start *h)
{
	if (!h)
		return;
	event_reader__free(h->reader);
	h->reader = NULL;
	if (h->map_fd >= 0)
		close(h->map_fd);
	h->map_fd = -1;
}

/*
 * What the object needs besides its maps, done while they are created;
 * done once, when the unwinder's object is refused and the sampler's
 * tried next.
 */
static int prepare_first(struct sampler *s)
{
	int err;

	/* The first tick comes sooner: see perf_attach.c. */
	if (!s->pa && !s->copy && !s->copies) {
		err = perf_attach__open(s->opts.hz, true, &s->pa);
		if (err)
			return err;
	}
	if (!s->reader) {
		if (s->cfg.fork_layout != CPROF_FORK_NONE)
			open_tracepoints(s, s->tracefs);
		err = open_notifications(s);
	} else {
		err = bpf_map__reuse_fd(MAP(&s->cur, events), s->events_fd);
	}
	if (!err && !s->pa)
		err = open_copies(s);
	return err;
}

/* Opens the unwinder's object when there is an unwinder, else the sampler's. */
static int instance_open(struct sampler *s, struct instance *i)
{
	memset(i, 0, sizeof(*i));
	if (s->unwinder) {
		i->uk = unwinder_bpf__open();
		if (!i->uk)
			return -errno;
		i->obj = i->uk->obj;
		return unwinder__share(s->unwinder, i->obj);
	}
	i->sk = sampler_bpf__open();
	if (!i->sk)
		return -errno;
	i->obj = i->sk->obj;
	return 0;
}

/* Puts program p in slot key of the instance's walk_progs. */
static int set_walk_prog(struct instance *i, __u32 key, const struct bpf_program *p)
{
	int fd = bpf_program__fd(p);

	return bpf_map_update_elem(FD(i, walk_progs), &key, &fd, BPF_ANY) ? -errno : 0;
}

/*
 * Whether the walk can find tables by file: bpf_find_vma (and the task
 * as BTF, 5.11) in perf_event programs. Noted as a fallback where not.
 */
static bool has_find_vma(void)
{
	if (kernel_caps__has(KCAP_FIND_VMA) &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1 &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_current_task_btf,
				    NULL) == 1)
		return true;
	kernel_caps__fell_back(KCAP_FIND_VMA);
	return false;
}

/*
 * Loads it. The unwinder's walk goes on through the programs in walk_progs:
 * the walk itself, slot 0, which the walker loads in the background (see
 * start_walker), the last step, slot 1, which records into the map sets
 * and so comes with each instance, and the stack copy, slot 2, which the
 * other three hand samples to that user space walks.
 */
static int instance_load(struct instance *i)
{
	struct bpf_program *keep;
	uint64_t t0 = clock__mono_ns();
	int err;

	if (i->sk)
		return sampler_bpf__load(i->sk);
	/* Refused as the verifier before 5.5 refuses it (bpf_probe_read_user), when emulated. */
	if (!kernel_caps__has(KCAP_UNWINDER))
		return -EINVAL;
	i->loop = kernel_caps__has(KCAP_BPF_LOOP) &&
		  libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
	if (!i->loop)
		kernel_caps__fell_back(KCAP_BPF_LOOP);
	i->by_file = has_find_vma();
	/* Both came with 5.17; the walk by file is a loop walk. */
	if (i->by_file && !i->loop) {
		kernel_caps__fell_back(KCAP_FIND_VMA);
		i->by_file = false;
	}
	keep = i->loop ? PROG(i, cprof_keep_loop) : PROG(i, cprof_keep);
	bpf_program__set_autoload(PROG(i, cprof_walk), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_deep), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_loop), false);
	bpf_program__set_autoload(PROG(i, cprof_walk_file), false);
	bpf_program__set_autoload(PROG(i, cprof_keep), keep == PROG(i, cprof_keep));
	bpf_program__set_autoload(PROG(i, cprof_keep_loop), keep == PROG(i, cprof_keep_loop));
	err = unwinder_bpf__load(i->uk);
	pr_debug("the unwinder's object (%s): loaded in %.1f ms", bpf_program__name(keep),
		 (double)(clock__mono_ns() - t0) / 1e6);
	if (err)
		return err;
	err = set_walk_prog(i, 2, PROG(i, cprof_copy));
	return err ? err : set_walk_prog(i, 1, keep);
}

/* Loads w's walk and puts it in walk_progs: from then on samples are walked with it. */
static int load_walk(struct walker *w)
{
	__u32 key = 0;
	int err, fd;

	err = unwinder_bpf__load(w->k);
	if (err)
		return err;
	fd = bpf_program__fd(w->prog);
	if (bpf_map_update_elem(bpf_map__fd(w->k->maps.walk_progs), &key, &fd, BPF_ANY))
		return -errno;
	/* Slot 3: samples of processes without a region set are walked by file too. */
	key = 3;
	if (w->prog == w->k->progs.cprof_walk_file &&
	    bpf_map_update_elem(bpf_map__fd(w->k->maps.walk_progs), &key, &fd, BPF_ANY))
		return -errno;
	return 0;
}

static int open_walker(struct sampler *s, struct walker *w, int rows_fd);

/*
 * The walk by file refused (a kernel whose verifier knows bpf_find_vma but
 * not all it is handed): the loop walk instead, said as a fallback.
 */
static int walk_without_files(struct sampler *s)
{
	struct walker *w = &s->walker;
	pthread_t thread = w->thread;
	int err;

	pr_debug("the walk by file (cprof_walk_file) refused: %s", strerror(-w->err));
	kernel_caps__fell_back(KCAP_FIND_VMA);
	s->cur.by_file = false;
	unwinder_bpf__destroy(w->k);
	err = open_walker(s, w, s->unwinder ? unwinder__rows_fd(s->unwinder) : -1);
	w->thread = thread;
	w->started = true;
	return err ? err : load_walk(w);
}

/*
 * The walk, which costs the verifier tens to hundreds of milliseconds:
 * loaded on a thread once sampling has begun. Until it is in walk_progs,
 * samples go to user space as stack copies and are walked there.
 */
static void *load_walker(void *arg)
{
	struct sampler *s = arg;
	struct walker *w = &s->walker;
	uint64_t t0 = clock__mono_ns();

	w->err = load_walk(w);
	if (w->err && w->prog == w->k->progs.cprof_walk_file)
		w->err = walk_without_files(s);
	if (w->err)
		pr_info("user stacks are walked in user space: the kernel refused the in-kernel "
			"walk "
			"(%s; -v shows the verifier's log)",
			strerror(-w->err));
	else
		pr_debug("the walk (%s): loaded in %.1f ms", bpf_program__name(w->prog),
			 (double)(clock__mono_ns() - t0) / 1e6);
	return NULL;
}

/*
 * The walk by tail calls whose runs reach --max-stack's frames: the deep
 * one costs the verifier four times as much, so only a deep option pays it.
 */
static struct bpf_program *walk_by_tail_calls(const struct sampler *s, struct unwinder_bpf *k)
{
	uint32_t depth = s->unwinder ? unwinder__max_depth(s->unwinder) : CPROF_MAX_STACK_DEPTH;

	return depth > CPROF_WALK_RUNS * CPROF_WALK_FRAMES ? k->progs.cprof_walk_deep
							   : k->progs.cprof_walk;
}

/*
 * Opens a walker on the current instance's maps, the row map rows_fd
 * (-1: the instance's). Not loaded.
 */
static int open_walker(struct sampler *s, struct walker *w, int rows_fd)
{
	struct bpf_map *m, *src;
	struct bpf_program *p;
	int err;

	memset(w, 0, sizeof(*w));
	w->k = unwinder_bpf__open();
	if (!w->k)
		return -errno;
	bpf_object__for_each_map(m, w->k->obj)
	{
		/* One the sampling object did not create, the walk does not use. */
		src = bpf_object__find_map_by_name(s->cur.obj, bpf_map__name(m));
		if (!src || bpf_map__fd(src) < 0) {
			bpf_map__set_autocreate(m, false);
			continue;
		}
		err = bpf_map__reuse_fd(m, m == w->k->maps.unwind_rows && rows_fd >= 0
						   ? rows_fd
						   : bpf_map__fd(src));
		if (err) {
			pr_debug("the walker cannot share map '%s': %s", bpf_map__name(m),
				 strerror(-err));
			return err;
		}
	}
	/* Where the kernel has bpf_loop (5.17), the walk costs the verifier a tenth of the other.
	 */
	w->prog = s->cur.by_file ? w->k->progs.cprof_walk_file
		  : s->cur.loop	 ? w->k->progs.cprof_walk_loop
				 : walk_by_tail_calls(s, w->k);
	bpf_object__for_each_program(p, w->k->obj) bpf_program__set_autoload(p, p == w->prog);
	return 0;
}

/* Opens the walker on the current instance's maps, and loads it on a thread. */
static int start_walker(struct sampler *s)
{
	struct walker *w = &s->walker;
	int err;

	if (!s->cur.uk)
		return 0;
	err = open_walker(s, w, s->unwinder ? unwinder__rows_fd(s->unwinder) : -1);
	if (err)
		return err;
	err = pthread_create(&w->thread, NULL, load_walker, s);
	if (err)
		return -err;
	w->started = true;
	return 0;
}

/* Waits for the walker's first load, if it is under way. */
static void join_walker(struct sampler *s)
{
	if (s->walker.started)
		pthread_join(s->walker.thread, NULL);
	s->walker.started = false;
}

/*
 * The unwinder moved its rows to rows_fd (unwinder__on_grown): the walk is
 * loaded again with that map and takes the old one's place in walk_progs.
 * Before the walk is started it finds the new map by itself; without an
 * in-kernel walk no program reads rows.
 */
static int walk_rows_moved(void *ctx, int rows_fd)
{
	struct sampler *s = ctx;
	struct walker next;
	uint64_t t0 = clock__mono_ns();
	int err;

	if (!s->walker.k)
		return 0;
	join_walker(s);
	if (s->walker.err)
		return 0;
	err = open_walker(s, &next, rows_fd);
	if (!err)
		err = load_walk(&next);
	if (err) {
		unwinder_bpf__destroy(next.k);
		return err;
	}
	unwinder_bpf__destroy(s->walker.k);
	s->walker = next;
	pr_debug("the walk (%s): loaded again for a larger row map in %.1f ms",
		 bpf_program__name(next.prog), (double)(clock__mono_ns() - t0) / 1e6);
	return 0;
}

static void stop_walker(struct sampler *s)
{
	join_walker(s);
	unwinder_bpf__destroy(s->walker.k);
	s->walker.k = NULL;
}

static void instance_destroy(struct instance *i)
{
	sampler_bpf__destroy(i->sk);
	unwinder_bpf__destroy(i->uk);
	memset(i, 0, sizeof(*i));
}

static struct bpf_program *sample_prog(const struct instance *i)
{
	return i->uk ? PROG(i, cprof_unwind_sample) : PROG(i, cprof_sample);
}

/* The maps worth a thread each (see parallel_maps.h): the large ones the run uses. */
#define BIG_MAPS 8
static int big_maps(const struct sampler *s, const struct instance *k,
		    struct bpf_map *big[BIG_MAPS])
{
	struct bpf_map *const want[BIG_MAPS] = {
		k->uk ? NULL : MAP(k, stacks0),
		k->uk ? NULL : MAP(k, stacks1),
		MAP(k, counts0),
		MAP(k, counts1),
		MAP(k, seen),
		k->uk ? MAP(k, known_stacks) : NULL,
		s->opts.filter_pids ? MAP(k, targets) : NULL,
		s->cfg.fork_layout != CPROF_FORK_NONE ? MAP(k, spaces) : NULL,
	};
	int i, n = 0;

	for (i = 0; i < BIG_MAPS; i++)
		if (want[i])
			big[n++] = want[i];
	return n;
}

/*
 * The object and its maps. *explained: the error was logged; else the
 * caller explains it, or tries the sampler's object instead.
 */
static int load_first(struct sampler *s, bool *explained)
{
	struct instance *k = &s->cur;
	struct bpf_map *big[BIG_MAPS];
	int err;

	*explained = false;
	err = instance_open(s, k);
	if (err)
		return err;
	configure(s, k);
	err = create_maps_while(big, big_maps(s, k, big), prepare_first, s, explained);
	if (*explained)
		return err;
	if (!err)
		err = instance_load(k);
	return err;
}

/* Takes over h, which samples every CPU: only for a run without a PID filter. */
static void take_head_start(struct sampler *s, struct sampler_head_start *h)
{
	if (!h || !h->reader)
		return;
	if (s->opts.filter_pids || !(s->head_seen = u64map__new())) {
		sampler__close_head_start(h);
		return;
	}
	s->copies = h->reader;
	s->copies_map_fd = h->map_fd;
	h->reader = NULL;
	h->map_fd = -1;
	s->head_start = true;
}

static int init(struct sampler *s, const struct sampler_opts *opts)
{
	int n;

	s->events_fd = -1;
	s->walked_fd = -1;
	s->copies_map_fd = -1;
	perf_sample__layout(&s->layout);
	s->copy_buf = malloc(sizeof(*s->copy_buf));
	if (!s->copy_buf)
		return -ENOMEM;
	for (n = 0; n < HOOK_MAX; n++)
		s->hook_fds[n] = -1;
	s->opts = *opts;
	s->opts.head_start = NULL;
	take_head_start(s, opts->head_start);
	s->unwinder = opts->unwinder;
	s->unwind_err = s->unwinder ? 0 : -ENOENT;
	s->copy = opts->copy_samples && !s->unwinder;
	s->cfg.copy_samples = s->copy;
	if (!s->opts.stack_entries)
		s->opts.stack_entries = CPROF_DEFAULT_STACK_ENTRIES;
	if (!s->opts.count_entries)
		s->opts.count_entries = CPROF_DEFAULT_COUNT_ENTRIES;
	s->lazy = lazy_maps__supported();
	s->ncpus_possible = libbpf_num_possible_cpus();
	if (s->ncpus_possible <= 0) {
		n = s->ncpus_possible ? s->ncpus_possible : -EINVAL;
		pr_err("cannot read the number of possible CPUs: %s", strerror(-n));
		return n;
	}
	s->cfg.filter_pids = opts->filter_pids;
	s->cfg.include_idle = opts->include_idle;
	/* Forks are watched in every mode: see `spaces` in the BPF program. */
	s->cfg.follow_children = opts->filter_pids && opts->follow_children;
	s->tracefs = tracefs_dir();
	s->cfg.fork_layout = s->tracefs ? fork_layout(s->tracefs) : CPROF_FORK_NONE;
	if (s->cfg.fork_layout == CPROF_FORK_NONE) {
		if (s->cfg.follow_children)
			pr_warn("children started during the profile are not followed: cannot read "
				"the sched_process_fork tracepoint (is tracefs available?)");
		else
			pr_warn("cannot read the sched_process_fork tracepoint (is tracefs "
				"available?): a sample taken before its process's exec may be "
				"named after the program it ran next");
	}
	return 0;
}

/* From now on samples come with stack copies, to be walked in user space. */
static void use_copies(struct sampler *s)
{
	s->copy = true;
	s->cfg.copy_samples = 1;
	/*
	 * Opened without rings: opened again with them. The head start's have
	 * them, and are disabled here until the program is attached (freeing
	 * what adopted them disables them): from now on the program chooses.
	 */
	perf_attach__free(s->pa);
	s->pa = NULL;
}

int sampler__new(const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *s;
	bool explained;
	int err;

	*out = NULL;
	libbpf_set_print(libbpf_print);
	err = check_privileges();
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = init(s, opts);
	if (err)
		goto cleanup;
	err = load_first(s, &explained);
	if (err && !explained && s->unwinder) {
		/* Before Linux 5.5, or a verifier that refuses the walk: stack copies. */
		pr_debug("cannot load the unwinder: %s; user stacks walked from stack copies",
			 strerror(-err));
		kernel_caps__fell_back(KCAP_UNWINDER);
		s->unwind_err = err;
		s->unwinder = NULL;
		event_reader__free(s->walked_reader);
		s->walked_reader = NULL;
		use_copies(s);
		instance_destroy(&s->cur);
		err = load_first(s, &explained);
	}
	if (err) {
		if (!explained)
			explain_load_error(err);
		goto cleanup;
	}
	err = update_config(s);
	if (err)
		goto cleanup;
	err = map_take__new(sizeof(struct cprof_key), sizeof(__u64), &s->take);
	if (!err && s->cur.uk)
		err = walked_stacks__new(known_stacks_size(s), &s->walked);
	if (err)
		goto cleanup;
	if (s->unwinder)
		unwinder__on_grown(s->unwinder, walk_rows_moved, s);
	*out = s;
	return 0;
cleanup:
	sampler__free(s);
	return err;
}

int sampler__unwind_status(const struct sampler *s)
{
	return s->unwind_err;
}

bool sampler__copies(const struct sampler *s)
{
	return s->copy;
}

uint64_t sampler__space_of(struct sampler *s, uint32_t pid)
{
	__u64 space = 0;

	if (bpf_map_lookup_elem(FD(&s->cur, spaces), &pid, &space))
		return 0;
	return space;
}

static int set_target(struct sampler *s, uint32_t pid, __u32 value)
{
	int err;

	err = bpf_map_update_elem(FD(&s->cur, targets), &pid, &value, BPF_ANY);
	if (err) {
		err = -errno;
		pr_err("cannot add PID %u to the targets map: %s", pid, strerror(-err));
	}
	return err;
}

int sampler__add_target(struct sampler *s, uint32_t pid)
{
	return set_target(s, pid, CPROF_TARGET_ON);
}

int sampler__add_command(struct sampler *s, uint32_t pid)
{
	s->command_pid = pid;
	return set_target(s, pid, CPROF_TARGET_ON);
}

int sampler__prune_targets(struct sampler *s)
{
	int fd = FD(&s->cur, targets), n = 0;
	__u32 key, next, *dead = NULL, ndead = 0, cap = 0, *tmp;
	bool first = true;
	char path[32];

	if (!s->opts.filter_pids)
		return 0;
	/* Collect first: deleting while walking a hash map restarts the walk. */
	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		snprintf(path, sizeof(path), "/proc/%u", key);
		if (access(path, F_OK) == 0)
			continue;
		if (ndead == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(dead, cap * sizeof(*dead));
			if (!tmp)
				break;
			dead = tmp;
		}
		dead[ndead++] = key;
	}
	for (__u32 i = 0; i < ndead; i++)
		n += bpf_map_delete_elem(fd, &dead[i]) == 0;
	free(dead);
	return n;
}

/* Attaches a program to a tracepoint event opened by open_tracepoints(). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, int *fd)
{
	struct bpf_link *link;

	link = perf_attach__link(prog, *fd);
	if (link)
		*fd = -1; /* the link owns it now */
	return link;
}

/* Attaches the fork, exec and exit hooks of instance k to the tracepoint events. */
static void attach_hooks(struct sampler *s, struct instance *k)
{
	struct bpf_program *progs[HOOK_MAX] = {
		s->cfg.fork_layout == CPROF_FORK_STATIC_COMM ? PROG(k, cprof_fork_static_comm)
							     : PROG(k, cprof_fork_dynamic_comm),
		PROG(k, cprof_exec),
		PROG(k, cprof_exit),
	};
	int i, err;

	if (s->cfg.fork_layout == CPROF_FORK_NONE)
		return;
	err = s->tracepoint_err;
	for (i = 0; i < HOOK_MAX && !err; i++) {
		s->hook_links[i] = attach_tracepoint(progs[i], &s->hook_fds[i]);
		if (!s->hook_links[i])
			err = -errno;
	}
	if (err)
		pr_warn("cannot attach to %s: %s: %s", i ? hook_names[i - 1] : hook_names[0],
			strerror(-err),
			s->cfg.follow_children
				? "children started during the profile are not followed"
				: "a sample taken before its process's exec may be named after "
				  "the program it ran next");
	s->spaces = !err;
}

int sampler__start(struct sampler *s)
{
	int err;

	attach_hooks(s, &s->cur);
	/*
	 * The command's process waits to be released before it execs; until its
	 * exec (which the hook sees) it runs cprof's code, which is not sampled.
	 * Without the hook its samples from before the exec are taken as before.
	 */
	if (s->command_pid && s->hook_links[HOOK_EXEC]) {
		err = set_target(s, s->command_pid, CPROF_TARGET_BEFORE_EXEC);
		if (err)
			return err;
	}
	err = perf_attach__attach(s->pa, sample_prog(&s->cur));
	if (err)
		return err;
	s->started = true;
	err = start_walker(s);
	if (err)
		pr_info("user stacks are walked in user space: cannot load the in-kernel walk: %s",
			strerror(-err));
	return 0;
}

static int open_events_disabled(struct sampler *s)
{
	return perf_attach__open(s->opts.hz, false, &s->next_pa);
}

/*
 * Runs of a program the kernel skipped: it runs no BPF program on a CPU
 * where one already runs, or where a bpf() call on a map is under way, and
 * counts that (bpf_prog_info.recursion_misses, 5.12+; tracepoint programs
 * from about 6.7, perf_event ones not everywhere). 0 if unknown.
 */
static uint64_t prog_skipped(int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (prog_fd < 0 || bpf_prog_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

/* The same for the program behind a link. */
static uint64_t link_skipped(struct bpf_link *link)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	uint64_t n;
	int fd;

	memset(&info, 0, sizeof(info));
	if (!link || bpf_link_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return 0;
	fd = bpf_prog_get_fd_by_id(info.prog_id);
	if (fd < 0)
		return 0;
	n = prog_skipped(fd);
	close(fd);
	return n;
}

void sampler__skipped(const struct sampler *s, uint64_t *samples, uint64_t *hooks)
{
	*samples = 0;
	if (s->cur.obj)
		*samples = prog_skipped(bpf_program__fd(sample_prog(&s->cur)));
	*hooks = s->hooks_skipped_before;
	for (int i = 0; i < HOOK_MAX; i++)
		*hooks += link_skipped(s->hook_links[i]);
}

/* The bytes a preallocated map holds (0 for one that allocates as it fills). */
static uint64_t map_bytes(const struct bpf_map *m, int ncpus)
{
	uint64_t n;

	if (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC)
		return 0;
	n = (uint64_t)(bpf_map__key_size(m) + bpf_map__value_size(m)) * bpf_map__max_entries(m);
	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return n * (uint64_t)ncpus;
	default:
		return n;
	}
}

uint64_t sampler__map_bytes(const struct sampler *s)
{
	const struct bpf_map *m;
	uint64_t n = 0;

	if (!s->cur.obj)
		return 0;
	bpf_object__for_each_map(m, s->cur.obj)
	{
		if (bpf_map__fd(m) >= 0)
			n += map_bytes(m, s->ncpus_possible);
	}
	return n;
}

int sampler__follow_late(struct sampler *s, uint32_t parent, uint32_t child)
{
	int fd = FD(&s->cur, targets);
	char path[32];
	__u32 value;

	if (!s->opts.filter_pids || !s->opts.follow_children || s->stopped ||
	    bpf_map_lookup_elem(fd, &parent, &value) || value != CPROF_TARGET_ON)
		return 0;
	/* Gone already: its entry may have been pruned (sampler__prune_targets), not missed. */
	snprintf(path, sizeof(path), "/proc/%u", child);
	if (access(path, F_OK))
		return 0;
	value = CPROF_TARGET_ON;
	if (!bpf_map_update_elem(fd, &child, &value, BPF_NOEXIST))
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

static void on_ring_sample(void *ctx, const void *data, uint32_t size);

/*
 * The head start's events were closed by the handover (disabled: their
 * rings hold all they will): what is left in them is taken, and their
 * memory returned.
 */
static void end_head_start(struct sampler *s)
{
	event_reader__flush(s->copies, on_ring_sample, s);
	s->head_lost = event_reader__lost(s->copies);
	event_reader__free(s->copies);
	s->copies = NULL;
	close(s->copies_map_fd);
	s->copies_map_fd = -1;
}

/*
 * The head start's events are replaced by plain ones, CPU by CPU (each
 * tick runs on one or the other), so that their rings, which hold all
 * they will, are emptied and freed (end_head_start). Called by the first
 * drain.
 */
static int replace_head_start(struct sampler *s)
{
	int err = open_events_disabled(s);

	if (!err)
		err = perf_attach__handover(s->pa, s->next_pa, sample_prog(&s->cur));
	if (err)
		return err;
	perf_attach__free(s->pa);
	s->pa = s->next_pa;
	s->next_pa = NULL;
	end_head_start(s);
	return 0;
}

void sampler__stop(struct sampler *s)
{
	if (!s || s->stopped)
		return;
	perf_attach__free(s->pa);
	s->pa = NULL;
	perf_attach__free(s->next_pa);
	s->next_pa = NULL;
	for (int i = 0; i < HOOK_MAX; i++) {
		s->hooks_skipped_before += link_skipped(s->hook_links[i]);
		bpf_link__destroy(s->hook_links[i]);
		s->hook_links[i] = NULL;
	}
	s->stopped = true;
}

int sampler__cpu_count(const struct sampler *s)
{
	return perf_attach__cpu_count(s->pa);
}

int sampler__fd(const struct sampler *s)
{
	return s->reader ? event_reader__fd(s->reader) : -1;
}

/*
 * A sample of the head start, taken on any CPU before the program ran
 * there: counted as the program counts its runs, and kept as it keeps
 * them in a whole-system run (the idle task's with include_idle only).
 */
static bool keep_head_start(struct sampler *s, const struct cprof_copy *c)
{
	uint64_t seen;

	s->head_stats[CPROF_STAT_TICKS]++;
	if (!s->head_first || c->time < s->head_first)
		s->head_first = c->time;
	if (!c->tid) {
		s->head_stats[CPROF_STAT_IDLE]++;
		if (!s->opts.include_idle)
			return false;
	}
	s->head_stats[CPROF_STAT_SAMPLES]++;
	s->head_stats[CPROF_STAT_COPIES]++;
	s->head_stats[CPROF_STAT_COPY_EARLY]++;
	if (c->pid && !u64map__get(s->head_seen, c->pid, &seen)) {
		if (u64map__set(s->head_seen, c->pid, 1))
			s->lost_notify++;
		announce_pid(s, c->pid);
	}
	return true;
}

/* A sample from a sampling event's ring, handed out as the BPF side's copies are. */
static void on_ring_sample(void *ctx, const void *data, uint32_t size)
{
	struct sampler *s = ctx;
	struct cprof_copy *c = s->copy_buf;

	if (perf_sample__parse(data, size, &s->layout, c)) {
		s->copies_bad++;
		return;
	}
	/* Taken before the program was attached: not filtered, ours in the head start only. */
	if (c->time < s->copies_from && (!s->head_start || !keep_head_start(s, c)))
		return;
	if (s->opts.on_copy)
		s->opts.on_copy(s->opts.copy_ctx, c,
				offsetof(struct cprof_copy, stack) + c->stack_bytes);
	else
		s->spills_dropped++;
}

int sampler__consume(struct sampler *s, sampler_process_fn fn, void *ctx, bool now)
{
	void (*take)(struct event_reader * r, event_reader_fn fn, void *ctx) =
		now ? event_reader__flush : event_reader__take;

	if (!s->reader)
		return 0;
	s->poll_fn = fn;
	s->poll_ctx = ctx;
	s->polled = 0;
	for (size_t i = 0; i < s->nearly; i++, s->polled++)
		fn(ctx, s->early_pids[i]);
	s->nearly = 0;
	take(s->reader, on_notify, s);
	/* After the notifications: a process is known before its samples. */
	if (s->copies)
		take(s->copies, on_ring_sample, s);
	s->poll_fn = NULL;
	return s->polled;
}

uint64_t sampler__head_start_first(const struct sampler *s)
{
	return s->head_first;
}

int sampler__read_stats(struct sampler *s, uint64_t *stats)
{
	uint64_t *vals;
	__u32 i;
	int cpu, err = 0;

	vals = calloc(s->ncpus_possible, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < CPROF_STAT_MAX; i++) {
		stats[i] = 0;
		if (bpf_map_lookup_elem(FD(&s->cur, stats), &i, vals)) {
			err = -errno;
			break;
		}
		for (cpu = 0; cpu < s->ncpus_possible; cpu++)
			stats[i] += vals[cpu];
	}
	free(vals);
	for (i = 0; !err && i < CPROF_STAT_MAX; i++)
		stats[i] += s->head_stats[i];
	/* Samples the rings had no room for, or that made no sense, are lost copies. */
	if (!err)
		stats[CPROF_STAT_COPIES_LOST] += (s->copies ? event_reader__lost(s->copies) : 0) +
						 s->head_lost + s->copies_bad;
	return err;
}

uint64_t sampler__lost_notifications(const struct sampler *s)
{
	return s->lost_notify + (s->reader ? event_reader__lost(s->reader) : 0);
}

uint64_t sampler__lost_spills(const struct sampler *s)
{
	return s->spills_dropped;
}

uint64_t sampler__missing_stacks(const struct sampler *s)
{
	return s->missing_stacks;
}

static uint64_t read_stat(struct sampler *s, __u32 idx, uint64_t *vals)
{
	uint64_t sum = 0;
	int cpu;

	if (bpf_map_lookup_elem(FD(&s->cur, stats), &idx, vals))
		return 0;
	for (cpu = 0; cpu < s->ncpus_possible; cpu++)
		sum += vals[cpu];
	return sum;
}

bool sampler__should_drain(struct sampler *s)
{
	uint64_t vals[s->ncpus_possible], keys, collisions;

	/* Called every poll: a few lookups, not the whole stats array. */
	keys = read_stat(s, s->cfg.active_set ? CPROF_STAT_NEW_KEYS_SET1 : CPROF_STAT_NEW_KEYS_SET0,
			 vals) -
	       s->keys_at_flip;
	if (keys >= s->opts.count_entries / 4)
		return true;
	/* The unwinder's object keeps stacks by hash: no stack map, no collision. */
	if (s->cur.uk)
		return false;
	collisions = read_stat(s, CPROF_STAT_USER_COLLISION, vals) +
		     read_stat(s, CPROF_STAT_KERN_COLLISION, vals) +
		     read_stat(s, CPROF_STAT_SPILLED, vals);
	/*
	 * Collision odds grow with the stack map's fill, and a collided stack
	 * stays lost until its bucket is cleared (or costs a whole stack sent
	 * through the perf buffer): drain early in both cases.
	 */
	return keys * 2 >= s->opts.stack_entries / 64 || collisions != s->collisions_at_flip;
}

/* in_flight is per CPU: a sample is in flight on a set while any CPU counts one. */
static int wait_in_flight(struct sampler *s, __u32 set)
{
	int fd = FD(&s->cur, in_flight), waited, cpu;
	uint64_t vals[s->ncpus_possible], n = 0;

	for (waited = 0; waited < IN_FLIGHT_WAIT_US; waited += 50) {
		if (bpf_map_lookup_elem(fd, &set, vals))
			return -errno;
		for (n = 0, cpu = 0; cpu < s->ncpus_possible; cpu++)
			n += vals[cpu];
		if (n == 0)
			return 0;
		usleep(50);
	}
	pr_warn("samples still in flight on map set %u after 1 s (%llu); draining anyway", set,
		(unsigned long long)n);
	return 0;
}

/* Returns the frames of a stack id, reading the stack map once per drain. */
static const uint64_t *stack_frames(struct sampler *s, int fd, int id, uint32_t *n, int *err)
{
	uint64_t *ips;
	uint32_t i;

	*n = 0;
	*err = 0;
	if (id < 0) {
		/* -EFAULT: there is no such stack (user-mode sample, kernel thread). */
		if (id != -EFAULT)
			*err = id;
		return NULL;
	}
	if ((uint32_t)id >= s->opts.stack_entries) {
		*err = -ERANGE;
		return NULL;
	}
	/* Made at the first stack read: the unwinder's object has no stack map. */
	if (!s->stack_cache) {
		s->stack_cache = calloc(s->opts.stack_entries, sizeof(*s->stack_cache));
		s->stack_cache_ids = calloc(s->opts.stack_entries, sizeof(*s->stack_cache_ids));
		if (!s->stack_cache || !s->stack_cache_ids) {
			free(s->stack_cache);
			free(s->stack_cache_ids);
			s->stack_cache = NULL;
			s->stack_cache_ids = NULL;
			*err = -ENOMEM;
			return NULL;
		}
	}
	ips = s->stack_cache[id];
	if (!ips) {
		ips = calloc(CPROF_MAX_STACK_DEPTH, sizeof(*ips));
		if (!ips) {
			*err = -ENOMEM;
			return NULL;
		}
		if (bpf_map_lookup_elem(fd, &id, ips)) {
			free(ips);
			s->missing_stacks++;
			*err = -ENOENT;
			return NULL;
		}
		s->stack_cache[id] = ips;
		s->stack_cache_ids[s->stack_cache_n++] = id;
	}
	for (i = 0; i < CPROF_MAX_STACK_DEPTH && ips[i]; i++)
		;
	*n = i;
	return ips;
}

/*
 * A stack named by its hash (the unwinder's object), into *ips and *n;
 * -ENOENT when its record never came.
 */
static int hashed_frames(struct sampler *s, const struct cprof_stack_hash *h, const uint64_t **ips,
			 uint32_t *n, const struct walked_stack **out)
{
	const __u64 hash[2] = {h->lo, h->hi};
	const struct walked_stack *w = walked_stacks__get(s->walked, hash);

	*out = w;
	if (!w) {
		s->missing_stacks++;
		return -ENOENT;
	}
	*ips = w->ips;
	*n = w->n;
	return 0;
}

static bool has_hash(const struct cprof_stack_hash *h)
{
	return h->lo || h->hi;
}

/* One count of the set: its key's stacks read (the kernel's from the drain's cache) and fn told. */
static void emit(struct sampler *s, const struct cprof_key *k, __u64 count, int stacks_fd,
		 sampler_entry_fn fn, void *ctx)
{
	const struct walked_stack *w;
	struct sampler_entry e;

	memset(&e, 0, sizeof(e));
	e.pid = k->pid;
	e.space = k->space;
	e.tid = k->tid;
	memcpy(e.comm, k->comm, CPROF_COMM_LEN);
	e.count = count;
	if (s->walked && has_hash(&k->user_hash)) {
		e.user_err = hashed_frames(s, &k->user_hash, &e.user_ips, &e.user_n, &w);
		e.user_walked = w && w->kind == CPROF_USTACK_WALKED;
		e.user_stop = w ? w->stop : CPROF_STOP_NONE;
	} else {
		e.user_ips =
			stack_frames(s, stacks_fd, (int)k->user_stack_id, &e.user_n, &e.user_err);
	}
	if (s->walked && has_hash(&k->kern_hash))
		e.kern_err = hashed_frames(s, &k->kern_hash, &e.kern_ips, &e.kern_n, &w);
	else
		e.kern_ips =
			stack_frames(s, stacks_fd, (int)k->kern_stack_id, &e.kern_n, &e.kern_err);
	fn(ctx, &e);
}

/* Counts one key at a time, where the kernel has no batches: three calls a key. */
static int drain_counts_by_key(struct sampler *s, int counts_fd, int stacks_fd, sampler_entry_fn fn,
			       void *ctx)
{
	struct cprof_key *keys = NULL, *tmp;
	size_t nkeys = 0, cap = 0, i;
	__u64 count;
	int err = 0;

	/* Collect keys first: deleting while iterating a hash map restarts the walk. */
	for (;;) {
		if (nkeys == cap) {
			cap = cap ? cap * 2 : 256;
			tmp = realloc(keys, cap * sizeof(*keys));
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			keys = tmp;
		}
		if (bpf_map_get_next_key(counts_fd, nkeys ? &keys[nkeys - 1] : NULL, &keys[nkeys]))
			break;
		nkeys++;
	}
	for (i = 0; i < nkeys; i++)
		if (!bpf_map_lookup_elem(counts_fd, &keys[i], &count))
			emit(s, &keys[i], count, stacks_fd, fn, ctx);
	for (i = 0; i < nkeys; i++)
		bpf_map_delete_elem(counts_fd, &keys[i]);
cleanup:
	free(keys);
	return err;
}

/* The counts in a few calls (map_take.h), then their stacks. */
static int drain_counts_batched(struct sampler *s, int counts_fd, int stacks_fd,
				sampler_entry_fn fn, void *ctx)
{
	int err = map_take__all(s->take, counts_fd);
	size_t i, n = map_take__count(s->take);

	for (i = 0; i < n; i++)
		emit(s, map_take__key(s->take, i), *(const __u64 *)map_take__value(s->take, i),
		     stacks_fd, fn, ctx);
	return err;
}

/* Tells the kernel which walked stacks user space no longer keeps: it sends them again. */
static void end_drain(struct sampler *s)
{
	const struct cprof_stack_hash *h;
	struct cprof_stack_hash slot, none = {0, 0};
	__u32 key;
	int fd;
	size_t i, n;

	if (!s->walked)
		return;
	fd = FD(&s->cur, known_stacks);
	walked_stacks__end_drain(s->walked, &h, &n);
	/*
	 * A slot another stack took since is left to it. One the kernel takes
	 * between the read and the clear is only sent again: the kernel marks
	 * a stack known after sending it, never before.
	 */
	for (i = 0; i < n; i++) {
		key = (__u32)h[i].lo & (CPROF_KNOWN_SLOTS - 1);
		if (!bpf_map_lookup_elem(fd, &key, &slot) && slot.lo == h[i].lo &&
		    slot.hi == h[i].hi)
			bpf_map_update_elem(fd, &key, &none, BPF_ANY);
	}
}

static int drain_set(struct sampler *s, __u32 set, sampler_entry_fn fn, void *ctx)
{
	int counts_fd = set ? FD(&s->cur, counts1) : FD(&s->cur, counts0);
	int stacks_fd = set ? FD(&s->cur, stacks1) : FD(&s->cur, stacks0);
	__u32 i;
	int err;

	err = drain_counts_batched(s, counts_fd, stacks_fd, fn, ctx);
	if (err == -EOPNOTSUPP)
		err = drain_counts_by_key(s, counts_fd, stacks_fd, fn, ctx);
	for (i = 0; i < s->stack_cache_n; i++) {
		__u32 id = s->stack_cache_ids[i];

		bpf_map_delete_elem(stacks_fd, &id);
		free(s->stack_cache[id]);
		s->stack_cache[id] = NULL;
	}
	s->stack_cache_n = 0;
	return err;
}

static uint32_t spill_frames(uint32_t bytes)
{
	uint32_t n = bytes / sizeof(uint64_t);

	return n < CPROF_MAX_STACK_DEPTH ? n : CPROF_MAX_STACK_DEPTH;
}

/* Reports the spilled samples of set (all once stopped) and forgets them. */
static void drain_spills(struct sampler *s, __u32 set, bool all, sampler_entry_fn fn, void *ctx)
{
	struct cprof_spill *list;
	size_t i, n;

	/* Their samples ended before in_flight fell: what they sent is in the buffer. */
	if (s->reader)
		event_reader__flush(s->reader, on_notify, s);
	if (s->walked_reader)
		event_reader__flush(s->walked_reader, on_notify, s);
	if (s->copies)
		event_reader__flush(s->copies, on_ring_sample, s);
	/*
	 * Taken out of the sampler first: fn may read the rings again
	 * (sampler__consume, so that no stack copy waits out a long drain),
	 * which adds the spills of the set now filling.
	 */
	list = s->spills;
	n = s->nspills;
	s->spills = NULL;
	s->nspills = 0;
	s->spills_cap = 0;
	for (i = 0; i < n; i++) {
		const struct cprof_spill *sp = &list[i];
		struct sampler_entry e = {
			.pid = sp->pid,
			.space = sp->space,
			.tid = sp->tid,
			.count = 1,
			.user_ips = (const uint64_t *)sp->user,
			.user_n = spill_frames(sp->user_bytes),
			.kern_ips = (const uint64_t *)sp->kern,
			.kern_n = spill_frames(sp->kern_bytes),
			.user_walked = sp->user_walked != 0,
			.user_stop = sp->user_stop,
		};

		if (!all && sp->set != set) {
			keep_spill(s, sp);
			continue;
		}
		memcpy(e.comm, sp->comm, CPROF_COMM_LEN);
		fn(ctx, &e);
	}
	free(list);
}

/*
 * Reports the samples set's stack records counted (all once stopped) and
 * forgets them; drain_spills read the rings first.
 */
static void drain_counted(struct sampler *s, __u32 set, bool all, sampler_entry_fn fn, void *ctx)
{
	struct counted *list = s->counted;
	size_t i, n = s->ncounted, cap = s->counted_cap;

	/* Taken out first, as the spills: fn may read the rings again. */
	s->counted = NULL;
	s->ncounted = 0;
	s->counted_cap = 0;
	for (i = 0; i < n; i++) {
		const struct counted *c = &list[i];

		if (!all && c->set != set) {
			add_counted(s, c);
			continue;
		}
		emit(s, &c->key, 1, c->set ? FD(&s->cur, stacks1) : FD(&s->cur, stacks0), fn, ctx);
	}
	/* Most drains keep nothing: the list's memory serves the next interval. */
	if (s->counted) {
		free(list);
		return;
	}
	s->counted = list;
	s->counted_cap = cap;
}

int sampler__drain(struct sampler *s, sampler_entry_fn fn, void *ctx)
{
	uint64_t st[CPROF_STAT_MAX];
	__u32 old = s->cfg.active_set;
	int err;

	if (s->head_start && !s->head_over && s->started && !s->stopped) {
		if (!s->head_err)
			s->head_err = replace_head_start(s);
		if (s->head_err)
			return s->head_err;
		s->head_over = true;
	}
	s->cfg.active_set ^= 1;
	err = update_config(s);
	if (err)
		return err;
	/*
	 * The other half of the BPF side's locked add: our store of active_set
	 * must be visible before we read in_flight, or a sample that still saw
	 * the old set could be missed.
	 */
	__sync_synchronize();
	err = wait_in_flight(s, old);
	if (err)
		return err;
	if (!sampler__read_stats(s, st)) {
		s->keys_at_flip =
			st[s->cfg.active_set ? CPROF_STAT_NEW_KEYS_SET1 : CPROF_STAT_NEW_KEYS_SET0];
		s->collisions_at_flip = st[CPROF_STAT_USER_COLLISION] +
					st[CPROF_STAT_KERN_COLLISION] + st[CPROF_STAT_SPILLED];
	}
	drain_spills(s, old, s->stopped, fn, ctx);
	drain_counted(s, old, s->stopped, fn, ctx);
	err = drain_set(s, old, fn, ctx);
	/* Once stopped nothing writes to either set: take the other one too. */
	if (!err && s->stopped)
		err = drain_set(s, s->cfg.active_set, fn, ctx);
	end_drain(s);
	return err;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->unwinder)
		unwinder__on_grown(s->unwinder, NULL, NULL);
	sampler__stop(s);
	stop_walker(s);
	event_reader__free(s->copies);
	if (s->copies_map_fd >= 0)
		close(s->copies_map_fd);
	free(s->copy_buf);
	event_reader__free(s->reader);
	if (s->events_fd >= 0)
		close(s->events_fd);
	event_reader__free(s->walked_reader);
	if (s->walked_fd >= 0)
		close(s->walked_fd);
	close_hook_fds(s);
	instance_destroy(&s->cur);
	free(s->stack_cache);
	free(s->stack_cache_ids);
	map_take__free(s->take);
	walked_stacks__free(s->walked);
	free(s->early_pids);
	u64map__free(s->head_seen);
	free(s->spills);
	free(s->counted);
	free(s);
}
