// SPDX-License-Identifier: MIT
/*
 * The per-CPU dummy events and their rings. Every attribute used exists since
 * Linux 4.1 (use_clockid being the newest), so this works from 4.18 on; the
 * MMAP2 records carry device and inode, as /proc/PID/maps does, not a build
 * ID (attr.build_id is 5.12+).
 *
 * A ring is read like perf does: data_head loaded with acquire semantics,
 * records copied out (reassembled when they wrap around the ring's end), then
 * data_tail stored with release semantics, which frees the space for the
 * kernel. The mapping is writable, so the kernel never overwrites unread
 * records: when a ring is full it drops them and says how many in a
 * PERF_RECORD_LOST.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample/perf_attach.h"
#include "sample/task_events.h"

#define LOG_MODULE "events"
#include "lib/log.h"
#include "lib/u64map.h"

#define SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)
/* A record's size is a u16: the largest one that can need reassembling. */
#define MAX_RECORD 65535

struct ring {
	int fd;
	int cpu;
	struct perf_event_mmap_page *meta; /* NULL until mapped */
	const unsigned char *data;
	uint64_t size; /* a power of two */
};

struct task_events {
	int epfd;
	int nrings;
	struct ring *rings;
	size_t map_len;
	struct reorder *queue;
	struct u64map *forks;	/* pid -> ppid, of the process forks in queue */
	unsigned char *scratch; /* a record that wraps around its ring's end, made whole */
	struct task_events_stats stats;
};

static struct perf_event_attr event_attr(unsigned int wakeup_bytes)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = SAMPLE_TYPE,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};

	if (wakeup_bytes) {
		attr.watermark = 1;
		attr.wakeup_watermark = wakeup_bytes;
	} else {
		attr.wakeup_events = 1;
	}
	return attr;
}

static int open_event(struct perf_event_attr *attr, int cpu)
{
	int fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Clears attribute i of those an old or reduced kernel may lack; false past the last. */
static bool drop_attribute(struct perf_event_attr *attr, int i, const char **name)
{
	switch (i) {
	case 0:
		*name = "use_clockid/CLOCK_MONOTONIC (Linux 4.1)";
		attr->use_clockid = 0;
		attr->clockid = 0;
		return true;
	case 1:
		*name = "comm_exec (Linux 3.16)";
		attr->comm_exec = 0;
		return true;
	case 2:
		*name = "mmap2 (Linux 3.16)";
		attr->mmap2 = 0;
		return true;
	case 3:
		*name = "sample_id_all (Linux 2.6.38)";
		attr->sample_id_all = 0;
		return true;
	default:
		return false;
	}
}

/*
 * EINVAL names no attribute: try again without each one in turn, and name
 * the first whose absence the kernel accepts.
 */
static const char *missing_attribute(const struct perf_event_attr *attr, int cpu)
{
	struct perf_event_attr probe = *attr;
	const char *name;
	int i, fd;

	for (i = 0; drop_attribute(&probe, i, &name); i++, probe = *attr) {
		fd = open_event(&probe, cpu);
		if (fd >= 0) {
			close(fd);
			return name;
		}
	}
	return NULL;
}

static void explain_open_error(int err, const struct perf_event_attr *attr, int cpu)
{
	const char *what;

	switch (err) {
	case -EACCES:
	case -EPERM:
		pr_err("cannot open the task-tracking perf events: %s; run as root or with "
		       "CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8)",
		       strerror(-err));
		break;
	case -ENOENT:
	case -EOPNOTSUPP:
		pr_err("cannot open the task-tracking perf events: %s; this kernel has no "
		       "software dummy event (Linux 3.12+)",
		       strerror(-err));
		break;
	case -ENOSYS:
		pr_err("perf_event_open is not available in this kernel (CONFIG_PERF_EVENTS=n)");
		break;
	case -EINVAL:
		what = missing_attribute(attr, cpu);
		pr_err("cannot open the task-tracking perf events: %s; this kernel lacks %s",
		       strerror(-err),
		       what ? what : "an attribute they need (which one is unknown)");
		break;
	default:
		pr_err("cannot open the task-tracking perf events: %s", strerror(-err));
	}
}

static int map_ring(struct task_events *te, struct ring *r, unsigned int pages)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t off;
	void *p;
	int err;

	p = mmap(NULL, te->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		pr_err("cannot map the task-tracking ring of CPU %d (%zu KiB): %s%s", r->cpu,
		       te->map_len / 1024, strerror(-err),
		       err == -EPERM ? "; over kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK" : "");
		return err;
	}
	r->meta = p;
	/* data_offset and data_size exist since Linux 4.1; 0 before. */
	off = r->meta->data_offset ? r->meta->data_offset : page;
	r->size = r->meta->data_size ? r->meta->data_size : (uint64_t)pages * page;
	/* Reading masks positions with size - 1. */
	if ((r->size & (r->size - 1)) || off + r->size > te->map_len) {
		pr_err("unexpected layout of the task-tracking ring of CPU %d: %llu bytes at %llu",
		       r->cpu, (unsigned long long)r->size, (unsigned long long)off);
		return -EINVAL;
	}
	r->data = (const unsigned char *)p + off;
	return 0;
}

static int watch_ring(struct task_events *te, struct ring *r)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = r - te->rings};
	int err;

	if (epoll_ctl(te->epfd, EPOLL_CTL_ADD, r->fd, &ev)) {
		err = -errno;
		pr_err("cannot watch the task-tracking event of CPU %d: %s", r->cpu,
		       strerror(-err));
		return err;
	}
	return 0;
}

static int open_rings(struct task_events *te, const int *cpus, int ncpus, unsigned int pages,
		      unsigned int wakeup_bytes)
{
	struct perf_event_attr attr = event_attr(wakeup_bytes);
	struct ring *r;
	int i, fd, err;

	for (i = 0; i < ncpus; i++) {
		fd = open_event(&attr, cpus[i]);
		/* A CPU that went offline since we read the list is not an error. */
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			explain_open_error(fd, &attr, cpus[i]);
			return fd;
		}
		r = &te->rings[te->nrings++];
		r->fd = fd;
		r->cpu = cpus[i];
		err = map_ring(te, r, pages);
		if (!err)
			err = watch_ring(te, r);
		if (err)
			return err;
	}
	if (!te->nrings) {
		pr_err("no online CPU could be followed");
		return -ENODEV;
	}
	return 0;
}

int task_events__open_wakeup(unsigned int pages, unsigned int wakeup_bytes,
			     struct task_events **out)
{
	struct task_events *te = NULL;
	int *cpus = NULL;
	int ncpus, err;

	*out = NULL;
	if (!pages || (pages & (pages - 1)) || pages > 65536) {
		pr_err("the ring size must be a power of two pages, not %u", pages);
		return -EINVAL;
	}
	ncpus = perf_attach__online_cpus(&cpus);
	if (ncpus < 0)
		return ncpus;
	te = calloc(1, sizeof(*te));
	if (!te) {
		err = -ENOMEM;
		goto cleanup;
	}
	te->epfd = -1;
	te->rings = calloc(ncpus ? ncpus : 1, sizeof(*te->rings));
	te->scratch = malloc(MAX_RECORD);
	te->forks = u64map__new();
	if (!te->rings || !te->scratch || !te->forks || reorder__new(&te->queue)) {
		err = -ENOMEM;
		goto cleanup;
	}
	te->map_len = (size_t)(pages + 1) * sysconf(_SC_PAGESIZE);
	te->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (te->epfd < 0) {
		err = -errno;
		pr_err("cannot create an epoll descriptor: %s", strerror(-err));
		goto cleanup;
	}
	err = open_rings(te, cpus, ncpus, pages, wakeup_bytes);
	if (err)
		goto cleanup;
	free(cpus);
	pr_debug("following tasks on %d CPUs, %zu KiB rings", te->nrings, te->map_len / 1024);
	*out = te;
	return 0;
cleanup:
	free(cpus);
	task_events__free(te);
	return err;
}

int task_events__open(unsigned int pages, struct task_events **out)
{
	/*
	 * A wakeup per record cost the reader 6 to 20 times the CPU of a wakeup
	 * per quarter ring in an exec storm (bench/events_cost.c): 170-690 ms
	 * against 25-37 ms per 1,000 execs on a 2-CPU VM. A quarter leaves three
	 * quarters of room while the reader wakes up.
	 */
	return task_events__open_wakeup(pages, pages * sysconf(_SC_PAGESIZE) / 4, out);
}

void task_events__free(struct task_events *te)
{
	int i;

	if (!te)
		return;
	for (i = 0; i < te->nrings; i++) {
		if (te->rings[i].meta)
			munmap(te->rings[i].meta, te->map_len);
		close(te->rings[i].fd);
	}
	if (te->epfd >= 0)
		close(te->epfd);
	reorder__free(te->queue);
	u64map__free(te->forks);
	free(te->scratch);
	free(te->rings);
	free(te);
}

int task_events__fd(const struct task_events *te)
{
	return te->epfd;
}

/* Copies len bytes at ring position pos, which may wrap around the ring's end. */
static void ring_copy(const struct ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & (r->size - 1);
	size_t first = len < r->size - off ? len : r->size - off;

	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

/* The record at pos: in place, or reassembled in scratch when it wraps. */
static const void *ring_record(struct task_events *te, const struct ring *r, uint64_t pos,
			       size_t len)
{
	size_t off = pos & (r->size - 1);

	if (off + len <= r->size)
		return r->data + off;
	ring_copy(r, pos, te->scratch, len);
	return te->scratch;
}

/* Returns 1 when the record was handed out at once (LOST), 0, or -ENOMEM. */
static int take_record(struct task_events *te, const void *rec, size_t size, task_event_fn fn,
		       void *ctx)
{
	struct task_event ev;
	int err;

	te->stats.records++;
	err = perf_record__parse(rec, size, SAMPLE_TYPE, &ev);
	if (err == -ENOTSUP) {
		te->stats.ignored++;
		return 0;
	}
	if (err) {
		te->stats.malformed++;
		return 0;
	}
	if (ev.type == TASK_EVENT_LOST) {
		te->stats.lost += ev.lost;
		fn(ctx, &ev);
		return 1;
	}
	/* Without sample_id_all's time a record cannot be put in order. */
	if (!ev.time) {
		te->stats.malformed++;
		return 0;
	}
	err = reorder__push(te->queue, &ev);
	/* Not kept when out of memory: the fork is then only not found (task_events__fork_queued).
	 */
	if (!err && task_event__process_fork(&ev))
		u64map__set(te->forks, ev.pid, ev.ppid);
	return err;
}

/* Takes the records in [*tail, head), advancing *tail; stops early at a bad size or an error. */
static int take_records(struct task_events *te, const struct ring *r, uint64_t head, uint64_t *tail,
			task_event_fn fn, void *ctx)
{
	struct perf_event_header hdr;
	int n, handed = 0;

	/* Each record moves tail forward by 8 bytes or more, never past head. */
	while (head - *tail >= sizeof(hdr)) {
		ring_copy(r, *tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - *tail)
			break;
		n = take_record(te, ring_record(te, r, *tail, hdr.size), hdr.size, fn, ctx);
		*tail += hdr.size;
		if (n < 0)
			return n;
		handed += n;
	}
	return handed;
}

static int drain_ring(struct task_events *te, struct ring *r, task_event_fn fn, void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int n = 0;

	/* More than the ring holds means head or tail is not what we wrote or read. */
	if (head - tail <= r->size)
		n = take_records(te, r, head, &tail, fn, ctx);
	if (n >= 0 && tail != head) {
		/* Out of step with the record boundaries: drop the rest of what is there. */
		te->stats.malformed++;
		tail = head;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* What the queue hands out goes through here: forks leave te->forks with it. */
struct handing {
	struct task_events *te;
	task_event_fn fn;
	void *ctx;
};

static void hand_out(void *ctx, const struct task_event *ev)
{
	struct handing *h = ctx;

	if (task_event__process_fork(ev))
		u64map__delete(h->te->forks, ev->pid);
	h->fn(h->ctx, ev);
}

int task_events__read(struct task_events *te, uint64_t until, task_event_fn fn, void *ctx)
{
	struct handing h = {te, fn, ctx};
	size_t handed = 0;
	int i, n;

	for (i = 0; i < te->nrings; i++) {
		n = drain_ring(te, &te->rings[i], fn, ctx);
		if (n < 0)
			return n;
		handed += n;
	}
	handed += reorder__pop_until(te->queue, until, hand_out, &h);
	return handed > INT_MAX ? INT_MAX : (int)handed;
}

size_t task_events__queued(const struct task_events *te)
{
	return reorder__count(te->queue);
}

bool task_events__fork_queued(const struct task_events *te, uint32_t pid, uint32_t *ppid)
{
	uint64_t v;

	if (!u64map__get(te->forks, pid, &v))
		return false;
	*ppid = (uint32_t)v;
	return true;
}

void task_events__stats(const struct task_events *te, struct task_events_stats *out)
{
	*out = te->stats;
	out->late = reorder__late(te->queue);
}
