/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of the sampler share (sampler.c and the files it was
 * split into, see sampler.c's first comment): its state and the functions
 * one piece calls in another. Not for use outside src/sample.
 */
#ifndef CPROF_SAMPLER_INTERNAL_H
#define CPROF_SAMPLER_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/perf_sample.h"
#include "sample/sampler.h"
#include "unwind_abi.h"

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
	struct perf_attach *pa;
	struct perf_attach *next_pa;	    /* the head start's successors, until handed over */
	struct task_hooks *hooks;	    /* the fork, exec and exit hooks */
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
	/* Valid during sampler__consume only. */
	sampler_process_fn poll_fn;
	void *poll_ctx;
	int polled;
	/* Read from the buffer outside sampler__consume: handed to the next one. */
	uint32_t *early_pids;
	size_t nearly, early_cap;
	/* Spilled samples (see the BPF side), until the drain of their set. */
	struct cprof_spill *spills;
	size_t nspills, spills_cap;
	uint64_t spills_dropped; /* no memory to keep one, or a counted stack's count */
	/* Samples their stack's record counted (struct cprof_ustack), until their set's drain. */
	struct counted *counted;
	size_t ncounted, counted_cap;
	/* Per drain: stack id -> frames, so a stack shared by many keys is read once. */
	uint64_t **stack_cache;
	uint32_t *stack_cache_ids;
	uint32_t stack_cache_n;
	/* Per drain: the counts taken in batches. */
	struct map_take *take;
	/* The walked stacks the kernel sent (with the unwinder's object). */
	struct walked_stacks *walked;
};

#define BIG_MAPS 8

/* copy_rings.c */
int open_copies(struct sampler *s);
void take_head_start(struct sampler *s, struct sampler_head_start *h);
int replace_head_start(struct sampler *s);
void on_ring_sample(void *ctx, const void *data, uint32_t size);

/* walker.c */
int start_walker(struct sampler *s);
int walk_rows_moved(void *ctx, int rows_fd);
void stop_walker(struct sampler *s);

/* sample_object.c */
void configure(struct sampler *s, struct instance *k);
int instance_open(struct sampler *s, struct instance *i);
int instance_load(struct instance *i);
void instance_destroy(struct instance *i);
struct bpf_program *sample_prog(const struct instance *i);
int big_maps(const struct sampler *s, const struct instance *k, struct bpf_map *big[BIG_MAPS]);

/* notifications.c */
void keep_spill(struct sampler *s, const void *data);
void announce_pid(struct sampler *s, uint32_t pid);
void add_counted(struct sampler *s, const struct counted *c);
void on_notify(void *ctx, const void *data, uint32_t size);
int open_notifications(struct sampler *s);

/* targets.c */
int set_target(struct sampler *s, uint32_t pid, __u32 value);

/* sampler.c */
int update_config(struct sampler *s);

#endif
