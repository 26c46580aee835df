// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The sampler with the user-stack unwinder: samples as bpf/sampler.bpf.c
 * does (bpf/sample.h), but walks the stack of interrupted user code with
 * the compact unwind tables user space built from each file's CFI
 * (bpf/unwind_abi.h), one step per frame (bpf/unwind_step.h, the same code
 * user space runs), and counts each sample by the hashes of its stacks,
 * the walked user stack and the kernel's: each stack goes to user space
 * once, the first time it is met (see known_stacks), and the object has no
 * stack-trace map. A sample whose user registers cannot be found keeps its
 * user stack by frame pointers, as the sampler does.
 *
 * Kernel floor 5.5 (bpf_probe_read_user; bounded loops from 5.3): older
 * kernels load the sampler. No CO-RE relocations, no global data, so it
 * loads without kernel BTF. A walk takes CPROF_WALK_FRAMES frames per
 * program run (CPROF_WALK_FRAMES_DEEP for a --max-stack beyond what those
 * reach) and tail-calls itself for the next ones, and a last program keeps
 * the stack and counts the sample: each run's verification stays small.
 * From 5.17 one run walks all frames in a bpf_loop.
 *
 * Per frame: the region holding the PC in the process's region set (an
 * LPM trie keyed by {set, address}: one lookup, reused while the PC stays
 * in the region), the table's page, a binary search of at most 16 steps
 * among the page's rows, the rule, the step.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "unwind_abi.h"

/*
 * Process -> its region set. A child forked from a process with one
 * shares it from the fork on (user space copies the set when either maps
 * something); an exec leaves the process without one until user space has
 * loaded the new program's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_UNWIND_MAX_SETS);
	__type(key, __u32);
	__type(value, struct cprof_unwind_set);
} unwind_sets SEC(".maps");

static __always_inline void inherit_set(__u32 parent, __u32 child, __u64 now)
{
	struct cprof_unwind_set *p = bpf_map_lookup_elem(&unwind_sets, &parent), v;

	if (!p)
		return;
	v.set = p->set;
	v.pad = 0;
	v.space = now;
	bpf_map_update_elem(&unwind_sets, &child, &v, BPF_ANY);
}

#define CPROF_ON_FORK(parent, child, now) inherit_set(parent, child, now)
#define CPROF_ON_EXEC(pid)		  bpf_map_delete_elem(&unwind_sets, &pid)
#define CPROF_ON_THREAD_EXIT(tid)	  bpf_map_delete_elem(&unwind_sets, &tid)
#include "sample.h"

#define CPROF_UNWIND_READ(mem, dst, addr) bpf_probe_read_user((dst), 8, (const void *)(addr))
/* mem: the walk's gregs (walk_frame). */
#define CPROF_UNWIND_GREG(mem, i) (((const __u64 *)(mem))[(i)])
#include "unwind_step.h"

#define PROG_WALK 0
#define PROG_KEEP 1
#define PROG_COPY 2
#define PROG_FILE 3 /* the walk by file (cprof_walk_file), where the kernel has one */

/* The walk's `loop` argument: bits. */
#define WALK_LOOP    1 /* with bpf_loop */
#define WALK_BY_FILE 2 /* regions found by their file too (find_by_file) */

/* Why cprof_copy runs (cprof_walk.copy_for), and what it does if the copy cannot be sent. */
enum {
	COPY_FOR_START = 1, /* no regions: the leaf alone is kept, counted as a lost copy */
	COPY_FOR_EARLY,	    /* regions, but no walk loaded yet: as COPY_FOR_START */
	COPY_FOR_KEEP,	    /* a young process's walk found no mapping: the walk is kept */
	COPY_FOR_LOST,	    /* no last step to keep the walk: the sample is lost */
	COPY_FAILED,	    /* the copy could not be sent: not tried again */
};
/*
 * How long after its fork or exec a process's regions may still lack
 * mappings, counted from where user space has got to in the kernel's
 * records (walk_config.followed_until): a young program maps its libraries
 * and dlopens more, and building a large table delays the next records.
 */
#define YOUNG_NS 1000000000ull

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_walk_config);
} walk_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPROF_UNWIND_MAX_RULES);
	__type(key, __u32);
	__type(value, struct cprof_unwind_rule);
} unwind_rules SEC(".maps");

/* Sized by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_unwind_chunk);
} unwind_rows SEC(".maps"), unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CPROF_UNWIND_MAX_REGIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cprof_region_key);
	__type(value, struct cprof_region);
} unwind_regions SEC(".maps");

/*
 * The walk's room, a CPU's: without the kernel stack's frames past
 * CPROF_MAX_STACK_DEPTH, which bpf_get_stack does not give (7 KiB a CPU).
 */
#define WALK_VALUE_SIZE \
	(__builtin_offsetof(struct cprof_walk, k.ips) + CPROF_MAX_STACK_DEPTH * sizeof(__u64))

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, WALK_VALUE_SIZE);
} walks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} walk_progs SEC(".maps");

/*
 * A tail call whose slot the verifier does not know (read back from the
 * walk's map value, as in load_u32): with a constant one,
 * the x86 JIT makes it a direct jump, patched into every program that
 * holds it whenever the slot is set (text_poke: each time an IPI to every
 * CPU, three updates at each start, 0.8 ms here, more on a large host).
 * The indirect jump costs a few ns more a sample.
 */
static __always_inline void walk_next(struct bpf_perf_event_data *ctx, struct cprof_walk *w,
				      __u32 slot)
{
	*(volatile __u32 *)&w->slot = slot;
	bpf_tail_call(ctx, &walk_progs, *(volatile __u32 *)&w->slot);
}

/* Room to build a stack copy: far beyond the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_copy);
} copy_buf SEC(".maps");

/*
 * Where stacks go to user space: a buffer of their own, whose reader the
 * kernel wakes every so many records (they are wanted at the next drain),
 * where `events` wakes it at each (a new process's maps are read while it
 * lives).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} walked_out SEC(".maps");

/*
 * The hashes of the stacks user space has been sent (struct cprof_ustack
 * through walked_out), and keeps while they are here; it clears those it
 * no longer keeps. Shared by both map sets: a stack is sent once, not once
 * a drain, and no walked stack is copied into a map. A slot per hash, by
 * its low bits: a stack whose slot another took is sent again when next
 * met, which costs more but loses nothing, and finding a stack is one read
 * with no lock, adding it two stores with no allocation (a hash map's
 * lookup and insert were a third of the last step's time).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPROF_KNOWN_SLOTS);
	__type(key, __u32);
	__type(value, struct cprof_stack_hash);
} known_stacks SEC(".maps");

static __always_inline struct cprof_stack_hash *known_slot(const struct cprof_stack_hash *h)
{
	__u32 slot = (__u32)h->lo & (CPROF_KNOWN_SLOTS - 1);

	return bpf_map_lookup_elem(&known_stacks, &slot);
}

/*
 * The index into the chunk goes through w->slot and back: read from a map
 * value, it is a new unknown to the verifier. Straight from index, the
 * bounds check of the access made the verifier mark every scalar it came
 * from precise, all along the row search, and states that differ in them
 * are never pruned: 37,860 instructions to verify the loop walk and
 * 645,660 the unrolled one, against 4,190 and 36,272 this way.
 */
static __always_inline __u32 load_u32(struct cprof_walk *w, void *map, __u32 index)
{
	__u32 chunk = index / CPROF_UNWIND_CHUNK;
	struct cprof_unwind_chunk *c = bpf_map_lookup_elem(map, &chunk);

	*(volatile __u32 *)&w->slot = index;
	return c ? c->v[*(volatile __u32 *)&w->slot & (CPROF_UNWIND_CHUNK - 1)] : 0;
}

/*
 * The regions the walks on this CPU found last, for one region set: a
 * profile's samples come from the same few processes, and their stacks
 * cross the same few files (sqlite3: 4.3 trie lookups a sample, 140 ns
 * each). They are forgotten when user space changes any region set
 * (walk_config.regions_gen) or the walk is of another set.
 */
#define REGION_MEMO 8

struct region_memo {
	__u32 gen; /* walk_config.regions_gen when they were found */
	__u32 set;
	__u32 next; /* the slot the next region found takes */
	__u32 pad;
	struct cprof_region r[REGION_MEMO];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct region_memo);
} region_memos SEC(".maps");

static __always_inline int recall_region(struct cprof_walk *w, __u64 pc)
{
	struct region_memo *m;
	__u32 zero = 0, i;

	m = bpf_map_lookup_elem(&region_memos, &zero);
	if (!m || m->gen != w->regions_gen || m->set != w->region_set)
		return 0;
	for (i = 0; i < REGION_MEMO; i++)
		if (pc >= m->r[i].start && pc < m->r[i].end)
			break;
	if (i >= REGION_MEMO)
		return 0;
	/* One copy for all eight slots: the slot goes through memory, as in load_u32. */
	*(volatile __u32 *)&w->slot = i;
	w->region = m->r[*(volatile __u32 *)&w->slot & (REGION_MEMO - 1)];
	return 1;
}

static __always_inline void remember_region(struct cprof_walk *w)
{
	struct region_memo *m;
	__u32 zero = 0, i;

	m = bpf_map_lookup_elem(&region_memos, &zero);
	if (!m)
		return;
	if (m->gen != w->regions_gen || m->set != w->region_set) {
		for (i = 0; i < REGION_MEMO; i++)
			m->r[i].end = 0;
		m->gen = w->regions_gen;
		m->set = w->region_set;
		m->next = 0;
	}
	i = m->next & (REGION_MEMO - 1);
	m->r[i] = w->region;
	m->next = i + 1;
}

/*
 * The loaded files' tables by file identity, for the walk by file (see
 * struct cprof_file_config): user space keeps one entry per loaded table.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_UNWIND_MAX_FILES);
	__type(key, struct cprof_file_key);
	__type(value, struct cprof_file_table);
} unwind_files SEC(".maps");

/*
 * The regions walks on this CPU found by file, by address space (the
 * sample's space id, which a fork or exec changes): bpf_find_vma looks up
 * one mapping a sample (from a tick, with interrupts off, it defers the
 * unlock to an irq_work it cannot queue twice), so a walk crossing three
 * files of a process no set has yet needs regions an earlier sample found.
 * A region is used only while its file's table is the one it names
 * (serial): a table unloaded and its rows reused is not read; and for a
 * second only, by then user space has the process's set, so that a file
 * the process unmapped and another mapped in its place is not walked with
 * the first one's table for long.
 */
#define FILE_MEMO_SLOTS	  64
#define FILE_MEMO_REGIONS 4
#define FILE_MEMO_NS	  1000000000ull

struct file_memo {
	__u64 space;
	__u32 next; /* the entry the next region found takes */
	__u32 pad;
	struct {
		struct cprof_region r;
		struct cprof_file_key key;
		__u64 found; /* bpf_ktime_get_ns() */
	} e[FILE_MEMO_REGIONS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FILE_MEMO_SLOTS);
	__type(key, __u32);
	__type(value, struct file_memo);
} file_memos SEC(".maps");

static __always_inline struct file_memo *file_memo_of(__u64 space)
{
	__u32 slot = (__u32)((space * 0x9e3779b97f4a7c15ull) >> 58) & (FILE_MEMO_SLOTS - 1);

	return bpf_map_lookup_elem(&file_memos, &slot);
}

/* What bpf_find_vma's callback reads of the mapping holding a pc. */
struct vma_look {
	struct cprof_file_config fc; /* the offsets to read at */
	__u64 start, end, pgoff;
	struct cprof_file_key key;
	__u32 file; /* the mapping maps a file: key is its identity */
};

/* A kernel pointer plus an offset, read: 0 when it cannot be. */
static __always_inline __u64 kread(__u64 base, __u32 off)
{
	__u64 v = 0;

	if (base)
		bpf_probe_read_kernel(&v, sizeof(v), (const void *)(base + off));
	return v;
}

/*
 * bpf_find_vma's callback, the mapping locked. Its pointer is read with
 * offsets from the kernel's BTF (the object has no CO-RE relocations):
 * vm_start and vm_end open vm_area_struct in every kernel.
 */
static long vma_read(void *task, void *vma, void *ctx)
{
	struct vma_look *l = ctx;
	__u64 v = (__u64)vma, file, inode;

	(void)task;
	l->start = kread(v, 0);
	l->end = kread(v, 8);
	l->pgoff = kread(v, l->fc.vma_pgoff);
	file = kread(v, l->fc.vma_file);
	inode = kread(file, l->fc.file_inode);
	if (!inode)
		return 0;
	l->key.ino = kread(inode, l->fc.inode_ino);
	l->key.dev = (__u32)kread(kread(inode, l->fc.inode_sb), l->fc.sb_dev);
	l->file = 1;
	return 0;
}

/* The region of seg (a file's executable segment) in the mapping l found, into w->region. */
static __always_inline void file_region(struct cprof_walk *w, const struct vma_look *l,
					const struct cprof_file_table *t,
					const struct cprof_file_seg *seg)
{
	__u64 base = l->start - (l->pgoff << l->fc.page_shift); /* where file offset 0 would be */

	w->region.start = base + seg->off > l->start ? base + seg->off : l->start;
	w->region.end = base + seg->end < l->end ? base + seg->end : l->end;
	w->region.bias = base - seg->delta;
	w->region.table_base = t->table_base;
	w->region.page_base = t->page_base;
	w->region.npages = t->npages;
	w->region.row_base = t->row_base;
	w->region.serial = t->serial;
	w->region.flags = CPROF_REGION_TABLE;
}

/* A region of w's process found by file before, whose table is still loaded. */
static __always_inline int recall_file_region(struct cprof_walk *w, __u64 pc)
{
	struct file_memo *m = file_memo_of(w->key.space);
	struct cprof_file_table *t;
	__u32 i;

	if (!m || m->space != w->key.space)
		return 0;
	for (i = 0; i < FILE_MEMO_REGIONS; i++)
		if (pc >= m->e[i].r.start && pc < m->e[i].r.end)
			break;
	if (i >= FILE_MEMO_REGIONS)
		return 0;
	/* One copy for all the entries: the index goes through memory, as in load_u32. */
	*(volatile __u32 *)&w->slot = i;
	i = *(volatile __u32 *)&w->slot & (FILE_MEMO_REGIONS - 1);
	if (bpf_ktime_get_ns() - m->e[i].found > FILE_MEMO_NS)
		return 0;
	t = bpf_map_lookup_elem(&unwind_files, &m->e[i].key);
	if (!t || t->serial != m->e[i].r.serial)
		return 0;
	w->region = m->e[i].r;
	return 1;
}

static __always_inline void remember_file_region(struct cprof_walk *w,
						 const struct cprof_file_key *key)
{
	struct file_memo *m = file_memo_of(w->key.space);
	__u32 i;

	if (!m)
		return;
	if (m->space != w->key.space) {
		for (i = 0; i < FILE_MEMO_REGIONS; i++)
			m->e[i].r.end = 0;
		m->space = w->key.space;
		m->next = 0;
	}
	i = m->next & (FILE_MEMO_REGIONS - 1);
	m->e[i].r = w->region;
	m->e[i].key = *key;
	m->e[i].found = bpf_ktime_get_ns();
	m->next = i + 1;
}

/*
 * The region holding pc found by the file it is in, for code the process's
 * set does not have (a process user space has not followed yet): found
 * before (file_memos), or the mapping (bpf_find_vma), the file's table, and
 * the executable segment holding the pc's file offset. 0 when there is
 * none; w->file_miss when the file has no table loaded (yet).
 */
static __always_inline int find_by_file(struct cprof_walk *w, __u64 pc)
{
	struct cprof_walk_config *cfg;
	struct cprof_file_table *t;
	struct vma_look l = {};
	__u32 zero = 0, i;
	__u64 off;
	long err;

	w->file_miss = 0;
	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	if (!cfg || !cfg->files.on)
		return 0;
	if (recall_file_region(w, pc))
		return 1;
	l.fc = cfg->files;
	err = bpf_find_vma(bpf_get_current_task_btf(), pc, vma_read, &l, 0);
	if (err == -16 /* EBUSY: the mapping lock was held */)
		stat_add(CPROF_STAT_FIND_VMA_BUSY, 1);
	if (err || !l.file || pc < l.start || pc >= l.end)
		return 0;
	t = bpf_map_lookup_elem(&unwind_files, &l.key);
	if (!t) {
		w->file_miss = 1;
		return 0;
	}
	off = pc - l.start + (l.pgoff << l.fc.page_shift);
	for (i = 0; i < CPROF_FILE_SEGS; i++) {
		if (i >= t->nsegs)
			break;
		if (off >= t->seg[i].off && off < t->seg[i].end) {
			file_region(w, &l, t, &t->seg[i]);
			remember_file_region(w, &l.key);
			stat_add(CPROF_STAT_BY_FILE, 1);
			return 1;
		}
	}
	return 0;
}

/*
 * The region holding pc, into w->region; 0 when none. The memo only in the
 * loop walk: unrolled eight times over, it cost the verifier more than the
 * lookups it saves.
 */
static __always_inline int find_region(struct cprof_walk *w, __u64 pc, int loop)
{
	struct cprof_region_key k = {
		.prefixlen = 96, .set = w->region_set, .addr_be = bpf_cpu_to_be64(pc)};
	struct cprof_region *r;

	if (pc >= w->region.start && pc < w->region.end)
		return 1;
	if (loop && recall_region(w, pc))
		return 1;
	r = w->region_set ? bpf_map_lookup_elem(&unwind_regions, &k) : NULL;
	if (!r)
		return (loop & WALK_BY_FILE) && find_by_file(w, pc);
	w->region = *r;
	if (loop)
		remember_region(w);
	return 1;
}

/* One step of the row search; 1 when it is over. */
static __always_inline int search_step(struct cprof_walk *w, __u32 low)
{
	const struct cprof_region *r = &w->region;
	__u32 l = *(volatile __u32 *)&w->lo, h = *(volatile __u32 *)&w->hi, mid, row, chunk;
	struct cprof_unwind_chunk *c;

	if (l >= h)
		return 1;
	mid = l + (h - l) / 2;
	chunk = (r->row_base + mid) / CPROF_UNWIND_CHUNK;
	c = bpf_map_lookup_elem(&unwind_rows, &chunk);
	if (!c)
		return 1;
	row = c->v[(r->row_base + mid) & (CPROF_UNWIND_CHUNK - 1)];
	if ((row & CPROF_UNWIND_PAGE_MASK) <= low)
		*(volatile __u32 *)&w->lo = mid + 1;
	else
		*(volatile __u32 *)&w->hi = mid;
	return 0;
}

/* What the row search's bpf_loop hands each step. */
struct search_loop {
	struct cprof_walk *w;
	__u32 low;
};

static long search_loop_step(__u32 index, void *ctx)
{
	struct search_loop *s = ctx;

	(void)index;
	return search_step(s->w, s->low);
}

/*
 * The row's rule id for the table address vaddr (see unwind_table__lookup).
 * The search bounds live in the walk's map value, not in registers, read
 * and written through volatile accesses (clang kept them in registers
 * otherwise): the verifier knows nothing of what it reads back, so every
 * iteration looks the same to it and it prunes them instead of following
 * each branch of each step (2^17 paths). A chunk the lookup cannot find
 * (there is none: user space bounds every table) ends the search, rather
 * than going on with a made-up row, which was one more path per step
 * (cprof_walk_loop: 3,765 -> 3,319 verified instructions).
 */
static __always_inline __u32 find_rule(struct cprof_walk *w, __u64 vaddr, int loop)
{
	const struct cprof_region *r = &w->region;
	__u32 low = vaddr & CPROF_UNWIND_PAGE_MASK, i, lo;
	struct search_loop s = {w, low};
	__u64 page;

	if (vaddr < r->table_base)
		return CPROF_RULE_NO_CFI;
	page = (vaddr - r->table_base) >> CPROF_UNWIND_PAGE_SHIFT;
	if (page >= r->npages)
		return CPROF_RULE_NO_CFI;
	w->lo = load_u32(w, &unwind_pages, r->page_base + (__u32)page);
	w->hi = load_u32(w, &unwind_pages, r->page_base + (__u32)page + 1);
	/*
	 * With bpf_loop (the loop walk), the step is verified once, not once for
	 * each of its 13 rounds: a third of the walk's instructions.
	 */
	if (loop)
		bpf_loop(CPROF_UNWIND_PAGE_SHIFT + 1, search_loop_step, &s, 0);
	else
		for (i = 0; i < CPROF_UNWIND_PAGE_SHIFT + 1; i++)
			if (search_step(w, low))
				break;
	lo = *(volatile __u32 *)&w->lo;
	if (!lo)
		return CPROF_RULE_NO_CFI;
	return load_u32(w, &unwind_rows, r->row_base + lo - 1) >> CPROF_UNWIND_PAGE_SHIFT;
}

/*
 * Rules found for return addresses, per CPU, by table upload and address:
 * the callers of a stack are the same few return addresses sample after
 * sample, and a row search costs a dozen steps, each a random read in a
 * table of 100 KiB or more. Leaves (exact PCs, all over their functions)
 * are searched every time, so that they do not push the callers out.
 */
#define RULE_MEMO_SLOTS 1024

struct rule_memo {
	__u64 vaddr;
	__u32 serial;
	__u32 rule;
};

/*
 * One per-CPU value holding every slot, not one element a slot: the kernel
 * allocates a per-CPU array's elements one by one, and creating 1,024 of
 * them was a tenth of cprof's own CPU time on a two-second profile.
 */
struct rule_memos {
	struct rule_memo slot[RULE_MEMO_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rule_memos);
} rule_memo SEC(".maps");

/* The memo's slot for a return address, or NULL for a leaf (or a table without a serial). */
static __always_inline struct rule_memo *memo_slot(const struct cprof_walk *w, __u64 vaddr)
{
	struct rule_memos *memos;
	__u32 zero = 0, slot;

	if (w->regs.exact_pc || !w->region.serial)
		return NULL;
	memos = bpf_map_lookup_elem(&rule_memo, &zero);
	if (!memos)
		return NULL;
	slot = (__u32)(((vaddr ^ w->region.serial) * 0x9e3779b97f4a7c15ull) >> 40) &
	       (RULE_MEMO_SLOTS - 1);
	return &memos->slot[slot];
}

/*
 * The rule for vaddr in the current region's table: remembered, or
 * searched. The memo's slot is looked up again to store the answer, not
 * kept across the search: with it held, the verifier went through the
 * search twice (slot found or not), 3,319 -> 5,185 instructions.
 */
static __always_inline __u32 rule_for(struct cprof_walk *w, __u64 vaddr, int loop)
{
	struct rule_memo *m = memo_slot(w, vaddr);
	__u32 id;

	if (m && m->vaddr == vaddr && m->serial == w->region.serial)
		return m->rule;
	id = find_rule(w, vaddr, loop);
	m = memo_slot(w, vaddr);
	if (m) {
		m->vaddr = vaddr;
		m->serial = w->region.serial;
		m->rule = id;
	}
	return id;
}

/* One frame: the caller's registers into w->regs, or w->done with the reason. */
static __always_inline void walk_frame(struct cprof_walk *w, __u64 ra_mask, int loop)
{
	struct cprof_unwind_regs *r = &w->regs;
	struct cprof_unwind_rule *rule = 0;
	__u32 id, stop = 0, fp_step;
	int kind;

	if (!find_region(w, r->pc, loop)) {
		w->u.stop = CPROF_STOP_NO_MAPPING;
		w->done = 1;
		return;
	}
	/* As for a file whose table is not loaded (find_by_file): kept, or copied if young. */
	if (w->region.flags & CPROF_REGION_PENDING) {
		w->file_miss = 1;
		w->u.stop = CPROF_STOP_NO_MAPPING;
		w->done = 1;
		return;
	}
	if (w->region.flags & CPROF_REGION_TABLE) {
		id = rule_for(w, (r->exact_pc ? r->pc : r->pc - 1) - w->region.bias, loop);
		rule = bpf_map_lookup_elem(&unwind_rules, &id);
		if (!rule) {
			w->u.stop = CPROF_STOP_BAD_CFI;
			w->done = 1;
			return;
		}
	}
	kind = cprof_unwind_frame(w->gregs, rule, r, ra_mask, &stop, &fp_step);
	if (kind == CPROF_STEP_CALLER)
		return;
	w->u.stop = kind == CPROF_STEP_ROOT ? CPROF_STOP_NONE : (stop ? stop : CPROF_STOP_READ);
	w->done = 1;
}

/* Records the current frame, then steps to its caller; 1 when the walk is done. */
static __always_inline int walk_one(struct cprof_walk *w, __u64 ra_mask, int loop)
{
	__u32 n;

	if (w->done)
		return 1;
	n = w->u.n;
	if (n >= w->max_depth || n >= CPROF_UNWIND_MAX_DEPTH) {
		w->u.stop = CPROF_STOP_DEPTH;
		w->done = 1;
		return 1;
	}
	/* As user space: an exact pc after the leaf goes in as pc + 1 (looked up at ip - 1). */
	w->u.ips[n] = w->regs.exact_pc && n ? w->regs.pc + 1 : w->regs.pc;
	cprof_ustack_mix(w->mix, w->u.ips[n]);
	w->u.n = n + 1;
	walk_frame(w, ra_mask, loop);
	return w->done;
}

static __always_inline void walk_some(struct cprof_walk *w, __u64 ra_mask, __u32 frames)
{
	__u32 i;

	for (i = 0; i < frames; i++)
		if (walk_one(w, ra_mask, 0))
			return;
}

/* What the walk's bpf_loop hands each step: found once, not once a frame. */
struct walk_loop {
	struct cprof_walk *w;
	__u64 ra_mask;
};

/* bpf_loop's body: verified once, whatever the number of frames. */
static long walk_loop_step(__u32 index, void *ctx)
{
	struct walk_loop *l = ctx;

	(void)index;
	return walk_one(l->w, l->ra_mask, WALK_LOOP) ? 1 : 0;
}

/* The same, with regions found by their file too (cprof_walk_file). */
static long walk_file_step(__u32 index, void *ctx)
{
	struct walk_loop *l = ctx;

	(void)index;
	return walk_one(l->w, l->ra_mask, WALK_LOOP | WALK_BY_FILE) ? 1 : 0;
}

#define COPY_CHUNK 1024

/*
 * A sample whose process has no region set for its space yet goes to user
 * space with its registers and the top of its stack, to be walked there
 * once the tables are built. The stack is read in chunks up to the first
 * that cannot be read, then to the page boundary in it (the top of the
 * stack's mapping). 1 if it was sent.
 */
static __always_inline int copy_sample(struct bpf_perf_event_data *ctx, const struct cprof_walk *w)
{
	struct cprof_copy *c;
	__u32 zero = 0, i, n = 0, rest;
	long k;

	c = bpf_map_lookup_elem(&copy_buf, &zero);
	if (!c)
		return 0;
	c->magic = CPROF_COPY_MAGIC;
	c->set = w->set;
	c->pid = w->key.pid;
	c->tid = w->key.tid;
	c->comm[0] = w->key.comm[0];
	c->comm[1] = w->key.comm[1];
	c->space = w->key.space;
	c->time = bpf_ktime_get_ns();
	c->pc = w->first.pc;
	c->sp = w->first.sp;
	c->fp = w->first.fp;
	c->lr = w->first.lr;
	c->lr_valid = w->first.lr_valid;
	__builtin_memcpy(c->gregs, w->gregs, sizeof(c->gregs));
	c->gregs_valid = w->first.gregs_live;
	c->kern_bytes = 0;
	if (w->kernel) {
		k = bpf_get_stack(ctx, c->kern, sizeof(c->kern), 0);
		c->kern_bytes = k > 0 ? (__u32)k : 0;
	}
	for (i = 0; i < CPROF_COPY_STACK / COPY_CHUNK; i++) {
		if (bpf_probe_read_user(c->stack + n, COPY_CHUNK, (const void *)(w->first.sp + n)))
			break;
		n += COPY_CHUNK;
	}
	/*
	 * n through memory, so that it is one unknown to the verifier: each of
	 * the loop's exits has n a constant of its own, and all that follows
	 * was verified once for each (1,300 of the 2,300 instructions of
	 * cprof_keep_loop). The mask restores what it knew: whole chunks.
	 */
	*(volatile __u32 *)&c->stack_bytes = n;
	n = *(volatile __u32 *)&c->stack_bytes & ~(COPY_CHUNK - 1);
	/*
	 * The chunk that failed may hold the end of the stack's mapping, at a
	 * page boundary: up to there too. A shallow main thread keeps its
	 * outermost frames in that last part (without it, a 1 KiB frame near
	 * the top of the stack ended the walk "beyond the stack copy").
	 */
	rest = -(w->first.sp + n) & 4095;
	if (n < CPROF_COPY_STACK && rest && rest < COPY_CHUNK &&
	    !bpf_probe_read_user(c->stack + n, rest, (const void *)(w->first.sp + n)))
		n += rest;
	c->stack_bytes = n;
	c->flags = 0;
	if (n > CPROF_COPY_STACK)
		return 0;
	return bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, c,
				     __builtin_offsetof(struct cprof_copy, stack) + n) == 0;
}

/* u->n, read again from memory: see hash_read. */
static __always_inline __u32 frames_of(const struct cprof_ustack *u)
{
	return *(const volatile __u32 *)&u->n;
}

/*
 * Sends the stack to user space unless it has it (known_stacks): first the
 * stack, then its hash into the set, so that a sample that finds the hash
 * there finds the stack already in a ring, which user space reads before it
 * drains the sample's count. 0 if the ring had no room, 1 if user space has
 * it, 2 if it was sent now (a user stack then counts its sample: key).
 * room: the frames u has in the map, at most.
 */
static __always_inline int send_stack(struct bpf_perf_event_data *ctx, struct cprof_ustack *u,
				      __u32 room, const struct cprof_key *key, __u32 set)
{
	struct cprof_stack_hash *known = known_slot(&u->hash);
	__u32 n = frames_of(u);

	if (known && known->lo == u->hash.lo && known->hi == u->hash.hi)
		return 1;
	if (n > room)
		n = room;
	u->magic = CPROF_USTACK_MAGIC;
	u->count_set = 0;
	if (key) {
		u->count_set = 1 + set;
		u->key = *key;
		u->key.user_hash = u->hash;
	}
	if (bpf_perf_event_output(ctx, &walked_out, BPF_F_CURRENT_CPU, u,
				  __builtin_offsetof(struct cprof_ustack, ips) + n * sizeof(__u64)))
		return 0;
	/*
	 * Full: the stack is sent again next time, which costs more but loses
	 * nothing. The slot is found again, not held across the output: the
	 * verifier went through all between twice (slot or none).
	 */
	known = known_slot(&u->hash);
	if (known) {
		known->lo = u->hash.lo;
		known->hi = u->hash.hi;
	}
	return 2;
}

/*
 * The hash of a stack read whole, not walked: a loop over its frames. The
 * frame count is read again after the loop: the copy the loop compared
 * with holds a different range at each of its 127 exits, and would have
 * the verifier go through all that follows once for each. With bpf_loop
 * (loop: cprof_keep_loop, Linux 5.17+) the body is verified once, not once
 * a frame: cprof_keep costs the verifier some 11,000 instructions, most of
 * them its two loops of 127.
 */
struct hash_loop {
	const struct cprof_ustack *u;
	__u64 mix[2];
};

static long hash_step(__u32 i, void *ctx)
{
	struct hash_loop *h = ctx;
	const struct cprof_ustack *u = h->u;
	__u64 at = i;

	if (at >= frames_of(u))
		return 1;
	/* Checked on the register the access uses: clang would check a copy. */
	asm volatile("" : "+r"(at));
	if (at >= CPROF_MAX_STACK_DEPTH)
		return 1;
	cprof_ustack_mix(h->mix, u->ips[at]);
	return 0;
}

static __always_inline void hash_read(struct cprof_ustack *u, __u32 kind, int loop)
{
	struct hash_loop h = {.u = u, .mix = {CPROF_USTACK_SEED0, CPROF_USTACK_SEED1}};
	__u32 i, n = frames_of(u);

	if (loop) {
		bpf_loop(CPROF_MAX_STACK_DEPTH, hash_step, &h, 0);
	} else {
		for (i = 0; i < CPROF_MAX_STACK_DEPTH; i++) {
			if (i >= n)
				break;
			cprof_ustack_mix(h.mix, u->ips[i]);
		}
	}
	u->kind = kind;
	u->stop = CPROF_STOP_NONE;
	cprof_ustack_hash(h.mix, frames_of(u), CPROF_STOP_NONE, kind, &u->hash);
}

/* The kernel stack into w->k, hashed and sent: 0, or why the sample has none. */
static __always_inline long keep_kernel(struct bpf_perf_event_data *ctx, struct cprof_walk *w,
					int loop)
{
	/* No more than hash_read reads (and the kernel's sysctl gives). */
	long n = bpf_get_stack(ctx, w->k.ips, CPROF_MAX_STACK_DEPTH * sizeof(__u64), 0);

	if (n <= 0)
		return n ? n : -14 /* EFAULT: none */;
	w->k.n = (__u32)n / sizeof(__u64);
	hash_read(&w->k, CPROF_USTACK_KERNEL, loop);
	return send_stack(ctx, &w->k, CPROF_MAX_STACK_DEPTH, NULL, 0) ? 0 : -28 /* ENOSPC */;
}

/*
 * Counts the sample by the hashes of its stacks, each sent to user space
 * the first time (send_stack). A stack the ring had no room for is counted
 * as lost, -ENOSPC in place of its hash. The kernel stack goes first: a
 * user stack sent now carries the sample's whole key and counts it (see
 * struct cprof_ustack), so the sample needs no entry in the count map.
 */
static __always_inline void keep_stacks(struct bpf_perf_event_data *ctx, struct cprof_walk *w,
					int loop)
{
	const struct cprof_stack_hash none = {0, 0};
	long kerr = -14 /* EFAULT: no kernel stack */;
	int sent;

	w->key.user_hash = none;
	w->key.kern_hash = none;
	w->key.user_stack_id = (__u32)-14;
	if (w->kernel)
		kerr = keep_kernel(ctx, w, loop);
	if (!kerr)
		w->key.kern_hash = w->k.hash;
	else
		stack_stat(kerr, CPROF_STAT_KERN_COLLISION, CPROF_STAT_KERN_STACK_ERR);
	w->key.kern_stack_id = (__u32)(kerr ? kerr : -14);
	if (w->u.kind == CPROF_USTACK_WALKED) {
		stat_add(CPROF_STAT_WALKS, 1);
		cprof_ustack_hash(w->mix, w->u.n, w->u.stop, CPROF_USTACK_WALKED, &w->u.hash);
	} else {
		hash_read(&w->u, CPROF_USTACK_FP, loop);
	}
	if (w->u.n) {
		sent = send_stack(ctx, &w->u, CPROF_UNWIND_MAX_DEPTH, &w->key, w->set);
		if (sent == 2) {
			/* Counted by the record: a new process is still announced. */
			announce(ctx, &w->key);
			return;
		}
		if (sent) {
			w->key.user_hash = w->u.hash;
		} else {
			stat_add(CPROF_STAT_USER_STACK_ERR, 1);
			w->key.user_stack_id = (__u32)-28; /* ENOSPC */
		}
	}
	count_in(ctx, &w->key, w->set);
}

/* Where user space has got to in the kernel's records; now if it has not said. */
static __always_inline __u64 followed_until(void)
{
	struct cprof_walk_config *cfg;
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	if (!cfg || !cfg->followed_until || cfg->followed_until > now)
		return now;
	return cfg->followed_until;
}

/*
 * A process walked by file alone (no region set for its space): one user
 * space has not read yet, such as a program running before cprof began,
 * whose own file has no table until it is read. What the walk by file
 * cannot find, the copy is walked with once it is, as before the walk.
 */
static __always_inline int by_file_only(const struct cprof_walk *w)
{
	return !w->region_set;
}

static __always_inline int keep(struct bpf_perf_event_data *ctx, int loop)
{
	struct cprof_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 0;
	/*
	 * A program exec'd moments before what user space has read of the
	 * records: it may not know all it mapped yet (see YOUNG_NS), and walks
	 * the copy once it does. A late user space (a busy or emulated machine)
	 * widens the window with it.
	 */
	if (w->copy_for != COPY_FAILED && w->u.stop == CPROF_STOP_NO_MAPPING &&
	    (by_file_only(w) || (w->key.space && w->key.space + YOUNG_NS > followed_until()))) {
		w->copy_for = COPY_FOR_KEEP;
		walk_next(ctx, w, PROG_COPY);
	}
	/* Not copied: the code's file was found, its table was not loaded. */
	if (w->file_miss && w->u.stop == CPROF_STOP_NO_MAPPING)
		w->u.stop = CPROF_STOP_NO_TABLE;
	keep_stacks(ctx, w, loop);
	in_flight_add(w->set, -1);
	return 0;
}

/* The last step of every walk; user space loads one of the two (see hash_read). */
SEC("perf_event")
int cprof_keep(struct bpf_perf_event_data *ctx)
{
	return keep(ctx, 0);
}

SEC("perf_event")
int cprof_keep_loop(struct bpf_perf_event_data *ctx)
{
	return keep(ctx, 1);
}

/*
 * The walk could not go on to its last step (never once loaded): user space
 * walks the sample instead, or it is counted lost.
 */
static __always_inline void keep_elsewhere(struct bpf_perf_event_data *ctx, struct cprof_walk *w)
{
	w->copy_for = COPY_FOR_LOST;
	walk_next(ctx, w, PROG_COPY);
	stat_add(CPROF_STAT_WALKS_LOST, 1);
	in_flight_add(w->set, -1);
}

/* The last step, which counts the sample (cprof_keep); only before it is loaded, none. */
static __always_inline void keep_now(struct bpf_perf_event_data *ctx, struct cprof_walk *w)
{
	w->done = 1;
	walk_next(ctx, w, PROG_KEEP);
	stat_add(CPROF_STAT_WALKS_LOST, 1);
	in_flight_add(w->set, -1);
}

/* A sample whose stack copy could not be sent keeps its leaf, and says why. */
static __always_inline void copy_lost(struct cprof_walk *w)
{
	stat_add(CPROF_STAT_COPIES_LOST, 1);
	w->u.ips[0] = w->regs.pc;
	cprof_ustack_mix(w->mix, w->regs.pc);
	w->u.n = 1;
	w->u.stop = CPROF_STOP_COPY_LOST;
}

/* Why a sample was copied, counted for the summary. */
static __always_inline void copy_cause(const struct cprof_walk *w, __u32 why)
{
	if (why == COPY_FOR_START)
		stat_add(CPROF_STAT_COPY_NEW, 1);
	else if (why == COPY_FOR_EARLY)
		stat_add(CPROF_STAT_COPY_EARLY, 1);
	else if (why == COPY_FOR_KEEP && w->file_miss)
		stat_add(CPROF_STAT_COPY_NO_TABLE, 1);
	else if (why == COPY_FOR_KEEP)
		stat_add(by_file_only(w) ? CPROF_STAT_COPY_NEW : CPROF_STAT_COPY_YOUNG, 1);
}

/*
 * A stack copy for user space to walk, in a program of its own: inlined, the
 * copy cost the verifier some 600 instructions in each of the three
 * programs that need one. What happens when it cannot be sent depends on
 * who asked (copy_for).
 */
SEC("perf_event")
int cprof_copy(struct bpf_perf_event_data *ctx)
{
	struct cprof_walk *w;
	__u32 zero = 0, why;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 0;
	why = w->copy_for;
	if (copy_sample(ctx, w)) {
		stat_add(CPROF_STAT_COPIES, 1);
		copy_cause(w, why);
		if (why == COPY_FOR_START || why == COPY_FOR_EARLY)
			announce(ctx, &w->key);
		in_flight_add(w->set, -1);
		return 0;
	}
	w->copy_for = COPY_FAILED;
	if (why == COPY_FOR_LOST) {
		stat_add(CPROF_STAT_WALKS_LOST, 1);
		in_flight_add(w->set, -1);
		return 0;
	}
	if (why == COPY_FOR_START || why == COPY_FOR_EARLY)
		copy_lost(w);
	keep_now(ctx, w);
	return 0;
}

/*
 * A run of the walk by tail calls: frames, then itself again. It stops at
 * CPROF_WALK_RUNS runs, which leaves the tail calls the last step needs;
 * user space loads the variant whose runs reach walk_config.max_depth.
 */
static __always_inline int walk_run(struct bpf_perf_event_data *ctx, __u32 frames)
{
	struct cprof_walk_config *cfg;
	struct cprof_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 0;
	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	walk_some(w, cfg ? cfg->ra_mask : ~0ull, frames);
	if (!w->done && ++w->runs < CPROF_WALK_RUNS)
		walk_next(ctx, w, PROG_WALK);
	/* Out of runs (or of tail calls) or done. */
	if (!w->done) {
		w->u.stop = CPROF_STOP_DEPTH;
		w->done = 1;
	}
	walk_next(ctx, w, PROG_KEEP);
	keep_elsewhere(ctx, w);
	return 0;
}

SEC("perf_event")
int cprof_walk(struct bpf_perf_event_data *ctx)
{
	return walk_run(ctx, CPROF_WALK_FRAMES);
}

/* For a --max-stack beyond CPROF_WALK_RUNS * CPROF_WALK_FRAMES: more frames a run. */
SEC("perf_event")
int cprof_walk_deep(struct bpf_perf_event_data *ctx)
{
	return walk_run(ctx, CPROF_WALK_FRAMES_DEEP);
}

/*
 * The same walk in one run where the kernel has bpf_loop (5.17+): its body
 * is verified once, where cprof_walk's eight unrolled frames cost the
 * verifier nine times as many instructions (user space loads one of the two).
 */
static __always_inline int walk_looped(struct bpf_perf_event_data *ctx, int by_file)
{
	struct cprof_walk_config *cfg;
	struct walk_loop l;
	struct cprof_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 0;
	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	l.w = w;
	l.ra_mask = cfg ? cfg->ra_mask : ~0ull;
	w->regions_gen = cfg ? cfg->regions_gen : 0;
	bpf_loop(CPROF_UNWIND_MAX_DEPTH + 1, by_file ? walk_file_step : walk_loop_step, &l, 0);
	if (!w->done) {
		w->u.stop = CPROF_STOP_DEPTH;
		w->done = 1;
	}
	walk_next(ctx, w, PROG_KEEP);
	keep_elsewhere(ctx, w);
	return 0;
}

SEC("perf_event")
int cprof_walk_loop(struct bpf_perf_event_data *ctx)
{
	return walk_looped(ctx, 0);
}

/*
 * The loop walk that finds regions by their file too, where the kernel has
 * bpf_find_vma (5.17+): the walk of processes user space has not followed
 * yet, and of code their set lacks. Never loaded where the kernel has none.
 */
SEC("perf_event")
int cprof_walk_file(struct bpf_perf_event_data *ctx)
{
	return walk_looped(ctx, 1);
}

/* Whether the tick interrupted user code: its registers are then the user's. */
static __always_inline int in_user(const struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (ctx->regs.cs & 3) == 3;
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) == 0;
#else
	return 0;
#endif
}

/*
 * The general registers a CFA rule may name (CPROF_GREGS), by DWARF number,
 * from the saved user registers p; the mask of those known.
 */
static __always_inline __u32 start_gregs(const bpf_user_pt_regs_t *p, __u64 *g)
{
#if defined(__TARGET_ARCH_x86)
	g[0] = p->rax;
	g[1] = p->rdx;
	g[2] = p->rcx;
	g[3] = p->rbx;
	g[4] = p->rsi;
	g[5] = p->rdi;
	g[6] = p->rbp;
	g[7] = p->rsp;
	g[8] = p->r8;
	g[9] = p->r9;
	g[10] = p->r10;
	g[11] = p->r11;
	g[12] = p->r12;
	g[13] = p->r13;
	g[14] = p->r14;
	g[15] = p->r15;
	return 0xffff;
#elif defined(__TARGET_ARCH_arm64)
	__builtin_memcpy(g, p->regs, CPROF_GREGS * sizeof(__u64));
	return 0xffff;
#else
	return 0;
#endif
}

static __always_inline void start_regs(const struct bpf_perf_event_data *ctx,
				       struct cprof_unwind_regs *r)
{
#if defined(__TARGET_ARCH_x86)
	r->pc = ctx->regs.rip;
	r->sp = ctx->regs.rsp;
	r->fp = ctx->regs.rbp;
#elif defined(__TARGET_ARCH_arm64)
	r->pc = ctx->regs.pc;
	r->sp = ctx->regs.sp;
	r->fp = ctx->regs.regs[29];
	r->lr = ctx->regs.regs[30];
#endif
	r->fp_valid = 1;
	r->lr_valid = 1;
	r->exact_pc = 1;
}

#if defined(__TARGET_ARCH_x86)
#define THREAD_SIZE_MIN 16384
/* FRED kernels (6.9+) keep 16 bytes above the saved registers. */
#define STACK_PADDING_MAX 16

/* The saved registers are the user's: its code and stack segment selectors. */
static __always_inline int user_saved(const bpf_user_pt_regs_t *p, struct cprof_unwind_regs *r)
{
	if ((p->cs & 0xffff) != 0x33 || (p->ss & 0xffff) != 0x2b)
		return 0;
	r->pc = p->rip;
	r->sp = p->rsp;
	r->fp = p->rbp;
	return 1;
}
#elif defined(__TARGET_ARCH_arm64)
#define THREAD_SIZE_MIN	  16384
#define STACK_PADDING_MAX 0

/* The saved state is EL0's, AArch64 (not a 32-bit task). */
static __always_inline int user_saved(const bpf_user_pt_regs_t *p, struct cprof_unwind_regs *r)
{
	if ((p->pstate & 0x1f) != 0)
		return 0;
	r->pc = p->pc;
	r->sp = p->sp;
	r->fp = p->regs[29];
	r->lr = p->regs[30];
	return 1;
}
#endif

/*
 * A sample taken in the kernel: the registers user code had when it
 * entered the kernel, saved at the top of the task's kernel stack. Its size
 * (THREAD_SIZE, doubled by KASAN) and the padding above the registers are
 * not in the BTF, so the candidates are tried in turn, each checked.
 */
static __always_inline int kernel_entry_regs(const struct cprof_walk_config *cfg,
					     struct cprof_unwind_regs *r, __u64 *gregs)
{
	bpf_user_pt_regs_t saved;
	__u64 task = bpf_get_current_task(), stack = 0, top;
	__u32 i;

	if (!cfg || !cfg->task_stack_off || !cfg->pt_regs_size ||
	    bpf_probe_read_kernel(&stack, sizeof(stack), (void *)(task + cfg->task_stack_off)) ||
	    !stack)
		return 0;
	for (i = 0; i < 4; i++) {
		top = stack + (THREAD_SIZE_MIN << (i >> 1)) - cfg->pt_regs_size;
		if (i & 1) {
			if (!STACK_PADDING_MAX)
				continue;
			top -= STACK_PADDING_MAX;
		}
		if (bpf_probe_read_kernel(&saved, sizeof(saved), (void *)top) == 0 &&
		    user_saved(&saved, r)) {
			r->gregs_live = start_gregs(&saved, gregs);
			return 1;
		}
	}
	return 0;
}

/*
 * A process user space has not followed yet (or not since its exec): walked
 * with regions found by their file, where the kernel can (a walk in
 * PROG_FILE) and the offsets to read a mapping's file are known.
 */
static __always_inline void walk_by_file(struct bpf_perf_event_data *ctx, struct cprof_walk *w)
{
	struct cprof_walk_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	if (!cfg || !cfg->files.on)
		return;
	w->region_set = 0;
	walk_next(ctx, w, PROG_FILE);
}

/*
 * Every tick. A sample of user code, or of the kernel where the task's
 * user registers are found, is walked with its process's region set, if
 * it has one for the space the sample was taken in; else it goes to user
 * space as a stack copy (its PC alone if the ring is full). The idle task,
 * kernel threads and samples whose user registers cannot be found keep
 * their user stack by frame pointers. cprof_keep counts them all.
 */
SEC("perf_event")
int cprof_unwind_sample(struct bpf_perf_event_data *ctx)
{
	struct cprof_key key = {};
	struct cprof_walk_config *cfg;
	struct cprof_unwind_set *us;
	struct cprof_walk *w;
	__u32 zero = 0, set;
	long n;

	if (!sample_begin(&key, &set))
		return 0;
	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w) {
		stat_add(CPROF_STAT_WALKS_LOST, 1);
		in_flight_add(set, -1);
		return 0;
	}
	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	w->max_depth = cfg && cfg->max_depth ? cfg->max_depth : CPROF_MAX_STACK_DEPTH;
	w->runs = 0;
	w->key = key;
	w->set = set;
	w->done = 0;
	w->copy_for = 0;
	w->mix[0] = CPROF_USTACK_SEED0;
	w->mix[1] = CPROF_USTACK_SEED1;
	w->u.n = 0;
	w->u.stop = CPROF_STOP_NONE;
	w->u.kind = CPROF_USTACK_WALKED;
	__builtin_memset(&w->regs, 0, sizeof(w->regs));
	__builtin_memset(&w->region, 0, sizeof(w->region));
	w->kernel = !in_user(ctx);
	if (!key.pid || (w->kernel && !kernel_entry_regs(cfg, &w->regs, w->gregs))) {
		n = bpf_get_stack(ctx, w->u.ips, CPROF_MAX_STACK_DEPTH * sizeof(__u64),
				  BPF_F_USER_STACK);
		w->u.n = n > 0 ? (__u32)n / sizeof(__u64) : 0;
		w->u.kind = CPROF_USTACK_FP;
		keep_now(ctx, w);
		return 0;
	}
	if (w->kernel) {
		w->regs.fp_valid = 1;
		w->regs.lr_valid = 1;
		w->regs.exact_pc = 1;
	} else {
		start_regs(ctx, &w->regs);
		w->regs.gregs_live = start_gregs(&ctx->regs, w->gregs);
	}
	w->first = w->regs;
	w->file_miss = 0;
	us = bpf_map_lookup_elem(&unwind_sets, &key.pid);
	if (us && us->space == key.space) {
		w->region_set = us->set;
		walk_next(ctx, w, PROG_WALK);
		/* The walk is not loaded yet (see walker.c): as for a process without tables. */
		w->copy_for = COPY_FOR_EARLY;
	} else {
		walk_by_file(ctx, w);
		w->copy_for = COPY_FOR_START;
	}
	walk_next(ctx, w, PROG_COPY);
	/* Before cprof_copy is in place (see sample_object.c): as when a copy cannot be sent. */
	copy_lost(w);
	keep_now(ctx, w);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
