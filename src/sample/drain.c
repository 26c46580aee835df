// SPDX-License-Identifier: MIT
/*
 * The drain. The program counts samples into one of two map sets; draining
 * flips the active set, waits for samples in flight on the old one, then
 * reads and clears it. This keeps stack ids stable while counts refer to
 * them and bounds how full the stack map gets, which is what causes hash
 * collisions (lost stacks). With the unwinder's object a set is a count
 * map only, and stacks are kept by their hashes, each sent once
 * (walked_stacks.h); with the sampler's, a set also has a stack-trace map.
 * Also the counters, and when a drain is due.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/event_reader.h"
#include "sample/map_take.h"
#include "sample/sampler_internal.h"
#include "sample/stack_cache.h"
#include "sample/walked_stacks.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

#define IN_FLIGHT_WAIT_US 1000000

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

/* The frames of a stack id, from the drain's cache; a stack gone from the map is counted. */
static const uint64_t *stack_frames(struct sampler *s, int fd, int id, uint32_t *n, int *err)
{
	const uint64_t *ips = stack_cache__frames(s->stacks, fd, id, n, err);

	if (*err == -ENOENT)
		s->missing_stacks++;
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
	int err;

	err = drain_counts_batched(s, counts_fd, stacks_fd, fn, ctx);
	if (err == -EOPNOTSUPP)
		err = drain_counts_by_key(s, counts_fd, stacks_fd, fn, ctx);
	stack_cache__clear(s->stacks, stacks_fd);
	return err;
}

static uint32_t spill_frames(uint32_t bytes)
{
	uint32_t n = bytes / sizeof(uint64_t);

	return n < CPROF_MAX_STACK_DEPTH ? n : CPROF_MAX_STACK_DEPTH;
}

/* Their samples ended before in_flight fell: what they sent is in the buffers. */
static void flush_buffers(struct sampler *s)
{
	if (s->reader)
		event_reader__flush(s->reader, notifications__on_record, s);
	if (s->walked_reader)
		event_reader__flush(s->walked_reader, notifications__on_record, s);
	if (s->copies)
		event_reader__flush(s->copies, copy_rings__on_sample, s);
}

/* Reports the spilled samples of set (all once stopped) and forgets them. */
static void drain_spills(struct sampler *s, __u32 set, bool all, sampler_entry_fn fn, void *ctx)
{
	struct cprof_spill *list;
	size_t i, n;

	flush_buffers(s);
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
			notifications__keep_spill(s, sp);
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
			notifications__add_counted(s, c);
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

/* The first drain while sampling hands the head start's events over (see copy_rings.c). */
static int hand_over_head_start(struct sampler *s)
{
	if (!s->head_start || s->head_over || !s->started || s->stopped)
		return 0;
	if (!s->head_err)
		s->head_err = copy_rings__replace_head_start(s);
	if (s->head_err)
		return s->head_err;
	s->head_over = true;
	return 0;
}

/* The counters of the set just made active, from which sampler__should_drain counts. */
static void note_flip(struct sampler *s)
{
	uint64_t st[CPROF_STAT_MAX];

	if (sampler__read_stats(s, st))
		return;
	s->keys_at_flip =
		st[s->cfg.active_set ? CPROF_STAT_NEW_KEYS_SET1 : CPROF_STAT_NEW_KEYS_SET0];
	s->collisions_at_flip = st[CPROF_STAT_USER_COLLISION] + st[CPROF_STAT_KERN_COLLISION] +
				st[CPROF_STAT_SPILLED];
}

int sampler__drain(struct sampler *s, sampler_entry_fn fn, void *ctx)
{
	__u32 old = s->cfg.active_set;
	int err;

	err = hand_over_head_start(s);
	if (err)
		return err;
	s->cfg.active_set ^= 1;
	err = sampler__write_config(s);
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
	note_flip(s);
	drain_spills(s, old, s->stopped, fn, ctx);
	drain_counted(s, old, s->stopped, fn, ctx);
	err = drain_set(s, old, fn, ctx);
	/* Once stopped nothing writes to either set: take the other one too. */
	if (!err && s->stopped)
		err = drain_set(s, s->cfg.active_set, fn, ctx);
	end_drain(s);
	return err;
}
