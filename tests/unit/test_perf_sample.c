// SPDX-License-Identifier: MIT
/*
 * perf_sample: samples built byte by byte as the kernel lays them out
 * (include/uapi/linux/perf_event.h), checked field by field into a copy
 * poisoned beforehand, so a field the parser forgot shows; then cut, lying
 * and unsupported ones. Each is parsed from a heap copy of exactly its
 * size, so the ASan build catches any read past it. Last, the kernel's own
 * samples of this process, read from a live perf ring, and walked.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc_tables.h"
#include "sample/perf_sample.h"
#include "test.h"
#include "unwind/stack_walk.h"

#define BASE_TYPE                                                                             \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)
#define POISON 0x55

/* x86_64's registers: BP, SP, IP are bits 6, 7, 8, in the record in that order. */
static const struct perf_sample_layout x86 = {
	.sample_type = BASE_TYPE,
	.regs_mask = 1ULL << 6 | 1ULL << 7 | 1ULL << 8,
	.pc_reg = 8,
	.sp_reg = 7,
	.fp_reg = 6,
	.lr_reg = -1,
};

/* arm64's: X29, LR, SP, PC are bits 29 to 32. */
static const struct perf_sample_layout arm64 = {
	.sample_type = BASE_TYPE,
	.regs_mask = 0xfULL << 29,
	.pc_reg = 32,
	.sp_reg = 31,
	.fp_reg = 29,
	.lr_reg = 30,
};

#define PID    4242
#define TID    4243
#define TIME   123456789012ULL
#define PC     0x5555555551a4ULL
#define SP     0x7ffc9a3b1e40ULL
#define FP     0x7ffc9a3b1e70ULL
#define LR     0x555555555260ULL
#define KIP(i) (0xffffffff81000000ULL + 0x100 * (i))

struct rec {
	uint8_t b[24576];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t len)
{
	CHECK(r->n + len <= sizeof(r->b));
	memcpy(r->b + r->n, p, len);
	r->n += len;
}

static void put_u64(struct rec *r, uint64_t v)
{
	put(r, &v, sizeof(v));
}

static void start(struct rec *r, uint32_t type)
{
	struct perf_event_header h = {.type = type, .misc = PERF_RECORD_MISC_USER};

	r->n = 0;
	put(r, &h, sizeof(h));
}

/* The header's size, once the record is whole. */
static void finish(struct rec *r)
{
	uint16_t size = r->n;

	CHECK(r->n <= 65535);
	memcpy(r->b + 6, &size, sizeof(size));
}

static void put_tid_time(struct rec *r)
{
	put_u64(r, (uint64_t)TID << 32 | PID);
	put_u64(r, TIME);
}

static void put_chain(struct rec *r, const uint64_t *ips, uint64_t nr)
{
	put_u64(r, nr);
	if (nr)
		put(r, ips, nr * 8);
}

/* x86's registers in bit order: BP, SP, IP. */
static void put_x86_regs(struct rec *r)
{
	put_u64(r, PERF_SAMPLE_REGS_ABI_64);
	put_u64(r, FP);
	put_u64(r, SP);
	put_u64(r, PC);
}

/* Byte i of a stack copy. */
static uint8_t stack_byte(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static void put_stack(struct rec *r, uint64_t size, uint64_t dyn)
{
	size_t i;

	put_u64(r, size);
	if (!size)
		return;
	CHECK(r->n + size <= sizeof(r->b));
	for (i = 0; i < size; i++)
		r->b[r->n + i] = stack_byte(i);
	r->n += size;
	put_u64(r, dyn);
}

/* A sample taken in user mode, up to its registers: no kernel frames. */
static void user_head(struct rec *r)
{
	start(r, PERF_RECORD_SAMPLE);
	put_tid_time(r);
	put_chain(r, NULL, 0);
}

/* The same, whole: x86's registers, then a stack of size bytes of which dyn were read. */
static void user_record(struct rec *r, uint64_t size, uint64_t dyn)
{
	user_head(r);
	put_x86_regs(r);
	put_stack(r, size, dyn);
	finish(r);
}

/* The usual one: 64 bytes of stack of which 48 were read. */
static void user_sample(struct rec *r)
{
	user_record(r, 64, 48);
}

/* A sample taken in a system call: kernel frames after their marker; the task's user state. */
static void kernel_sample(struct rec *r)
{
	const uint64_t chain[] = {PERF_CONTEXT_KERNEL, KIP(0), KIP(1), KIP(2)};

	start(r, PERF_RECORD_SAMPLE);
	put_tid_time(r);
	put_chain(r, chain, 4);
	put_x86_regs(r);
	put_stack(r, 32, 32);
	finish(r);
}

/* A kernel thread's: no user registers, so a stack of size 0 and no dyn_size. */
static void kthread_sample(struct rec *r)
{
	const uint64_t chain[] = {PERF_CONTEXT_KERNEL, KIP(7), KIP(8)};

	start(r, PERF_RECORD_SAMPLE);
	put_tid_time(r);
	put_chain(r, chain, 3);
	put_u64(r, PERF_SAMPLE_REGS_ABI_NONE);
	put_u64(r, 0);
	finish(r);
}

static struct cprof_copy *new_copy(void)
{
	struct cprof_copy *c = malloc(sizeof(*c));

	CHECK(c);
	memset(c, POISON, sizeof(*c));
	return c;
}

/* Parses the first len bytes from a heap copy of exactly that size: ASan flags any read past it. */
static int parse_len(const struct rec *r, size_t len, const struct perf_sample_layout *l,
		     struct cprof_copy *out)
{
	void *copy = malloc(len ? len : 1);
	int err;

	CHECK(copy);
	memcpy(copy, r->b, len);
	err = perf_sample__parse(copy, len, l, out);
	free(copy);
	return err;
}

static int parse_tmp(const struct rec *r, size_t len, const struct perf_sample_layout *l)
{
	struct cprof_copy *c = new_copy();
	int err = parse_len(r, len, l, c);

	free(c);
	return err;
}

/* The fields every sample of put_tid_time sets the same way, all of them. */
static void check_common(const struct cprof_copy *c)
{
	size_t i;

	CHECK_U64(c->magic, ==, CPROF_COPY_MAGIC);
	CHECK_INT(c->set, ==, 0);
	CHECK_INT(c->pid, ==, PID);
	CHECK_INT(c->tid, ==, TID);
	for (i = 0; i < sizeof(c->comm) / sizeof(c->comm[0]); i++)
		CHECK_U64(c->comm[i], ==, 0);
	CHECK_U64(c->time, ==, TIME);
	CHECK_U64(c->space, ==, TIME);
	CHECK_INT(c->flags & CPROF_COPY_FROM_PERF, ==, CPROF_COPY_FROM_PERF);
}

static void check_stack(const struct cprof_copy *c, size_t bytes)
{
	size_t i;

	CHECK_INT(c->stack_bytes, ==, bytes);
	for (i = 0; i < bytes; i++)
		if (c->stack[i] != stack_byte(i))
			test_fail(__FILE__, __LINE__, "stack[%zu] = 0x%x", i, c->stack[i]);
	/* Only what was read is copied: the 16 KiB are not cleared at each sample. */
	if (bytes < CPROF_COPY_STACK)
		CHECK_INT(c->stack[bytes], ==, POISON);
}

/* No user registers, so no stack copy either. */
static void check_no_user(const struct cprof_copy *c)
{
	CHECK_U64(c->pc, ==, 0);
	CHECK_U64(c->sp, ==, 0);
	CHECK_U64(c->fp, ==, 0);
	CHECK_U64(c->lr, ==, 0);
	CHECK_INT(c->lr_valid, ==, 0);
	CHECK_INT(c->stack_bytes, ==, 0);
}

/* A failed parse leaves no copy and nothing that looks like one. */
static void check_reset(const struct cprof_copy *c)
{
	CHECK_U64(c->magic, ==, 0);
	CHECK_INT(c->pid, ==, 0);
	CHECK_U64(c->time, ==, 0);
	CHECK_INT(c->kern_bytes, ==, 0);
	CHECK_INT(c->flags, ==, 0);
	check_no_user(c);
}

/* The general registers' bits (AX DX CX BX SI DI BP SP in DWARF's order, R8-R15). */
#define X86_GREGS (0xffULL | 0xffULL << 16)
#define A64_GREGS 0xffffULL

TEST(perf_sample_layout_arch)
{
	struct perf_sample_layout l;

	memset(&l, POISON, sizeof(l));
	perf_sample__layout(&l);
	CHECK_U64(l.sample_type, ==, BASE_TYPE);
#if defined(__x86_64__)
	CHECK_U64(l.regs_mask, ==, x86.regs_mask | X86_GREGS);
	CHECK_INT(perf_sample__greg_bit(0), ==, 0);   /* rax: AX */
	CHECK_INT(perf_sample__greg_bit(1), ==, 3);   /* rdx: DX */
	CHECK_INT(perf_sample__greg_bit(3), ==, 1);   /* rbx: BX */
	CHECK_INT(perf_sample__greg_bit(10), ==, 18); /* r10 */
	CHECK_INT(l.pc_reg, ==, 8);
	CHECK_INT(l.sp_reg, ==, 7);
	CHECK_INT(l.fp_reg, ==, 6);
	CHECK_INT(l.lr_reg, ==, -1);
#elif defined(__aarch64__)
	CHECK_U64(l.regs_mask, ==, arm64.regs_mask | A64_GREGS);
	CHECK_INT(perf_sample__greg_bit(10), ==, 10);
	CHECK_INT(l.pc_reg, ==, 32);
	CHECK_INT(l.sp_reg, ==, 31);
	CHECK_INT(l.fp_reg, ==, 29);
	CHECK_INT(l.lr_reg, ==, 30);
#endif
}

TEST(perf_sample_user_mode)
{
	struct cprof_copy *c = new_copy();
	struct rec r;

	user_sample(&r);
	CHECK_INT(r.n, ==, 8 + 16 + 8 + 32 + 8 + 64 + 8);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_common(c);
	CHECK_U64(c->pc, ==, PC);
	CHECK_U64(c->sp, ==, SP);
	CHECK_U64(c->fp, ==, FP);
	CHECK_U64(c->lr, ==, 0);
	CHECK_INT(c->lr_valid, ==, 0);
	CHECK_INT(c->kern_bytes, ==, 0);
	/* dyn_size, not size: the rest of data is not stack. */
	check_stack(c, 48);
	free(c);
}

TEST(perf_sample_kernel_mode)
{
	struct cprof_copy *c = new_copy();
	struct rec r;

	kernel_sample(&r);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_common(c);
	CHECK_INT(c->kern_bytes, ==, 3 * 8);
	CHECK_U64(c->kern[0], ==, KIP(0));
	CHECK_U64(c->kern[1], ==, KIP(1));
	CHECK_U64(c->kern[2], ==, KIP(2));
	CHECK_U64(c->pc, ==, PC);
	CHECK_U64(c->sp, ==, SP);
	check_stack(c, 32);
	free(c);
}

TEST(perf_sample_kernel_thread)
{
	struct cprof_copy *c = new_copy();
	struct rec r;

	kthread_sample(&r);
	CHECK_INT(r.n, ==, 8 + 16 + 8 + 24 + 8 + 8);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_common(c);
	CHECK_INT(c->kern_bytes, ==, 16);
	CHECK_U64(c->kern[0], ==, KIP(7));
	CHECK_U64(c->kern[1], ==, KIP(8));
	check_no_user(c);
	/* Said, so that user space walks nothing rather than pc 0. */
	CHECK_INT(c->flags, ==, CPROF_COPY_FROM_PERF | CPROF_COPY_NO_USER);
	/* The same on arm64, whose LR would otherwise be valid. */
	memset(c, POISON, sizeof(*c));
	CHECK_INT(parse_len(&r, r.n, &arm64, c), ==, 0);
	CHECK_U64(c->lr, ==, 0);
	CHECK_INT(c->lr_valid, ==, 0);
	CHECK_INT(c->stack_bytes, ==, 0);
	/* Stack bytes with no registers (no kernel writes that): no SP to walk them from. */
	user_head(&r);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	put_stack(&r, 16, 16);
	finish(&r);
	memset(c, POISON, sizeof(*c));
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	CHECK_U64(c->sp, ==, 0);
	CHECK_INT(c->stack_bytes, ==, 0);
	free(c);
}

TEST(perf_sample_arm64_regs)
{
	struct cprof_copy *c = new_copy();
	struct rec r;

	user_head(&r);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	put_u64(&r, FP); /* x29 */
	put_u64(&r, LR);
	put_u64(&r, SP);
	put_u64(&r, PC);
	put_stack(&r, 16, 16);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &arm64, c), ==, 0);
	check_common(c);
	CHECK_U64(c->pc, ==, PC);
	CHECK_U64(c->sp, ==, SP);
	CHECK_U64(c->fp, ==, FP);
	CHECK_U64(c->lr, ==, LR);
	CHECK_INT(c->lr_valid, ==, 1);
	check_stack(c, 16);
	/* The same record is one register short for x86's three, and has one left over. */
	CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	free(c);
}

/*
 * The general registers a CFA rule may name, by DWARF number: x86's AX (bit
 * 0), DX (3) and R10 (18) sampled with BP, SP, IP, in bit order; those not
 * sampled are not known, and a sample with them all known by the
 * architecture's own layout.
 */
TEST(perf_sample_general_registers)
{
	struct perf_sample_layout l = x86;
	struct cprof_copy *c = new_copy();
	struct rec r;

	l.regs_mask |= 1ULL << 0 | 1ULL << 3 | 1ULL << 18;
	user_head(&r);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	put_u64(&r, 0xaa);   /* AX */
	put_u64(&r, 0xdd);   /* DX */
	put_u64(&r, FP);     /* BP */
	put_u64(&r, SP);     /* SP */
	put_u64(&r, PC);     /* IP */
	put_u64(&r, 0x1010); /* R10 */
	put_stack(&r, 16, 16);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &l, c), ==, 0);
	CHECK_U64(c->pc, ==, PC);
	CHECK_U64(c->sp, ==, SP);
	CHECK_U64(c->gregs[0], ==, 0xaa);    /* rax */
	CHECK_U64(c->gregs[1], ==, 0xdd);    /* rdx */
	CHECK_U64(c->gregs[6], ==, FP);	     /* rbp */
	CHECK_U64(c->gregs[7], ==, SP);	     /* rsp */
	CHECK_U64(c->gregs[10], ==, 0x1010); /* r10 */
	CHECK_U64(c->gregs[2], ==, 0);	     /* rcx: not sampled */
	CHECK_INT(c->gregs_valid, ==, 1u << 0 | 1u << 1 | 1u << 6 | 1u << 7 | 1u << 10);
	/* The old layout knows rbp and rsp alone. */
	user_sample(&r);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	CHECK_INT(c->gregs_valid, ==, 1u << 6 | 1u << 7);
	free(c);
}

/* Markers go; only the frames after PERF_CONTEXT_KERNEL, up to the next marker, stay. */
TEST(perf_sample_callchain_contexts)
{
	const uint64_t chain[] = {
		KIP(90), /* before any marker: no context, not taken */
		PERF_CONTEXT_GUEST_KERNEL,
		KIP(91),
		PERF_CONTEXT_KERNEL,
		KIP(0),
		KIP(1),
		PERF_CONTEXT_USER,
		0x401000,
		0x401100,
		PERF_CONTEXT_HV,
		KIP(92),
		PERF_CONTEXT_KERNEL,
		KIP(2),
		PERF_CONTEXT_MAX, /* the lowest marker */
		KIP(93),
		(uint64_t)-1,
	};
	size_t nr = sizeof(chain) / sizeof(chain[0]);
	struct cprof_copy *c = new_copy();
	struct rec r;

	start(&r, PERF_RECORD_SAMPLE);
	put_tid_time(&r);
	put_chain(&r, chain, nr);
	put_x86_regs(&r);
	put_stack(&r, 8, 8);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_common(c);
	CHECK_INT(c->kern_bytes, ==, 3 * 8);
	CHECK_U64(c->kern[0], ==, KIP(0));
	CHECK_U64(c->kern[1], ==, KIP(1));
	CHECK_U64(c->kern[2], ==, KIP(2));
	CHECK_U64(c->kern[3], ==, 0x5555555555555555ULL); /* untouched past kern_bytes */
	/* The stack and registers after a long chain are still where they should be. */
	CHECK_U64(c->pc, ==, PC);
	check_stack(c, 8);
	free(c);
}

TEST(perf_sample_callchain_depth)
{
	uint64_t chain[1 + 200];
	struct cprof_copy *c = new_copy();
	struct rec r;
	size_t i;

	chain[0] = PERF_CONTEXT_KERNEL;
	for (i = 1; i < 201; i++)
		chain[i] = KIP(i);
	start(&r, PERF_RECORD_SAMPLE);
	put_tid_time(&r);
	put_chain(&r, chain, 201);
	put_x86_regs(&r);
	put_stack(&r, 8, 8);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	CHECK_INT(c->kern_bytes, ==, CPROF_MAX_STACK_DEPTH * 8);
	/* The leaf end is kept, as bpf_get_stack keeps it. */
	CHECK_U64(c->kern[0], ==, KIP(1));
	CHECK_U64(c->kern[CPROF_MAX_STACK_DEPTH - 1], ==, KIP(CPROF_MAX_STACK_DEPTH));
	CHECK_U64(c->pc, ==, PC);
	check_stack(c, 8);
	free(c);
}

TEST(perf_sample_stack_capped)
{
	const size_t big = CPROF_COPY_STACK + 512;
	struct cprof_copy *c = new_copy();
	struct rec r;

	user_record(&r, big, big);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_common(c);
	check_stack(c, CPROF_COPY_STACK);
	/* Between the cap and size, dyn_size rules. */
	user_record(&r, big, CPROF_COPY_STACK - 8);
	memset(c, POISON, sizeof(*c));
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_stack(c, CPROF_COPY_STACK - 8);
	/* Nothing readable at SP: a stack copy of 0 bytes. */
	user_record(&r, 64, 0);
	memset(c, POISON, sizeof(*c));
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_stack(c, 0);
	CHECK_U64(c->sp, ==, SP);
	free(c);
}

/* Every valid record, cut anywhere before its end, is refused without a read past the cut. */
TEST(perf_sample_truncated)
{
	void (*makers[])(struct rec *) = {user_sample, kernel_sample, kthread_sample};
	struct cprof_copy *c = new_copy();
	struct rec r;
	uint16_t size;
	size_t i, len;

	for (i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
		makers[i](&r);
		CHECK_INT(parse_tmp(&r, r.n, &x86), ==, 0);
		for (len = 0; len < r.n; len++) {
			/* The buffer ends before the record its header announces. */
			CHECK_INT(parse_len(&r, len, &x86, c), ==, -EINVAL);
			check_reset(c);
		}
		for (len = 8; len < r.n; len++) {
			/* The header agrees with the cut: a record too short for its fields. */
			size = len;
			memcpy(r.b + 6, &size, sizeof(size));
			CHECK_INT(parse_len(&r, len, &x86, c), ==, -EINVAL);
			check_reset(c);
		}
	}
	free(c);
}

TEST(perf_sample_size_lies)
{
	struct cprof_copy *c = new_copy();
	struct rec r;
	uint16_t size;

	user_sample(&r);
	/* The header claims more than the buffer holds. */
	size = r.n + 8;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	/* Less than a header. */
	size = 7;
	memcpy(r.b + 6, &size, sizeof(size));
	CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	/* A buffer longer than the record: the header's size rules. */
	user_sample(&r);
	CHECK_INT(parse_tmp(&r, r.n + 64, &x86), ==, 0);
	/* Bytes after the last field: the event has fields the layout does not know of. */
	user_head(&r);
	put_x86_regs(&r);
	put_stack(&r, 8, 8);
	put_u64(&r, 0);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, -EINVAL);
	check_reset(c);
	free(c);
}

TEST(perf_sample_dyn_size_lies)
{
	struct cprof_copy *c = new_copy();
	struct rec r;

	user_record(&r, 64, 72);
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, -EINVAL);
	check_reset(c);
	/* A stack size past the record, and one that would wrap a pointer. */
	user_head(&r);
	put_x86_regs(&r);
	put_u64(&r, 4096);
	put_u64(&r, 8);
	finish(&r);
	CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	memcpy(r.b + r.n - 16, &(uint64_t){(uint64_t)-8}, 8);
	CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	/* A size not a multiple of 8 is the kernel's promise broken, not a crash. */
	user_record(&r, 13, 13);
	memset(c, POISON, sizeof(*c));
	CHECK_INT(parse_len(&r, r.n, &x86, c), ==, 0);
	check_stack(c, 13);
	free(c);
}

TEST(perf_sample_callchain_lies)
{
	const uint64_t huge[] = {1ULL << 61, (1ULL << 61) + 1, (uint64_t)-1, 4};
	struct rec r;
	size_t i;

	/* nr * 8 wraps to 0 or a small number; or nr is just past the record. */
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		start(&r, PERF_RECORD_SAMPLE);
		put_tid_time(&r);
		put_u64(&r, huge[i]);
		put_u64(&r, PERF_CONTEXT_KERNEL);
		put_u64(&r, KIP(0));
		put_u64(&r, KIP(1));
		finish(&r);
		CHECK_INT(parse_tmp(&r, r.n, &x86), ==, -EINVAL);
	}
}

TEST(perf_sample_other_types)
{
	static const uint32_t types[] = {PERF_RECORD_LOST,
					 PERF_RECORD_MMAP2,
					 PERF_RECORD_THROTTLE,
					 PERF_RECORD_UNTHROTTLE,
					 0,
					 999};
	struct cprof_copy *c = new_copy();
	struct rec r;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		start(&r, types[i]);
		put_u64(&r, 1);
		put_u64(&r, 2);
		finish(&r);
		CHECK_INT(parse_len(&r, r.n, &x86, c), ==, -ENOTSUP);
		check_reset(c);
		/* Still checked for a sane size first. */
		CHECK_INT(parse_tmp(&r, r.n - 1, &x86), ==, -EINVAL);
	}
	free(c);
}

/* Fields whose size the layout cannot tell (READ needs read_format, RAW its size...), or unknown.
 */
TEST(perf_sample_unsupported_fields)
{
	const uint64_t supported = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
				   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
				   PERF_SAMPLE_STACK_USER;
	struct perf_sample_layout l = x86;
	struct rec r;
	int bit;

	user_sample(&r);
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, 0);
	for (bit = 0; bit < 64; bit++) {
		if (supported & 1ULL << bit)
			continue;
		l.sample_type = x86.sample_type | 1ULL << bit;
		if (parse_tmp(&r, r.n, &l) != -EINVAL)
			test_fail(__FILE__, __LINE__, "sample_type bit %d accepted", bit);
	}
	l.sample_type = x86.sample_type | PERF_SAMPLE_READ;
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, -EINVAL);
	/* Registers the layout names but does not sample. */
	l = x86;
	l.pc_reg = 9;
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, -EINVAL);
	l = x86;
	l.lr_reg = 64;
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, -EINVAL);
	l = x86;
	l.sp_reg = -2;
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, -EINVAL);
	/* A layout with no such register is fine. */
	l = x86;
	l.fp_reg = -1;
	CHECK_INT(parse_tmp(&r, r.n, &l), ==, 0);
}

static const uint64_t fixed_fields[] = {
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,	  PERF_SAMPLE_TID,
	PERF_SAMPLE_TIME,	PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
	PERF_SAMPLE_STREAM_ID,	PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD};
#define NFIXED (sizeof(fixed_fields) / sizeof(fixed_fields[0]))

/*
 * Every combination of the fixed fields before the callchain, each filled
 * with a value of its own: TID and TIME are found where they are, and the
 * callchain, registers and stack after them.
 */
TEST(perf_sample_extra_fields)
{
	const uint64_t chain[] = {PERF_CONTEXT_KERNEL, KIP(5)};
	struct perf_sample_layout l = x86;
	struct cprof_copy *c = new_copy();
	unsigned int set;
	struct rec r;
	size_t i;

	for (set = 0; set < 1U << NFIXED; set++) {
		l.sample_type = BASE_TYPE & ~(PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
		start(&r, PERF_RECORD_SAMPLE);
		for (i = 0; i < NFIXED; i++) {
			if (!(set & 1U << i))
				continue;
			l.sample_type |= fixed_fields[i];
			if (fixed_fields[i] == PERF_SAMPLE_TID)
				put_u64(&r, (uint64_t)TID << 32 | PID);
			else if (fixed_fields[i] == PERF_SAMPLE_TIME)
				put_u64(&r, TIME);
			else
				put_u64(&r, 0xf1e1d000 + i);
		}
		put_chain(&r, chain, 2);
		put_x86_regs(&r);
		put_stack(&r, 24, 24);
		finish(&r);
		memset(c, POISON, sizeof(*c));
		if (parse_len(&r, r.n, &l, c))
			test_fail(__FILE__, __LINE__, "sample_type 0x%llx refused",
				  (unsigned long long)l.sample_type);
		CHECK_INT(c->pid, ==, l.sample_type & PERF_SAMPLE_TID ? PID : 0);
		CHECK_INT(c->tid, ==, l.sample_type & PERF_SAMPLE_TID ? TID : 0);
		CHECK_U64(c->time, ==, l.sample_type & PERF_SAMPLE_TIME ? TIME : 0);
		CHECK_U64(c->space, ==, c->time);
		CHECK_INT(c->kern_bytes, ==, 8);
		CHECK_U64(c->kern[0], ==, KIP(5));
		CHECK_U64(c->pc, ==, PC);
		CHECK_U64(c->sp, ==, SP);
		CHECK_U64(c->fp, ==, FP);
		check_stack(c, 24);
	}
	free(c);
}

/* Without CALLCHAIN, REGS_USER or STACK_USER, what they would give is empty. */
TEST(perf_sample_minimal_type)
{
	struct perf_sample_layout l = x86;
	struct cprof_copy *c = new_copy();
	struct rec r;

	l.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	start(&r, PERF_RECORD_SAMPLE);
	put_tid_time(&r);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &l, c), ==, 0);
	check_common(c);
	CHECK_INT(c->kern_bytes, ==, 0);
	check_no_user(c);
	/* A header alone, for no fields at all. */
	l.sample_type = 0;
	start(&r, PERF_RECORD_SAMPLE);
	finish(&r);
	CHECK_INT(parse_len(&r, r.n, &l, c), ==, 0);
	CHECK_U64(c->magic, ==, CPROF_COPY_MAGIC);
	CHECK_INT(c->pid, ==, 0);
	free(c);
}

/*
 * Records captured from a 6.18 x86_64 kernel's ring (the fuzzer's seeds):
 * a program's loop, its read() of /dev/zero, and a kworker.
 */
static struct cprof_copy *parse_corpus(const char *name)
{
	struct cprof_copy *c = new_copy();
	char path[512];
	uint8_t *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/corpus/perf_sample/%s", test_fixtures_dir(), name);
	buf = test_read_file(path, &len);
	CHECK_INT(perf_sample__parse(buf, len, &x86, c), ==, 0);
	free(buf);
	CHECK_U64(c->magic, ==, CPROF_COPY_MAGIC);
	CHECK_U64(c->time, >, 0);
	return c;
}

/* The return address in the frame record at fp, which the stack copy must hold. */
static uint64_t frame_return(const struct cprof_copy *c)
{
	uint64_t ret;

	CHECK_U64(c->fp, >, c->sp);
	CHECK_U64(c->fp - c->sp + 16, <=, c->stack_bytes);
	memcpy(&ret, c->stack + (c->fp - c->sp) + 8, sizeof(ret));
	return ret;
}

TEST(perf_sample_real_kernel_records)
{
	struct cprof_copy *c;
	uint64_t ret, pc;
	int pid;

	/* Taken in user mode: registers, 8 KiB of stack, no kernel frames. */
	c = parse_corpus("user_spin");
	pid = c->pid;
	CHECK_INT(c->tid, ==, pid);
	CHECK_INT(c->kern_bytes, ==, 0);
	CHECK_U64(c->pc, <, 0x800000000000ULL);
	CHECK_U64(c->sp, >, c->pc);
	CHECK_INT(c->stack_bytes, ==, 8192);
	/* The loop's caller, in the same program. */
	pc = c->pc;
	ret = frame_return(c);
	CHECK_U64(ret, >, pc - 0x100000);
	CHECK_U64(ret, <, pc + 0x100000);
	free(c);
	/* In read(): kernel frames, and the task's user state in libc, called from the same
	 * function. */
	c = parse_corpus("kernel_syscall");
	CHECK_INT(c->pid, ==, pid);
	CHECK_INT(c->kern_bytes, ==, 5 * 8);
	CHECK_U64(c->kern[0], >=, 0xffff800000000000ULL);
	CHECK_U64(c->kern[4], >=, 0xffff800000000000ULL);
	CHECK_U64(c->pc, <, 0x800000000000ULL);
	CHECK_INT(c->stack_bytes, ==, 8192);
	CHECK_U64(frame_return(c), ==, ret);
	free(c);
	/* A kernel thread: no user registers, no stack. */
	c = parse_corpus("kernel_thread");
	CHECK_INT(c->pid, >, 0);
	CHECK_INT(c->kern_bytes, ==, 9 * 8);
	CHECK_U64(c->kern[8], >=, 0xffff800000000000ULL);
	check_no_user(c);
	free(c);
}

/* ---- the kernel's own samples of this thread ---- */

#define RING_PAGES 8

struct ring {
	int fd;
	void *base;
	size_t map_len;
	struct perf_event_mmap_page *meta;
	const uint8_t *data;
	uint64_t size;
};

/* What the spinning function leaves for the samples to be checked against. */
static volatile uint64_t spin_sink;
static uintptr_t spin_frame, spin_ret;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Named for the symbol lookup; a compiler's clone would be perf_sample_spin.something. */
static __attribute__((noinline)) void perf_sample_spin(uint64_t until)
{
	int i;

	spin_frame = (uintptr_t)__builtin_frame_address(0);
	spin_ret = (uintptr_t)__builtin_return_address(0);
	while (now_ns() < until)
		for (i = 0; i < 20000; i++)
			spin_sink += i;
}

static bool named(struct proc_tables *p, uint64_t ip, bool leaf, const char *name)
{
	return !strncmp(proc_tables__name(p, ip, leaf), name, strlen(name));
}

static int open_ring(struct ring *r, const struct perf_sample_layout *l)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.size = sizeof(attr),
		.sample_period = 1000000, /* 1 ms of this thread's CPU time */
		.sample_type = l->sample_type,
		.sample_regs_user = l->regs_mask,
		.sample_stack_user = 8192,
		.exclude_callchain_user = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.disabled = 1,
	};
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	r->fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->map_len = (1 + RING_PAGES) * page;
	r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	CHECK(r->base != MAP_FAILED);
	r->meta = r->base;
	/* data_offset and data_size appeared in Linux 4.1; before, the data followed the page. */
	r->data = (const uint8_t *)r->base + (r->meta->data_offset ? r->meta->data_offset : page);
	r->size = r->meta->data_size ? r->meta->data_size : RING_PAGES * page;
	return 0;
}

/* Copies len bytes at ring position pos, across the end of the ring if the record wraps. */
static void ring_copy(const struct ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & (r->size - 1), first = len < r->size - off ? len : r->size - off;

	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

struct live {
	const struct perf_sample_layout *l;
	struct cprof_copy *c;
	uint8_t rec[65536];
	struct proc_tables tables;
	struct stack_walk walk;
	struct walk_result res;
	uint64_t t0;
	int samples, in_spin, walked, other;
};

/*
 * A sample in perf_sample_spin, past its prologue: the frame record at its
 * frame pointer, in the copy, holds its return address; and the copy is
 * enough to walk back to its caller.
 */
static void check_spin(struct live *lv, const struct cprof_copy *c)
{
	struct stack_snapshot snap = {c->pc, c->sp, c->fp, c->lr, c->stack, c->stack_bytes};
	uint64_t off = spin_frame - c->sp, word;

	CHECK_U64(c->sp, <=, spin_frame);
	CHECK_U64(off, <, 4096);
	CHECK_U64(c->stack_bytes, >=, off + 16);
	memcpy(&word, c->stack + off + 8, sizeof(word));
	CHECK_U64(word, ==, spin_ret);
	lv->in_spin++;
	stack_walk__run(&lv->walk, &snap, &lv->res);
	if (lv->res.n >= 2 && named(&lv->tables, lv->res.ips[1], false, "perf_sample_live_self"))
		lv->walked++;
}

/* Every sample the kernel wrote parses, is this thread's, and falls in the run's time. */
static void check_live(struct live *lv, size_t size)
{
	struct cprof_copy *c = lv->c;
	int err = perf_sample__parse(lv->rec, size, lv->l, c);

	if (err == -ENOTSUP) {
		lv->other++; /* LOST, THROTTLE */
		return;
	}
	CHECK_INT(err, ==, 0);
	lv->samples++;
	CHECK_INT(c->pid, ==, getpid());
	CHECK_INT(c->tid, ==, syscall(SYS_gettid));
	CHECK_U64(c->time, >=, lv->t0);
	CHECK_U64(c->time, <=, now_ns());
	CHECK_INT(c->kern_bytes % 8, ==, 0);
	/* Functions called from the same place (now_ns, drain) have the same frame address. */
	if (c->fp == spin_frame && named(&lv->tables, c->pc, true, "perf_sample_spin"))
		check_spin(lv, c);
}

static void drain(struct ring *r, struct live *lv)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	struct perf_event_header hdr;

	while (head - tail >= sizeof(hdr)) {
		ring_copy(r, tail, &hdr, sizeof(hdr));
		CHECK_INT(hdr.size, >=, sizeof(hdr));
		CHECK_U64(hdr.size, <=, head - tail);
		ring_copy(r, tail, lv->rec, hdr.size);
		check_live(lv, hdr.size);
		tail += hdr.size;
	}
	/* The records are read before the kernel may write over them. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

TEST(perf_sample_live_self)
{
	struct perf_sample_layout l;
	struct live *lv = calloc(1, sizeof(*lv));
	struct ring r;
	int err, i;

	CHECK(lv);
	perf_sample__layout(&l);
	err = open_ring(&r, &l);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENODEV)
		SKIP("perf_event_open(task-clock, this thread): %s", strerror(-err));
	CHECK_INT(err, ==, 0);
	lv->l = &l;
	lv->c = new_copy();
	proc_tables__load(&lv->tables, getpid());
	lv->walk = (struct stack_walk){unwind_rules__all(lv->tables.rules),
				       unwind_rules__count(lv->tables.rules), ~0ULL,
				       proc_tables__find, &lv->tables};
	lv->t0 = now_ns();
	CHECK_INT(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), ==, 0);
	/* 8 pages hold three samples of 8 KiB of stack: read them every 2 ms, for 50 ms. */
	for (i = 0; i < 25; i++) {
		perf_sample_spin(now_ns() + 2000000);
		drain(&r, lv);
	}
	CHECK_INT(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), ==, 0);
	drain(&r, lv);
	printf("# %d samples, %d in perf_sample_spin (%d walked to its caller), %d other records\n",
	       lv->samples, lv->in_spin, lv->walked, lv->other);
	CHECK_INT(lv->samples, >, 0);
	CHECK_INT(lv->in_spin, >, 0);
	CHECK_INT(lv->walked, >, 0);
	munmap(r.base, r.map_len);
	close(r.fd);
	proc_tables__free(&lv->tables);
	free(lv->c);
	free(lv);
}
