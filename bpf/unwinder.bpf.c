// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The user-stack unwinder: walks the stack of the interrupted user code
 * with the compact unwind tables user space built from each file's CFI
 * (bpf/unwind_abi.h), one step per frame (bpf/unwind_step.h, the same
 * code user space runs), and hands out the frames.
 *
 * Kernel floor 5.5 (bpf_probe_read_user; bounded loops from 5.3): older
 * kernels keep the frame-pointer sampler. No CO-RE relocations, no
 * global data, so it loads without kernel BTF. A walk takes FRAMES_PER_RUN
 * frames per program run and tail-calls itself for the next ones, which
 * keeps each run's verification small on every kernel.
 *
 * Per frame: the process's region holding the PC (an LPM trie keyed by
 * {pid, address}: one lookup, reused while the PC stays in the region),
 * the table's page, a binary search of at most 16 steps among the page's
 * rows, the rule, the step.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "sampler_abi.h"
#include "unwind_abi.h"

#define CPROF_UNWIND_READ(mem, dst, addr) bpf_probe_read_user((dst), 8, (const void *)(addr))
#include "unwind_step.h"

#define FRAMES_PER_RUN 8
#define PROG_WALK      0

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
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cprof_region_key);
	__type(value, struct cprof_region);
} unwind_regions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_walk);
} walks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} walk_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} walk_events SEC(".maps");

static __always_inline __u32 load_u32(void *map, __u32 index)
{
	__u32 chunk = index / CPROF_UNWIND_CHUNK;
	struct cprof_unwind_chunk *c = bpf_map_lookup_elem(map, &chunk);

	return c ? c->v[index & (CPROF_UNWIND_CHUNK - 1)] : 0;
}

/* The region holding pc, into w->region; 0 when none. */
static __always_inline int find_region(struct cprof_walk *w, __u64 pc)
{
	struct cprof_region_key k = {
		.prefixlen = 96, .pid = w->pid, .addr_be = bpf_cpu_to_be64(pc)};
	struct cprof_region *r;

	if (pc >= w->region.start && pc < w->region.end)
		return 1;
	r = bpf_map_lookup_elem(&unwind_regions, &k);
	if (!r)
		return 0;
	w->region = *r;
	return 1;
}

/*
 * The row's rule id for the table address vaddr (see unwind_table__lookup).
 * The search bounds live in the walk's map value, not in registers: the
 * verifier knows nothing of what it reads back, so every iteration looks
 * the same to it and it prunes them instead of following each branch of
 * each step (2^17 paths).
 */
static __always_inline __u32 find_rule(struct cprof_walk *w, __u64 vaddr)
{
	const struct cprof_region *r = &w->region;
	__u32 mid, low = vaddr & CPROF_UNWIND_PAGE_MASK, row, i, lo;
	__u64 page;

	if (vaddr < r->table_base)
		return CPROF_RULE_NO_CFI;
	page = (vaddr - r->table_base) >> CPROF_UNWIND_PAGE_SHIFT;
	if (page >= r->npages)
		return CPROF_RULE_NO_CFI;
	w->lo = load_u32(&unwind_pages, r->page_base + (__u32)page);
	w->hi = load_u32(&unwind_pages, r->page_base + (__u32)page + 1);
	for (i = 0; i < CPROF_UNWIND_PAGE_SHIFT + 1; i++) {
		if (w->lo >= w->hi)
			break;
		mid = w->lo + (w->hi - w->lo) / 2;
		row = load_u32(&unwind_rows, r->row_base + mid);
		if ((row & CPROF_UNWIND_PAGE_MASK) <= low)
			w->lo = mid + 1;
		else
			w->hi = mid;
	}
	lo = w->lo;
	if (!lo)
		return CPROF_RULE_NO_CFI;
	return load_u32(&unwind_rows, r->row_base + lo - 1) >> CPROF_UNWIND_PAGE_SHIFT;
}

/* One frame: the caller's registers into w->regs, or w->done with the reason. */
static __always_inline void walk_frame(struct cprof_walk *w, __u64 ra_mask)
{
	struct cprof_unwind_regs *r = &w->regs;
	struct cprof_unwind_rule *rule = 0;
	__u32 id, stop = 0, fp_step;
	int kind;

	if (!find_region(w, r->pc)) {
		w->stop = CPROF_STOP_NO_MAPPING;
		w->done = 1;
		return;
	}
	if (w->region.flags & CPROF_REGION_TABLE) {
		id = find_rule(w, (r->exact_pc ? r->pc : r->pc - 1) - w->region.bias);
		rule = bpf_map_lookup_elem(&unwind_rules, &id);
		if (!rule) {
			w->stop = CPROF_STOP_BAD_CFI;
			w->done = 1;
			return;
		}
	}
	kind = cprof_unwind_frame(NULL, rule, r, ra_mask, &stop, &fp_step);
	if (kind == CPROF_STEP_CALLER)
		return;
	w->stop = kind == CPROF_STEP_ROOT ? CPROF_STOP_NONE : (stop ? stop : CPROF_STOP_READ);
	w->done = 1;
}

/* Records the current frame, then steps to its caller. */
static __always_inline void walk_some(struct cprof_walk *w, __u64 ra_mask)
{
	__u32 i, n;

	for (i = 0; i < FRAMES_PER_RUN; i++) {
		if (w->done)
			return;
		n = w->n;
		if (n >= CPROF_MAX_STACK_DEPTH) {
			w->stop = CPROF_STOP_DEPTH;
			w->done = 1;
			return;
		}
		/* As user space: an exact pc after the leaf goes in as pc + 1 (looked up at ip -
		 * 1). */
		w->ips[n] = w->regs.exact_pc && n ? w->regs.pc + 1 : w->regs.pc;
		w->n = n + 1;
		walk_frame(w, ra_mask);
	}
}

static __always_inline void finish(struct bpf_perf_event_data *ctx, struct cprof_walk *w)
{
	bpf_perf_event_output(ctx, &walk_events, BPF_F_CURRENT_CPU, w, sizeof(*w));
}

SEC("perf_event")
int cprof_walk(struct bpf_perf_event_data *ctx)
{
	struct cprof_walk_config *cfg;
	struct cprof_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	cfg = bpf_map_lookup_elem(&walk_config, &zero);
	if (!w || !cfg)
		return 0;
	walk_some(w, cfg->ra_mask);
	if (!w->done)
		bpf_tail_call(ctx, &walk_progs, PROG_WALK);
	/* Out of tail calls (33 runs at most) or done. */
	if (!w->done) {
		w->stop = CPROF_STOP_DEPTH;
		w->done = 1;
	}
	finish(ctx, w);
	return 0;
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

/* Samples of user code of the processes with regions: their stacks, walked. */
SEC("perf_event")
int cprof_unwind_sample(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0, pid = bpf_get_current_pid_tgid() >> 32;
	struct cprof_walk *w;

	if (!in_user(ctx))
		return 0;
	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 0;
	__builtin_memset(&w->regs, 0, sizeof(w->regs));
	__builtin_memset(&w->region, 0, sizeof(w->region));
	w->pid = pid;
	w->n = 0;
	w->stop = 0;
	w->done = 0;
	start_regs(ctx, &w->regs);
	bpf_tail_call(ctx, &walk_progs, PROG_WALK);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
