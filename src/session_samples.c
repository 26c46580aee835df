// SPDX-License-Identifier: MIT
/*
 * The samples of a run into its profile: the drained entries (stacks by
 * id, walked in the kernel or by frame pointers), the stack copies walked
 * in user space once the records before them were applied, the frames that
 * say a stack was lost or cut short, and the thread names of copies.
 */
#include "session_internal.h"

#define LOG_MODULE NULL
#include "lib/log.h"

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

void run__on_entry(void *ctx, const struct sampler_entry *e)
{
	struct run *r = ctx;

	run__catch_up(r);
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

void run__free_copy(struct run *r, struct cprof_copy *c)
{
	block_pool__put(r->copy_pool, c, offsetof(struct cprof_copy, stack) + c->stack_bytes);
}

/*
 * Walks the copies taken before `before`: every record timed before them
 * has been applied, so their processes' regions are those they ran with.
 */
void run__walk_copies(struct run *r, uint64_t before)
{
	size_t i;

	for (i = 0; i < r->ncopies && r->copies[i]->time < before; i++) {
		walk_copy(r, r->copies[i]);
		run__free_copy(r, r->copies[i]);
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

void run__free_thread_names(struct run *r)
{
	uint64_t tid, v;
	size_t pos = 0;

	while (r->thread_names && u64map__next(r->thread_names, &pos, &tid, &v))
		free((void *)(uintptr_t)v);
	u64map__free(r->thread_names);
}

/* A stack copy from the sampler: queued in time order until its records are in. */
void run__on_copy(void *ctx, const void *data, uint32_t size)
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
