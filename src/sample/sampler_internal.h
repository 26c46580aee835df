/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of the sampler share (sampler.c and the files it was
 * split into, see sampler.c's first comment): its state and the functions
 * one piece calls in another. Not for use outside src/sample.
 */
#ifndef CPROF_SAMPLER_INTERNAL_H
#define CPROF_SAMPLER_INTERNAL_H

#include <pthread.h>
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
struct sample_object {
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

/* The unwinder's walk, loaded on a thread (see walker__start). */
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
	struct sample_object cur;
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
	struct stack_cache *stacks;
	/* Per drain: the counts taken in batches. */
	struct map_take *take;
	/* The walked stacks the kernel sent (with the unwinder's object). */
	struct walked_stacks *walked;
};

/* copy_rings.c: the sampling events' own rings (the head start, stack copies) */
/* Opens them (unless the head start did) and has perf_attach adopt their events. */
int copy_rings__open(struct sampler *s);
/* Takes over h, which samples every CPU: only for a run without a PID filter. */
void copy_rings__take_head_start(struct sampler *s, struct sampler_head_start *h);
/* Replaces the head start's events with plain ones and frees its rings (the first drain). */
int copy_rings__replace_head_start(struct sampler *s);
/* A sample from a ring, handed out as the BPF side's copies are (an event_reader_fn). */
void copy_rings__on_sample(void *ctx, const void *data, uint32_t size);

/* walker.c: the unwinder's in-kernel walk */
/* Opens the walker on the current object's maps, and loads it on a thread. */
int walker__start(struct sampler *s);
/* The unwinder moved its rows to rows_fd: the walk is loaded again with that map. */
int walker__rows_moved(void *ctx, int rows_fd);
/* Waits for its load and destroys it. */
void walker__stop(struct sampler *s);

/* sample_object.c: the BPF object that samples */
/* The maps worth a thread each (see parallel_maps.h): at most BIG_MAPS. */
#define BIG_MAPS 8
/* Opens the unwinder's object when there is an unwinder, else the sampler's. */
int sample_object__open(struct sampler *s, struct sample_object *i);
/* Sizes, and which programs the object loads. */
void sample_object__configure(struct sampler *s, struct sample_object *k);
/* Loads it, with the programs this kernel verifies. */
int sample_object__load(struct sample_object *i);
void sample_object__destroy(struct sample_object *i);
/* The unwinder's skeleton opened (NULL and errno set when it cannot be). */
struct unwinder_bpf *sample_object__open_unwinder(void);
/* The program that samples. */
struct bpf_program *sample_object__sample_prog(const struct sample_object *i);
/* Fills big with the large maps the run uses; returns how many. */
int sample_object__big_maps(const struct sampler *s, const struct sample_object *k,
			    struct bpf_map *big[BIG_MAPS]);

/* notifications.c: the BPF program's perf buffers */
/* Opens the notification buffer, and with the unwinder the walked stacks'. */
int notifications__open(struct sampler *s);
/* One record of either buffer (an event_reader_fn). */
void notifications__on_record(void *ctx, const void *data, uint32_t size);
/* A process seen for the first time, handed to the caller of sampler__consume. */
void notifications__announce(struct sampler *s, uint32_t pid);
/* Keeps a spilled sample (a record's payload) for the drain of its set. */
void notifications__keep_spill(struct sampler *s, const void *data);
/* Keeps a counted sample for the drain of its set. */
void notifications__add_counted(struct sampler *s, const struct counted *c);

/* targets.c */
/* Sets pid's entry in the targets map to value (enum cprof_target); said when it fails. */
int targets__set(struct sampler *s, uint32_t pid, __u32 value);

/* sampler.c */
/* Writes s->cfg to the config map; said when it fails. */
int sampler__write_config(struct sampler *s);

#endif
