/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Types shared by the BPF program (bpf/sampler.bpf.c) and user space.
 * Only __u32/__u64 so that both sides agree on layout on every architecture.
 */
#ifndef CPROF_BPF_PROFILE_ABI_H
#define CPROF_BPF_PROFILE_ABI_H

#include <linux/types.h>

#define CPROF_COMM_LEN	      16
#define CPROF_MAX_STACK_DEPTH 127
/*
 * The most user frames --max-stack may ask for (the default is
 * CPROF_MAX_STACK_DEPTH). Kernel stacks, and user stacks the kernel reads
 * by frame pointers, stay at CPROF_MAX_STACK_DEPTH: bpf_get_stack gives no
 * more than kernel.perf_event_max_stack (127 unless raised) anyway.
 */
#define CPROF_MAX_STACK_LIMIT 1024

/* Default map sizes; user space may resize them before load. */
#define CPROF_DEFAULT_STACK_ENTRIES 16384
#define CPROF_DEFAULT_COUNT_ENTRIES 16384
#define CPROF_MAX_TARGETS	    16384
#define CPROF_SEEN_ENTRIES	    16384
#define CPROF_SPACE_ENTRIES	    16384

/*
 * A user stack the unwinder walked, by a 128-bit hash of its frames: two
 * stacks that differ get the same one with odds of 2^-128 a pair, so the
 * hash names the stack and no copy is kept in the kernel to compare with.
 */
struct cprof_stack_hash {
	__u64 lo;
	__u64 hi;
};

/*
 * Stack ids are stored as the (negated errno) value bpf_get_stackid returned
 * when it failed, cast to __u32; user space casts back to a signed int.
 */
struct cprof_key {
	__u32 pid; /* thread group id (the host PID) */
	__u32 tid; /* thread id */
	__u32 user_stack_id;
	__u32 kern_stack_id;
	__u64 comm[CPROF_COMM_LEN / 8]; /* thread name, NUL-padded */
	__u64 space; /* the address space the sample was taken in: see `spaces` */
	/*
	 * With the unwinder's object, the sample's stacks by their hashes (each
	 * sent to user space once, see struct cprof_ustack), and user_stack_id
	 * and kern_stack_id say only why one is missing: -EFAULT when the
	 * sample has none. 0 with the sampler's, whose stacks are by their ids.
	 */
	struct cprof_stack_hash user_hash;
	struct cprof_stack_hash kern_hash;
};

/*
 * Configuration lives in an array map, not in .rodata/.bss globals, so the
 * same object loads on kernels older than 5.2.
 */
struct cprof_config {
	__u32 active_set;      /* 0 or 1: which stacks/counts pair samples go to */
	__u32 filter_pids;     /* 1: only sample thread groups present in `targets` */
	__u32 include_idle;    /* 1: keep samples of the idle task (pid 0) */
	__u32 fork_layout;     /* sched_process_fork layout, enum cprof_fork_layout */
	__u32 follow_children; /* with filter_pids: add children of targets as they fork */
	/*
	 * 1: a sample is not recorded here but handed to the perf event's own
	 * ring (the program returns 1), with the user registers and stack the
	 * event copies: kernels that cannot run the in-kernel walk.
	 */
	__u32 copy_samples;
};

/* Values of the `targets` map. */
enum cprof_target {
	CPROF_TARGET_ON = 1,	      /* sampled */
	CPROF_TARGET_BEFORE_EXEC = 2, /* cprof's child before it execs the command: not yet */
};

/* Where sched_process_fork keeps child_pid; the layout changed in 6.x. */
enum cprof_fork_layout {
	CPROF_FORK_NONE = 0,	     /* don't follow children */
	CPROF_FORK_STATIC_COMM = 1,  /* char parent_comm[16] ...: child_pid at offset 44 */
	CPROF_FORK_DYNAMIC_COMM = 2, /* __data_loc comms: child_pid at offset 20 */
};

/* Per-CPU counters; user space sums them and reports every loss. */
enum cprof_stat {
	CPROF_STAT_SAMPLES = 0,	   /* samples of targeted tasks (incl. idle when kept) */
	CPROF_STAT_IDLE,	   /* samples of the idle task, dropped unless include_idle */
	CPROF_STAT_USER_COLLISION, /* user stack lost: stack map bucket held another stack */
	CPROF_STAT_KERN_COLLISION, /* kernel stack lost: the same */
	CPROF_STAT_USER_STACK_ERR, /* user stack lost: other error (e.g. -ENOMEM) */
	CPROF_STAT_KERN_STACK_ERR, /* kernel stack lost: other error */
	CPROF_STAT_COUNTS_FULL,	   /* sample lost: counts map full */
	CPROF_STAT_NOTIFY_LOST,	   /* new-process notification could not be sent */
	CPROF_STAT_NEW_KEYS_SET0,  /* distinct keys inserted into counts set 0 */
	CPROF_STAT_NEW_KEYS_SET1,  /* ... and set 1; user space drains early when filling */
	CPROF_STAT_FORKS_FOLLOWED, /* children added to `targets` */
	CPROF_STAT_TARGETS_FULL,   /* a child could not be added: targets map full */
	CPROF_STAT_SPILLED,	   /* samples whose stack collided, sent whole instead */
	CPROF_STAT_BEFORE_EXEC,	   /* samples of the command's process still running cprof */
	CPROF_STAT_TICKS,	   /* every run of the program: the rate the kernel delivers */
	CPROF_STAT_WALKS,	   /* user stacks walked with the unwind tables */
	CPROF_STAT_WALKS_LOST,	   /* samples lost: a walk could not be finished nor copied */
	CPROF_STAT_COPIES,	   /* samples sent as a stack copy, to be walked in user space */
	CPROF_STAT_COPIES_LOST,	   /* ... that could not be sent: kept with their leaf only */
	/* Why samples were copied (of CPROF_STAT_COPIES): */
	CPROF_STAT_COPY_NEW,   /* the process had no region set: user space had not followed it */
	CPROF_STAT_COPY_EARLY, /* it had one, but the in-kernel walk was not loaded yet */
	CPROF_STAT_COPY_NO_TABLE, /* a young process's code in a file whose table was not loaded */
	CPROF_STAT_COPY_YOUNG,	  /* a young process's code in no region it had yet */
	CPROF_STAT_BY_FILE,	  /* regions found by their file (bpf_find_vma), not the set */
	CPROF_STAT_FIND_VMA_BUSY, /* bpf_find_vma could not look (mmap lock held) */
	CPROF_STAT_MAX,
};

/* Sent through the `events` perf buffer the first time a process is sampled. */
struct cprof_event {
	__u32 pid;
	__u32 tid;
};

#define CPROF_SPILL_MAGIC 0x6c6c7073 /* "spll" */

/*
 * Also through `events`, and told from a cprof_event by its size: a sample
 * whose stack met a stack-map bucket taken by another stack, with both its
 * stacks in full, so that the sample keeps its stacks instead of counting
 * under a placeholder.
 */
struct cprof_spill {
	__u32 magic;
	__u32 set; /* the map set it was taken for: its drain, so its interval */
	__u32 pid;
	__u32 tid;
	__u32 user_bytes; /* of user[]: what bpf_get_stack wrote, 0 if it failed */
	__u32 kern_bytes;
	__u32 user_walked; /* 1: user[] is a walk with the unwind tables, ended by user_stop */
	__u32 user_stop;   /* enum cprof_unwind_stop */
	__u64 comm[CPROF_COMM_LEN / 8];
	__u64 space;
	__u64 user[CPROF_MAX_STACK_DEPTH]; /* leaf first */
	__u64 kern[CPROF_MAX_STACK_DEPTH];
};

#define CPROF_COPY_MAGIC 0x79706f63 /* "copy" */
/*
 * General registers a stack copy carries, by DWARF number: x86_64 rax to
 * r15, AArch64 x0 to x15. A CFA rule may name one of them (OpenSSL's
 * assembly keeps its CFA in rax), which only the sampled frame knows.
 */
#define CPROF_GREGS	 16
#define CPROF_COPY_STACK 16384 /* bytes of user stack copied from SP up */
/*
 * The copy came from a perf event's sample, not from the BPF program: no
 * space id (space is the sample's time: its space is the last one begun
 * before) and no comm.
 */
#define CPROF_COPY_FROM_PERF 1
/*
 * The perf sample had no user registers: a kernel thread's, or a task's
 * past exit_mm in its exit (the in-kernel walk still reads its registers
 * there, a perf sample does not). Nothing to walk: its user part is absent.
 */
#define CPROF_COPY_NO_USER 2

/*
 * Also through `events`: a sample of a process whose unwind tables are not
 * in the maps yet (its first milliseconds, a program just exec'd), with
 * the user registers and the top of its user stack, so that user space
 * walks it with the same tables once it has built them. Only the first
 * stack_bytes of stack[] are sent.
 */
struct cprof_copy {
	__u32 magic;
	__u32 set;
	__u32 pid;
	__u32 tid;
	__u64 comm[CPROF_COMM_LEN / 8];
	__u64 space;
	__u64 time; /* CLOCK_MONOTONIC ns, as the kernel's records of processes */
	__u64 pc, sp, fp, lr;
	__u32 lr_valid;
	__u32 kern_bytes;
	__u64 gregs[CPROF_GREGS]; /* see CPROF_GREGS */
	__u32 gregs_valid;	  /* bit i: gregs[i] was sampled */
	__u32 pad;
	__u64 kern[CPROF_MAX_STACK_DEPTH]; /* leaf first, for a sample taken in the kernel */
	__u32 stack_bytes;
	__u32 flags; /* CPROF_COPY_* */
	__u8 stack[CPROF_COPY_STACK];
};

#endif
