// SPDX-License-Identifier: MIT
/*
 * The BPF program's perf buffers: processes seen for the first time,
 * samples spilled past a stack-map collision, stack copies, and with the
 * unwinder's object the walked stacks it sends once each. Read by
 * sampler__consume, and by the drain before it reads a set.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sample/event_reader.h"
#include "sample/load_errors.h"
#include "sample/sampler_internal.h"
#include "sample/walked_stacks.h"

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
#define WALKED_PAGES 64
#define WALKED_WAKE  64

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
void notifications__keep_spill(struct sampler *s, const void *data)
{
	if (!room_for_one((void **)&s->spills, &s->spills_cap, s->nspills, sizeof(*s->spills))) {
		s->spills_dropped++;
		return;
	}
	memcpy(&s->spills[s->nspills++], data, sizeof(*s->spills));
}

/* A process seen for the first time, handed to the caller of sampler__consume. */
void notifications__announce(struct sampler *s, uint32_t pid)
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
void notifications__add_counted(struct sampler *s, const struct counted *c)
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
	notifications__add_counted(s,
				   &(struct counted){.set = head.count_set - 1, .key = head.key});
}

void notifications__on_record(void *ctx, const void *data, uint32_t size)
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
		notifications__keep_spill(s, data);
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
		notifications__announce(s, ev->pid);
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
	if (*fd < 0 && (err == -EPERM || err == -EACCES) &&
	    load_errors__memlock_too_low(&limit_kib))
		load_errors__explain(err);
	else if (err)
		pr_err("cannot create the %s perf buffer: %s", what, strerror(-err));
	return err;
}

/*
 * The notification buffer, and with the unwinder the walked stacks' (see
 * WALKED_WAKE).
 */
int notifications__open(struct sampler *s)
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

int sampler__fd(const struct sampler *s)
{
	return s->reader ? event_reader__fd(s->reader) : -1;
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
	take(s->reader, notifications__on_record, s);
	/* After the notifications: a process is known before its samples. */
	if (s->copies)
		take(s->copies, copy_rings__on_sample, s);
	s->poll_fn = NULL;
	return s->polled;
}

uint64_t sampler__lost_notifications(const struct sampler *s)
{
	return s->lost_notify + (s->reader ? event_reader__lost(s->reader) : 0);
}

uint64_t sampler__lost_spills(const struct sampler *s)
{
	return s->spills_dropped;
}
