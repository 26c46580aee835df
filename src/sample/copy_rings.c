// SPDX-License-Identifier: MIT
/*
 * The sampling events' own rings, through which samples come with a copy
 * of the user stack: opened at launch as the head start (before the BPF
 * program is loaded), or for a run whose samples are all copies. Their
 * samples are parsed and handed out as the BPF side's copies are.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "lib/clock.h"
#include "lib/u64map.h"
#include "sample/event_reader.h"
#include "sample/load_errors.h"
#include "sample/perf_attach.h"
#include "sample/sampler_internal.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

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
/* The rings of a run without a head start, on a perf event array of ours. */
static int open_own_rings(struct sampler *s)
{
	int err;

	s->copies_map_fd = create_rings_map(s->ncpus_possible);
	if (s->copies_map_fd < 0) {
		err = s->copies_map_fd;
		load_errors__explain(err);
		return err;
	}
	err = open_rings(s->opts.hz, s->copies_map_fd, SAMPLE_RING_PAGES, s->reader, &s->copies);
	if (err)
		pr_err("cannot open the sampling events with their rings: %s%s", strerror(-err),
		       err == -EPERM ? " (over kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK?)"
				     : "");
	return err;
}

int copy_rings__open(struct sampler *s)
{
	int *fds = NULL, *cpus, i, n, err;
	bool running = s->head_start && !s->copy;

	if (!s->copies && (err = open_own_rings(s)))
		return err;
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
	if (load_errors__memlock_too_low(&limit_kib))
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

/* Takes over h, which samples every CPU: only for a run without a PID filter. */
void copy_rings__take_head_start(struct sampler *s, struct sampler_head_start *h)
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

static int open_events_disabled(struct sampler *s)
{
	return perf_attach__open(s->opts.hz, false, &s->next_pa);
}

/*
 * The head start's events were closed by the handover (disabled: their
 * rings hold all they will): what is left in them is taken, and their
 * memory returned.
 */
static void end_head_start(struct sampler *s)
{
	event_reader__flush(s->copies, copy_rings__on_sample, s);
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
int copy_rings__replace_head_start(struct sampler *s)
{
	int err = open_events_disabled(s);

	if (!err)
		err = perf_attach__handover(s->pa, s->next_pa, sample_object__sample_prog(&s->cur));
	if (err)
		return err;
	perf_attach__free(s->pa);
	s->pa = s->next_pa;
	s->next_pa = NULL;
	end_head_start(s);
	return 0;
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
		notifications__announce(s, c->pid);
	}
	return true;
}

/* A sample from a sampling event's ring, handed out as the BPF side's copies are. */
void copy_rings__on_sample(void *ctx, const void *data, uint32_t size)
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

uint64_t sampler__head_start_first(const struct sampler *s)
{
	return s->head_first;
}
