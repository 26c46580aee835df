/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The compact unwind tables, as user space builds them from the CFI of
 * each executable file and as the unwinder reads them (in the BPF program
 * and in user space). Only __u8..__u64 types, so both sides agree on
 * layout on every architecture.
 *
 * A table covers one file's code. Its rows are sorted by address; a row
 * holds from its address to the next row's. Each row is one __u32: the low
 * 16 bits of its address and the id of its rule in a dictionary of
 * distinct rules that all tables share (a few thousand cover every file of
 * a Debian system). Addresses are cut into 64 KiB pages: the page index
 * says where a page's rows start, so a lookup is one index read and a
 * binary search of at most 16 steps, and a row costs 4 bytes.
 */
#ifndef CPROF_BPF_UNWIND_ABI_H
#define CPROF_BPF_UNWIND_ABI_H

#include <linux/types.h>
#include "mix64.h"
#include "sampler_abi.h"

#define CPROF_UNWIND_PAGE_SHIFT	 16
#define CPROF_UNWIND_PAGE_MASK	 ((1u << CPROF_UNWIND_PAGE_SHIFT) - 1)
#define CPROF_UNWIND_MAX_RULES	 65536
#define CPROF_UNWIND_MAX_REGIONS 65536		       /* executable mappings, all processes */
#define CPROF_UNWIND_MAX_SETS	 16384		       /* processes with a region set */
#define CPROF_UNWIND_MAX_DEPTH	 CPROF_MAX_STACK_LIMIT /* walk_config.max_depth says how far */

/* Rule 0 of every dictionary: the address has no CFI. */
#define CPROF_RULE_NO_CFI 0

static inline __u32 cprof_unwind_row(__u32 addr_low, __u32 rule)
{
	return (addr_low & CPROF_UNWIND_PAGE_MASK) | rule << CPROF_UNWIND_PAGE_SHIFT;
}

/* How to find the caller's stack pointer (the CFA: the callee's SP before the call). */
enum cprof_cfa_kind {
	CPROF_CFA_STOP = 0, /* the walk cannot go on: stop says why */
	CPROF_CFA_SP,	    /* SP + cfa_off */
	CPROF_CFA_FP,	    /* FP + cfa_off (rbp, x29) */
	CPROF_CFA_SP_DEREF, /* *(SP + cfa_off) + cfa_add (OpenSSL's `breg7 N; deref; plus_uconst`)
			     */
	CPROF_CFA_FP_DEREF, /* *(FP + cfa_off) + cfa_add (GCC's stack re-alignment) */
	CPROF_CFA_PLT,	    /* SP + cfa_off, + 8 when (PC & 15) >= cfa_add (x86_64 .plt) */
	CPROF_CFA_SIGNAL,   /* a signal trampoline: the registers are in the signal frame at SP */
	CPROF_CFA_END,	    /* the outermost frame: the return address is undefined */
	/*
	 * General register cfa_reg (a DWARF number below CPROF_GREGS) + cfa_off,
	 * and *(that + cfa_off) + cfa_add: hand-written assembly that keeps the
	 * CFA in rax or r10 while it re-aligns SP. Only where the register's
	 * value is known (struct cprof_unwind_regs.gregs_live).
	 */
	CPROF_CFA_REG,
	CPROF_CFA_REG_DEREF,
};

/* Where the return address is. */
enum cprof_ra_kind {
	CPROF_RA_AT_CFA = 0, /* at CFA + ra_off */
	CPROF_RA_IN_LR, /* still in the link register (AArch64): only valid where LR is known */
};

/* Where the caller's frame pointer is. */
enum cprof_fp_kind {
	CPROF_FP_SAME = 0, /* unchanged */
	CPROF_FP_AT_CFA,   /* at CFA + fp_off */
	CPROF_FP_AT_FP,	   /* at FP + fp_off (saved by a re-aligning prologue) */
	CPROF_FP_LOST,	   /* not recoverable: a later rule that needs it stops */
};

/* Why a walk stopped before a thread's root. Kept in sync with the summary's words. */
enum cprof_unwind_stop {
	CPROF_STOP_NONE = 0,	 /* reached the root */
	CPROF_STOP_NO_CFI,	 /* the address has no CFI in a file that has some */
	CPROF_STOP_BAD_CFI,	 /* the CFI there is corrupt or uses an unknown opcode */
	CPROF_STOP_UNSUPPORTED,	 /* a CFI rule the unwinder does not run */
	CPROF_STOP_NO_RULE_ROOM, /* the rule dictionary was full */
	CPROF_STOP_NO_MAPPING,	 /* the address is in no known executable mapping */
	CPROF_STOP_NO_TABLE,	 /* the mapping's table is not built (yet) */
	CPROF_STOP_READ,	 /* user memory could not be read */
	CPROF_STOP_LR,		 /* the return address is in LR, but LR is not known here */
	CPROF_STOP_BAD_FRAME,	 /* the caller's SP or return address makes no sense */
	CPROF_STOP_FP_LOST,	 /* the rule needs a frame pointer that was not recoverable */
	CPROF_STOP_DEPTH,	 /* the stack is deeper than the frames kept */
	CPROF_STOP_COPY_END,	 /* user space: the walk left the copied part of the stack */
	CPROF_STOP_COPY_LOST,	 /* to be walked from a copy, which the full ring refused */
	CPROF_STOP_NO_FP,	 /* code without CFI whose frame pointer is no frame's (JIT code) */
	CPROF_STOP_GO_SWITCH,	 /* Go code that switched stacks (systemstack, mcall, morestack) */
	CPROF_STOP_CFA_REG,	 /* the CFA is in a register whose value this frame lost */
	CPROF_STOP_MAX,
};

/*
 * In the BPF maps, rows and page index entries are stored 64 to an array
 * element, so that a table goes in with one update per 64 rows; a table's
 * rows start at an element boundary.
 */
#define CPROF_UNWIND_CHUNK 64

struct cprof_unwind_chunk {
	__u32 v[CPROF_UNWIND_CHUNK];
};

/*
 * An executable region of a region set (the code mappings of one address
 * space, shared by a parent and the children it forked until either maps
 * something), keyed by {set, address} in an LPM trie.
 */
struct cprof_region_key {
	__u32 prefixlen; /* bits of set and addr that matter: 32 + the prefix of addr */
	__u32 set;
	__u64 addr_be; /* big-endian, so that a prefix is the high bits */
};

/*
 * A process's region set, valid for the address space it was built for
 * (the `spaces` id of the fork or exec that began it): a sample taken in
 * another space, after an exec user space has not caught up with yet, is
 * not walked with the old program's regions.
 */
struct cprof_unwind_set {
	__u32 set;
	__u32 pad;
	__u64 space;
};

enum cprof_region_flags {
	CPROF_REGION_TABLE = 1,	  /* the code has a table; else frame-pointer steps */
	CPROF_REGION_PENDING = 2, /* its file's table is being built: the walk stops here */
};

struct cprof_region {
	__u64 start; /* the mapping: [start, end) */
	__u64 end;
	__u64 bias;	  /* table address = pc - bias */
	__u64 table_base; /* address of the table's page 0 */
	__u32 page_base;  /* index of the table's page 0 in the page array */
	__u32 npages;
	__u32 row_base; /* index of the table's row 0 in the row array */
	__u32 flags;	/* enum cprof_region_flags */
	__u32 serial;	/* of the table's upload, never reused within a run: 0 without one */
	__u32 pad;
};

/* The registers an unwinder needs, for one frame. */
struct cprof_unwind_regs {
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u64 lr;	/* AArch64 */
	__u32 fp_valid; /* the frame pointer's value is known */
	__u32 lr_valid; /* LR holds this frame's return address: the leaf, or after a signal */
	__u32 exact_pc; /* pc is where the frame was interrupted, not a return address */
	/*
	 * Bit i: general register i (DWARF number, below CPROF_GREGS) still holds
	 * the value it had in the sampled frame, which the walk keeps: all of
	 * them there, then those each frame's rule keeps (keep_regs).
	 */
	__u32 gregs_live;
	__u64 fp_at; /* nonzero: fp is still to be read from there (see cprof_unwind_fp_load) */
};

/*
 * The walk by file (Linux 5.17+, bpf_find_vma): a pc in no region of its
 * process's set, or of a process user space has not followed yet, is
 * looked up by the file its mapping maps, in `unwind_files`, which holds
 * every file whose table is loaded. The offsets are of the running
 * kernel's structs (from its BTF): vma->vm_pgoff, vma->vm_file,
 * file->f_inode, inode->i_ino, inode->i_sb, sb->s_dev. on: the offsets
 * are known; the walk that uses them (cprof_walk_file) is in its own slot.
 */
struct cprof_file_config {
	__u32 on;
	__u32 page_shift; /* vm_pgoff is in pages */
	__u16 vma_pgoff, vma_file, file_inode, inode_ino, inode_sb, sb_dev;
	__u32 pad;
};

/* A file, as the kernel names it: s_dev (MAJOR << 20 | MINOR) and inode number. */
struct cprof_file_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

#define CPROF_FILE_SEGS 4 /* executable segments of a file, the first kept */

/* An executable PT_LOAD: file offsets [off, end) are table addresses off + delta. */
struct cprof_file_seg {
	__u64 off;
	__u64 end;
	__u64 delta; /* p_vaddr - p_offset */
};

/* A loaded file's table and where its code is in the file. */
struct cprof_file_table {
	__u64 table_base;
	__u32 page_base;
	__u32 npages;
	__u32 row_base;
	__u32 serial;
	__u32 nsegs;
	__u32 pad;
	struct cprof_file_seg seg[CPROF_FILE_SEGS];
};

#define CPROF_UNWIND_MAX_FILES 8192 /* files with a table loaded */

struct cprof_walk_config {
	__u64 ra_mask; /* bits of a return address that are address (AArch64 PAC) */
	/*
	 * Where a task's user registers are while it runs in the kernel: at the
	 * top of its kernel stack (task_struct.stack + THREAD_SIZE - padding -
	 * sizeof(struct pt_regs)), found from the kernel's BTF. stack_off 0:
	 * unknown, and samples taken in the kernel keep frame-pointer user stacks.
	 */
	__u32 task_stack_off;
	__u32 pt_regs_size;
	/*
	 * User space has applied the kernel's records of forks, execs and mmaps
	 * timed before this (CLOCK_MONOTONIC ns, bpf_ktime_get_ns()), and bound
	 * the regions they made; 0: it has not said.
	 */
	__u64 followed_until;
	/*
	 * Changed by user space after each change to a region set: regions
	 * found under another value are not reused (the walk's region memo).
	 */
	__u32 regions_gen;
	/* User frames a walk keeps, 1 to CPROF_UNWIND_MAX_DEPTH (--max-stack); 0: 127. */
	__u32 max_depth;
	struct cprof_file_config files; /* the walk by file: see struct cprof_file_config */
};

#define CPROF_USTACK_MAGIC 0x6b747375 /* "ustk" */
/* Slots of `known_stacks`, a power of two (16 bytes each). */
#define CPROF_KNOWN_SLOTS 32768

/* What a struct cprof_ustack holds. */
enum cprof_ustack_kind {
	CPROF_USTACK_WALKED = 0, /* a user stack walked with the unwind tables */
	CPROF_USTACK_FP,	 /* a user stack by frame pointers (bpf_get_stack) */
	CPROF_USTACK_KERNEL,	 /* a kernel stack (bpf_get_stack) */
};

/*
 * A stack of a sample, sent through `walked_out` the first time the kernel
 * meets it (`known_stacks` then holds its hash); counts name it by the hash
 * alone. Only the first n frames are sent.
 *
 * A user stack sent for the first time also counts the sample it came
 * with (count_set, key), which then makes no entry in the count map: the
 * sample is counted at the drain of its set, as a map entry would be. Most
 * samples of a recursive sort or a B-tree are stacks met once, and a map
 * entry each (lookup, allocation, then the drain's delete and free) cost
 * more than the record they already needed.
 */
struct cprof_ustack {
	__u32 magic;
	__u32 n;    /* frames in ips */
	__u32 stop; /* enum cprof_unwind_stop: CPROF_STOP_NONE at the root, or for the others */
	__u32 kind; /* enum cprof_ustack_kind */
	struct cprof_stack_hash hash;
	__u32 count_set; /* 0, or 1 + the map set of the sample this record counts */
	__u32 pad;
	struct cprof_key key; /* with count_set: the sample's key, user_hash this stack's */
	__u64 ips[CPROF_UNWIND_MAX_DEPTH]; /* leaf first; a frame after a signal frame as pc + 1 */
};

/*
 * The hash of a stack, built a frame at a time (a walk's as it goes, with
 * no loop over the frames afterwards): two 64-bit lanes of different
 * multipliers, each finished with splitmix64's finalizer over the lane,
 * the frame count, the stop and the kind.
 */
#define CPROF_USTACK_SEED0 0xcbf29ce484222325ull
#define CPROF_USTACK_SEED1 0x84222325cbf29ce4ull

static inline void cprof_ustack_mix(__u64 mix[2], __u64 ip)
{
	mix[0] = (mix[0] ^ ip) * 0x9e3779b97f4a7c15ull;
	mix[0] ^= mix[0] >> 32;
	mix[1] = (mix[1] + ip) * 0xbf58476d1ce4e5b9ull;
	mix[1] ^= mix[1] >> 29;
}

/* Never 0, 0: a key's zero hash means "no such stack". */
static inline void cprof_ustack_hash(const __u64 mix[2], __u32 n, __u32 stop, __u32 kind,
				     struct cprof_stack_hash *h)
{
	__u64 tag = (__u64)stop << 32 | kind;

	h->lo = cprof_mix64(mix[0] ^ n ^ tag << 8);
	h->hi = cprof_mix64(mix[1] + n * 0x94d049bb133111ebull + tag) | 1;
}

/*
 * The walk by tail calls (kernels without bpf_loop): at most this many
 * runs, which leaves the last step and a stack copy two of the 32 tail
 * calls a sample may make, of CPROF_WALK_FRAMES frames each, or of
 * CPROF_WALK_FRAMES_DEEP for a max_depth the others do not reach (the
 * verifier's cost grows with the frames of a run).
 */
#define CPROF_WALK_RUNS	       30
#define CPROF_WALK_FRAMES      8
#define CPROF_WALK_FRAMES_DEEP 35

/* A walk: what it keeps between its program runs (per CPU). */
struct cprof_walk {
	struct cprof_unwind_regs regs;	/* of the frame being walked */
	struct cprof_unwind_regs first; /* of the sample: for a stack copy after all */
	struct cprof_region region;	/* the last region found, reused while the PC is inside */
	struct cprof_key key;		/* the sample's, as sample_begin made it */
	__u32 set;			/* the sample's map set */
	__u32 region_set;		/* the process's region set */
	__u32 done;
	__u32 lo, hi;	/* the bounds of a row search */
	__u32 slot;	/* an index into a chunk, read back (see load_u32) */
	__u32 kernel;	/* the sample was taken in the kernel: it has a kernel stack too */
	__u32 copy_for; /* why cprof_copy was asked for a stack copy (COPY_FOR_*), or that it failed
			 */
	__u32 regions_gen;	  /* walk_config's when the walk began (see region_memo) */
	__u32 max_depth;	  /* walk_config's: the frames the walk keeps */
	__u32 runs;		  /* cprof_walk's runs so far (tail calls are limited) */
	__u32 file_miss;	  /* a mapping of a file without a loaded table ended the walk */
	__u64 gregs[CPROF_GREGS]; /* the sampled frame's general registers, by DWARF number */
	__u64 mix[2]; /* the hash of u's frames so far, two lanes (see cprof_ustack_hash) */
	struct cprof_ustack u; /* the user stack */
	/*
	 * The kernel stack, read by the last step: last, as only its first
	 * CPROF_MAX_STACK_DEPTH frames are in the BPF map (see walks).
	 */
	struct cprof_ustack k;
};

/* 20 bytes; the dictionary holds up to CPROF_UNWIND_MAX_RULES of them. */
struct cprof_unwind_rule {
	__u8 cfa_kind; /* enum cprof_cfa_kind */
	__u8 ra_kind;  /* enum cprof_ra_kind */
	__u8 fp_kind;  /* enum cprof_fp_kind */
	union {
		__u8 stop;    /* with CPROF_CFA_STOP: enum cprof_unwind_stop */
		__u8 cfa_reg; /* with CPROF_CFA_REG(_DEREF): the register, a DWARF number */
	};
	__s32 cfa_off;
	__s32 cfa_add;
	__s16 ra_off;
	__s16 fp_off;
	/*
	 * Bit i: the row has no rule for general register i (below CPROF_GREGS),
	 * so the caller has the value this frame has, as libgcc's, libunwind's
	 * and gdb's unwinders take a register the CFI does not mention: how a
	 * CFA in rax above the leaf is found (OpenSSL's AES-GCM calls its
	 * helpers with the CFA in rax, which they do not touch).
	 */
	__u16 keep_regs;
	__u16 pad;
};

#endif
