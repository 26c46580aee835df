// SPDX-License-Identifier: MIT
/*
 * Decodes PERF_RECORD_SAMPLE as include/uapi/linux/perf_event.h lays it
 * out: the fields sample_type selects, in a fixed order, with no tag or
 * padding between them, so one field read with the wrong size shifts all
 * the rest. The parser therefore takes only the fields whose size it knows
 * from the layout alone, and requires the record to end exactly where the
 * last one does: a layout that disagrees with the event (a wrong regs_mask)
 * is caught on the first sample instead of yielding plausible garbage.
 * Every length is checked against the header's size before it is used, and
 * every read is a memcpy: a copy out of the ring, or a fuzzer's input, need
 * not be aligned.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <stdbool.h>
#include <string.h>

#include "sample/perf_sample.h"

/* The fixed-size fields before READ, in record order: 8 bytes each (TID and CPU two u32). */
static const uint64_t fixed_fields[] = {
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,	  PERF_SAMPLE_TID,
	PERF_SAMPLE_TIME,	PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
	PERF_SAMPLE_STREAM_ID,	PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD};

/* The unread rest of a record. */
struct cursor {
	const unsigned char *p;
	size_t left;
};

/* The i-th u64 of an array in the record. */
static uint64_t u64_at(const unsigned char *p, size_t i)
{
	uint64_t v;

	memcpy(&v, p + i * sizeof(v), sizeof(v));
	return v;
}

/* The next len bytes in *at, or -EINVAL if the record ends first. */
static int take(struct cursor *c, size_t len, const unsigned char **at)
{
	if (len > c->left)
		return -EINVAL;
	*at = c->p;
	c->p += len;
	c->left -= len;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *v)
{
	const unsigned char *at;

	if (take(c, sizeof(*v), &at))
		return -EINVAL;
	*v = u64_at(at, 0);
	return 0;
}

int perf_sample__greg_bit(unsigned int i)
{
#if defined(__x86_64__)
	/* DWARF's order (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8...) is not perf's. */
	static const int8_t bits[CPROF_GREGS] = {
		PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,
		PERF_REG_X86_SI,  PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,
		PERF_REG_X86_R8,  PERF_REG_X86_R9,  PERF_REG_X86_R10, PERF_REG_X86_R11,
		PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	};

	return i < CPROF_GREGS ? bits[i] : -1;
#else
	return i < CPROF_GREGS ? (int)(PERF_REG_ARM64_X0 + i) : -1;
#endif
}

void perf_sample__layout(struct perf_sample_layout *out)
{
	unsigned int i;

#if defined(__aarch64__)
	*out = (struct perf_sample_layout){
		.pc_reg = PERF_REG_ARM64_PC,
		.sp_reg = PERF_REG_ARM64_SP,
		.fp_reg = PERF_REG_ARM64_X29,
		.lr_reg = PERF_REG_ARM64_LR,
	};
#elif defined(__x86_64__)
	*out = (struct perf_sample_layout){
		.pc_reg = PERF_REG_X86_IP,
		.sp_reg = PERF_REG_X86_SP,
		.fp_reg = PERF_REG_X86_BP,
		.lr_reg = -1,
	};
#else
#error "cprof samples user registers on x86_64 and arm64 only"
#endif
	out->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
			   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	out->regs_mask = 1ULL << out->pc_reg | 1ULL << out->sp_reg | 1ULL << out->fp_reg;
	if (out->lr_reg >= 0)
		out->regs_mask |= 1ULL << out->lr_reg;
	for (i = 0; i < CPROF_GREGS; i++)
		out->regs_mask |= 1ULL << perf_sample__greg_bit(i);
}

static bool reg_in_mask(int bit, uint64_t mask)
{
	return bit == -1 || (bit >= 0 && bit < 64 && (mask >> bit & 1));
}

static bool layout_ok(const struct perf_sample_layout *l)
{
	if (l->sample_type & ~(uint64_t)PERF_SAMPLE_PARSED_TYPES)
		return false;
	if (!(l->sample_type & PERF_SAMPLE_REGS_USER))
		return true;
	return reg_in_mask(l->pc_reg, l->regs_mask) && reg_in_mask(l->sp_reg, l->regs_mask) &&
	       reg_in_mask(l->fp_reg, l->regs_mask) && reg_in_mask(l->lr_reg, l->regs_mask);
}

/* What a failed parse leaves, and a good one starts from: no copy, nothing stale. */
static void reset(struct cprof_copy *out)
{
	memset(out, 0, offsetof(struct cprof_copy, kern));
	out->stack_bytes = 0;
	out->flags = 0;
}

static int read_fixed(struct cursor *c, uint64_t sample_type, struct cprof_copy *out)
{
	const unsigned char *at;
	size_t i;

	for (i = 0; i < sizeof(fixed_fields) / sizeof(fixed_fields[0]); i++) {
		if (!(sample_type & fixed_fields[i]))
			continue;
		if (take(c, 8, &at))
			return -EINVAL;
		if (fixed_fields[i] == PERF_SAMPLE_TID) {
			memcpy(&out->pid, at, sizeof(out->pid));
			memcpy(&out->tid, at + 4, sizeof(out->tid));
		} else if (fixed_fields[i] == PERF_SAMPLE_TIME) {
			out->time = u64_at(at, 0);
		}
	}
	return 0;
}

/*
 * Kernel frames only, leaf first, as bpf_get_stack gives the BPF program's
 * copies: the context markers go, and so do frames of any other context
 * (user frames, were exclude_callchain_user not set; a guest's). Frames past
 * CPROF_MAX_STACK_DEPTH are cut as bpf_get_stack cuts them.
 */
static int read_callchain(struct cursor *c, struct cprof_copy *out)
{
	const unsigned char *ips;
	uint64_t nr, ip, i;
	bool kernel = false;
	uint32_t n = 0;

	if (take_u64(c, &nr) || nr > c->left / 8 || take(c, nr * 8, &ips))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		ip = u64_at(ips, i);
		if (ip >= PERF_CONTEXT_MAX)
			kernel = ip == PERF_CONTEXT_KERNEL;
		else if (kernel && n < CPROF_MAX_STACK_DEPTH)
			out->kern[n++] = ip;
	}
	out->kern_bytes = n * 8;
	return 0;
}

/* The value of register bit, which layout_ok found in mask; the record holds them in bit order. */
static uint64_t reg_value(const unsigned char *regs, uint64_t mask, int bit)
{
	if (bit < 0)
		return 0;
	return u64_at(regs, __builtin_popcountll(mask & ((1ULL << bit) - 1)));
}

/* The general registers the event samples; those it does not are not known. */
static void read_gregs(const unsigned char *regs, uint64_t mask, struct cprof_copy *out)
{
	unsigned int i;
	int bit;

	for (i = 0; i < CPROF_GREGS; i++) {
		bit = perf_sample__greg_bit(i);
		if (!reg_in_mask(bit, mask) || bit < 0)
			continue;
		out->gregs[i] = reg_value(regs, mask, bit);
		out->gregs_valid |= 1u << i;
	}
}

/* *user: false when the sample has no user registers (a kernel thread's). */
static int read_regs(struct cursor *c, const struct perf_sample_layout *l, struct cprof_copy *out,
		     bool *user)
{
	const unsigned char *regs;
	uint64_t abi;

	if (take_u64(c, &abi))
		return -EINVAL;
	*user = abi != PERF_SAMPLE_REGS_ABI_NONE;
	if (!*user)
		return 0;
	if (take(c, 8 * (size_t)__builtin_popcountll(l->regs_mask), &regs))
		return -EINVAL;
	out->pc = reg_value(regs, l->regs_mask, l->pc_reg);
	out->sp = reg_value(regs, l->regs_mask, l->sp_reg);
	out->fp = reg_value(regs, l->regs_mask, l->fp_reg);
	out->lr = reg_value(regs, l->regs_mask, l->lr_reg);
	out->lr_valid = l->lr_reg >= 0;
	read_gregs(regs, l->regs_mask, out);
	return 0;
}

/*
 * dyn_size is what the kernel could read from SP up (less than size near
 * the top of the stack); only that much of data is stack. Without user
 * registers there is no SP to walk it from, so nothing is copied.
 */
static int read_stack(struct cursor *c, bool user, struct cprof_copy *out)
{
	const unsigned char *data;
	uint64_t size, dyn;

	if (take_u64(c, &size))
		return -EINVAL;
	/* Size 0 (no user registers, or no room in the record) comes without dyn_size. */
	if (!size)
		return 0;
	if (take(c, size, &data) || take_u64(c, &dyn) || dyn > size)
		return -EINVAL;
	if (!user)
		return 0;
	out->stack_bytes = dyn < CPROF_COPY_STACK ? dyn : CPROF_COPY_STACK;
	memcpy(out->stack, data, out->stack_bytes);
	return 0;
}

static int parse_body(struct cursor *c, const struct perf_sample_layout *l, struct cprof_copy *out)
{
	bool user = true;

	if (read_fixed(c, l->sample_type, out))
		return -EINVAL;
	if ((l->sample_type & PERF_SAMPLE_CALLCHAIN) && read_callchain(c, out))
		return -EINVAL;
	if ((l->sample_type & PERF_SAMPLE_REGS_USER) && read_regs(c, l, out, &user))
		return -EINVAL;
	if (!user)
		out->flags |= CPROF_COPY_NO_USER;
	if ((l->sample_type & PERF_SAMPLE_STACK_USER) && read_stack(c, user, out))
		return -EINVAL;
	/* Bytes left over: the event has fields the layout does not know of. */
	return c->left ? -EINVAL : 0;
}

int perf_sample__parse(const void *rec, size_t size, const struct perf_sample_layout *l,
		       struct cprof_copy *out)
{
	struct perf_event_header hdr;
	struct cursor c;
	int err;

	reset(out);
	if (size < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	/* The header's size is the record's; a buffer shorter than that is truncated. */
	if (hdr.size < sizeof(hdr) || hdr.size > size || !layout_ok(l))
		return -EINVAL;
	if (hdr.type != PERF_RECORD_SAMPLE)
		return -ENOTSUP;
	c = (struct cursor){(const unsigned char *)rec + sizeof(hdr), hdr.size - sizeof(hdr)};
	err = parse_body(&c, l, out);
	if (err) {
		reset(out);
		return err;
	}
	out->magic = CPROF_COPY_MAGIC;
	out->flags |= CPROF_COPY_FROM_PERF;
	/* A sample has no space id; its space is the last one begun before its time. */
	out->space = out->time;
	return 0;
}
