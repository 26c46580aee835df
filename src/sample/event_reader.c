// SPDX-License-Identifier: MIT
/*
 * The events buffer read on a thread; see event_reader.h. The thread waits
 * on the perf buffer's epoll descriptor and a stop descriptor, and reads
 * the rings under the queue's lock, which the main thread takes too to
 * read them itself (event_reader__flush): libbpf's perf buffer is not read
 * from two threads at once.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/block_pool.h"
#define LOG_MODULE "bpf"
#include "lib/log.h"
#include "sample/event_reader.h"

/* Queued bytes at most: past this, records are counted lost. */
#define QUEUE_MAX_BYTES (64u << 20)
/* A stack copy's record and more (a sample of 16 KiB of stack, its registers and callchain). */
#define POOL_BLOCK (20u << 10)
/*
 * Smaller records (a walked stack is 1 KiB at most, a task's event less) are
 * malloc'd: each in a 20 KiB block, the new stacks of a qsort profile
 * (3,800 samples, most of them distinct stacks) cost cprof 700 more page
 * faults, 2,470 instead of 1,780.
 */
#define POOL_MIN (4u << 10)
/* The reading thread's nice value (see run()). */
#define READER_NICE (-10)
/* Kept for reuse, as many as were queued at once (see block_pool.h), up to some 20 MB. */
#define POOL_KEEP 1000

struct record {
	struct record *next;
	uint32_t size;
	uint32_t pad;
	uint64_t data[]; /* 8-byte aligned for the taker */
};

struct event_reader {
	struct perf_buffer *pb;
	pthread_t thread;
	bool started;
	int ready_fd; /* readable while records wait */
	int wake_fd;  /* signalled when records come: ready_fd, or another reader's */
	int stop_fd;  /* readable when the thread must end */
	pthread_mutex_t lock;
	struct record *head, **tail;
	struct block_pool *pool; /* of records */
	size_t queued_bytes;
	size_t max_bytes; /* queued at most: past this, records are counted lost */
	uint64_t lost;	  /* under lock */
};

/* Queues a copy of data; called by libbpf with the lock held. */
static void queue_record(struct event_reader *r, const void *data, uint32_t size)
{
	struct record *rec;

	rec = r->queued_bytes + size > r->max_bytes ? NULL
						    : block_pool__get(r->pool, sizeof(*rec) + size);
	if (!rec) {
		r->lost++;
		return;
	}
	rec->next = NULL;
	rec->size = size;
	memcpy(rec->data, data, size);
	*r->tail = rec;
	r->tail = &rec->next;
	r->queued_bytes += size;
}

static void on_record(void *ctx, int cpu, void *data, __u32 size)
{
	(void)cpu;
	queue_record(ctx, data, size);
}

/* A raw ring's record: samples are queued whole, losses counted. */
static enum bpf_perf_event_ret on_raw(void *ctx, int cpu, struct perf_event_header *hdr)
{
	struct event_reader *r = ctx;
	__u64 lost;

	(void)cpu;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		queue_record(r, hdr, hdr->size);
	} else if (hdr->type == PERF_RECORD_LOST && hdr->size >= sizeof(*hdr) + 16) {
		/* u64 id, u64 lost */
		memcpy(&lost, (const char *)hdr + sizeof(*hdr) + 8, sizeof(lost));
		r->lost += lost;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct event_reader *r = ctx;

	(void)cpu;
	r->lost += cnt;
}

/* Reads the rings into the queue; true if records wait. */
static bool read_rings(struct event_reader *r)
{
	bool waiting;

	pthread_mutex_lock(&r->lock);
	perf_buffer__consume(r->pb);
	waiting = r->head != NULL;
	pthread_mutex_unlock(&r->lock);
	return waiting;
}

static void *run(void *arg)
{
	struct event_reader *r = arg;
	struct pollfd fds[2] = {
		{.fd = perf_buffer__epoll_fd(r->pb), .events = POLLIN},
		{.fd = r->stop_fd, .events = POLLIN},
	};
	uint64_t one = 1;

	/*
	 * A ring this thread is late to empty loses samples, and it only moves
	 * them to memory: at the workload's priority, a busy machine left it
	 * waiting long enough to lose a fifth of the stack copies of
	 * processes that live 2 ms. Without the right (CAP_SYS_NICE), as is.
	 */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), READER_NICE))
		pr_debug("the event reader keeps its priority: %s", strerror(errno));
	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		if (fds[0].revents && read_rings(r) &&
		    write(__atomic_load_n(&r->wake_fd, __ATOMIC_ACQUIRE), &one, sizeof(one)) < 0)
			pr_debug("cannot signal queued events: %s", strerror(errno));
	}
	return NULL;
}

/* The reader without its buffer: the queue, its descriptors; freed on failure. */
static int reader_new(struct event_reader **out)
{
	struct event_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->tail = &r->head;
	r->max_bytes = QUEUE_MAX_BYTES;
	r->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->wake_fd = r->ready_fd;
	if (r->ready_fd < 0 || r->stop_fd < 0 ||
	    block_pool__new(POOL_BLOCK, POOL_MIN, POOL_KEEP, &r->pool)) {
		err = r->ready_fd < 0 || r->stop_fd < 0 ? -errno : -ENOMEM;
		event_reader__free(r);
		return err;
	}
	*out = r;
	return 0;
}

static int reader_start(struct event_reader *r, struct event_reader **out)
{
	int err;

	if (!r->pb) {
		err = -errno;
		goto cleanup;
	}
	err = -pthread_create(&r->thread, NULL, run, r);
	if (err)
		goto cleanup;
	r->started = true;
	*out = r;
	return 0;
cleanup:
	event_reader__free(r);
	return err;
}

int event_reader__new(int map_fd, size_t pages, uint32_t wake_every, struct event_reader **out)
{
	LIBBPF_OPTS(perf_buffer_opts, opts, .sample_period = wake_every);
	struct event_reader *r;
	int err = reader_new(&r);

	*out = NULL;
	if (err)
		return err;
	r->pb = perf_buffer__new(map_fd, pages, on_record, on_lost, r, &opts);
	return reader_start(r, out);
}

int event_reader__new_raw(int map_fd, size_t pages, struct perf_event_attr *attr,
			  const struct event_reader *wake, struct event_reader **out)
{
	struct event_reader *r;
	int err = reader_new(&r);

	*out = NULL;
	if (err)
		return err;
	if (wake)
		r->wake_fd = wake->ready_fd;
	r->pb = perf_buffer__new_raw(map_fd, pages, attr, on_raw, r, NULL);
	return reader_start(r, out);
}

void event_reader__limit(struct event_reader *r, size_t max_bytes)
{
	pthread_mutex_lock(&r->lock);
	r->max_bytes = max_bytes ? max_bytes : QUEUE_MAX_BYTES;
	pthread_mutex_unlock(&r->lock);
}

void event_reader__wake_with(struct event_reader *r, const struct event_reader *wake)
{
	uint64_t one = 1;

	__atomic_store_n(&r->wake_fd, wake->ready_fd, __ATOMIC_RELEASE);
	/* What came before was signalled on our own descriptor, which nobody polls. */
	if (write(wake->ready_fd, &one, sizeof(one)) < 0)
		pr_debug("cannot wake the reader: %s", strerror(errno));
}

int event_reader__count(const struct event_reader *r)
{
	return (int)perf_buffer__buffer_cnt(r->pb);
}

int event_reader__event_fd(const struct event_reader *r, int i)
{
	return perf_buffer__buffer_fd(r->pb, i);
}

static void free_records(struct event_reader *r, struct record *rec)
{
	struct record *next;

	for (; rec; rec = next) {
		next = rec->next;
		block_pool__put(r->pool, rec, sizeof(*rec) + rec->size);
	}
}

void event_reader__free(struct event_reader *r)
{
	uint64_t one = 1;

	if (!r)
		return;
	if (r->started) {
		if (write(r->stop_fd, &one, sizeof(one)) < 0)
			pr_debug("cannot stop the event reader: %s", strerror(errno));
		pthread_join(r->thread, NULL);
	}
	perf_buffer__free(r->pb);
	free_records(r, r->head);
	block_pool__free(r->pool);
	if (r->ready_fd >= 0)
		close(r->ready_fd);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int event_reader__fd(const struct event_reader *r)
{
	return r->ready_fd;
}

void event_reader__take(struct event_reader *r, event_reader_fn fn, void *ctx)
{
	struct record *list, *rec;
	uint64_t n;

	pthread_mutex_lock(&r->lock);
	list = r->head;
	r->head = NULL;
	r->tail = &r->head;
	r->queued_bytes = 0;
	/* Under the lock: a record queued after this read signals again. */
	if (read(r->ready_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		pr_debug("cannot clear queued events: %s", strerror(errno));
	pthread_mutex_unlock(&r->lock);
	for (rec = list; rec; rec = rec->next)
		fn(ctx, rec->data, rec->size);
	free_records(r, list);
}

void event_reader__flush(struct event_reader *r, event_reader_fn fn, void *ctx)
{
	read_rings(r);
	event_reader__take(r, fn, ctx);
}

uint64_t event_reader__lost(const struct event_reader *r)
{
	uint64_t n;

	pthread_mutex_lock((pthread_mutex_t *)&r->lock);
	n = r->lost;
	pthread_mutex_unlock((pthread_mutex_t *)&r->lock);
	return n;
}
