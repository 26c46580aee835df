/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * One step of the user-stack unwinder: from a frame's registers and the
 * compact rule for its PC (bpf/unwind_abi.h), the caller's registers. The
 * same code runs in the BPF program and in user space (the copy path and
 * the tests), so both walk a stack exactly alike.
 *
 * The includer defines, before including:
 *   CPROF_UNWIND_READ(mem, dst, addr)  reads a __u64 of user memory at
 *                                      addr into *dst; nonzero on failure.
 *                                      mem is what the caller passed the
 *                                      step (user space: the copied stack)
 *   CPROF_UNWIND_GREG(mem, i)          the sampled frame's general register
 *                                      i (a DWARF number below CPROF_GREGS)
 * and one of __TARGET_ARCH_x86 / __TARGET_ARCH_arm64 (BPF) or builds for
 * x86_64 / aarch64 (user space).
 */
#ifndef CPROF_BPF_UNWIND_STEP_H
#define CPROF_BPF_UNWIND_STEP_H

#include "unwind_abi.h"

#if defined(__TARGET_ARCH_arm64) || (!defined(__TARGET_ARCH_x86) && defined(__aarch64__))
#define CPROF_UNWIND_ARM64 1
#else
#define CPROF_UNWIND_ARM64 0
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* What a step found. */
enum cprof_step {
	CPROF_STEP_CALLER = 0, /* regs now hold the caller's */
	CPROF_STEP_ROOT,       /* this frame is the outermost: the walk is complete */
	CPROF_STEP_STOP,       /* the walk cannot go on: *stop says why */
};

/*
 * The kernel's signal frame, where SP points when the trampoline runs:
 * x86_64 struct ucontext (the return address slot was popped), whose
 * sigcontext starts at 40; AArch64 struct rt_sigframe: 128 bytes of
 * siginfo, then the ucontext whose sigcontext (16-aligned) starts at 176,
 * fault_address first, then regs[31], sp, pc.
 */
#if CPROF_UNWIND_ARM64
#define CPROF_SIGFRAME_FP 544 /* regs[29] */
#define CPROF_SIGFRAME_LR 552 /* regs[30] */
#define CPROF_SIGFRAME_SP 560
#define CPROF_SIGFRAME_PC 568
#else
#define CPROF_SIGFRAME_FP 120 /* rbp */
#define CPROF_SIGFRAME_SP 160
#define CPROF_SIGFRAME_PC 168
#endif

static __always_inline int cprof_unwind_signal(const void *mem, struct cprof_unwind_regs *r)
{
	__u64 sp = r->sp, v;

	if (CPROF_UNWIND_READ(mem, &v, sp + CPROF_SIGFRAME_PC))
		return CPROF_STOP_READ;
	r->pc = v;
	r->fp_at = 0;
	if (CPROF_UNWIND_READ(mem, &v, sp + CPROF_SIGFRAME_SP))
		return CPROF_STOP_READ;
	r->sp = v;
	if (CPROF_UNWIND_READ(mem, &v, sp + CPROF_SIGFRAME_FP))
		return CPROF_STOP_READ;
	r->fp = v;
	r->fp_valid = 1;
	r->lr_valid = 0;
	r->gregs_live = 0;
#if CPROF_UNWIND_ARM64
	if (CPROF_UNWIND_READ(mem, &v, sp + CPROF_SIGFRAME_LR))
		return CPROF_STOP_READ;
	r->lr = v;
	r->lr_valid = 1;
#endif
	r->exact_pc = 1;
	return 0;
}

/*
 * The frame pointer's value, read now if a step left it where its frame
 * saved it (fp_at): two thirds of the frames of code built without frame
 * pointers save it, and almost none of their callers use it, so the read
 * waits until one does. 0 or a stop reason.
 */
static __always_inline int cprof_unwind_fp_load(const void *mem, struct cprof_unwind_regs *r)
{
	__u64 v;

	if (!r->fp_at)
		return 0;
	if (CPROF_UNWIND_READ(mem, &v, r->fp_at))
		return CPROF_STOP_READ;
	r->fp = v;
	r->fp_at = 0;
	return 0;
}

/*
 * The value of the rule's CFA register, where this frame still has the
 * sampled frame's (gregs_live): above the leaf, only where no frame between
 * had a rule for it. 0 or a stop reason.
 */
static __always_inline int cprof_unwind_greg(const void *mem, const struct cprof_unwind_rule *rule,
					     const struct cprof_unwind_regs *r, __u64 *v)
{
	__u32 i = rule->cfa_reg & (CPROF_GREGS - 1);

	if (rule->cfa_reg >= CPROF_GREGS || !(r->gregs_live >> i & 1))
		return CPROF_STOP_CFA_REG;
	*v = CPROF_UNWIND_GREG(mem, i);
	return 0;
}

/* The CFA by the rule; 0 or a stop reason. */
static __always_inline int cprof_unwind_cfa(const void *mem, const struct cprof_unwind_rule *rule,
					    struct cprof_unwind_regs *r, __u64 *cfa)
{
	__u64 v;

	switch (rule->cfa_kind) {
	case CPROF_CFA_SP:
		*cfa = r->sp + (__s64)rule->cfa_off;
		return 0;
	case CPROF_CFA_FP:
		if (!r->fp_valid)
			return CPROF_STOP_FP_LOST;
		if (cprof_unwind_fp_load(mem, r))
			return CPROF_STOP_READ;
		*cfa = r->fp + (__s64)rule->cfa_off;
		return 0;
	case CPROF_CFA_SP_DEREF:
		if (CPROF_UNWIND_READ(mem, &v, r->sp + (__s64)rule->cfa_off))
			return CPROF_STOP_READ;
		*cfa = v + (__s64)rule->cfa_add;
		return 0;
	case CPROF_CFA_FP_DEREF:
		if (!r->fp_valid)
			return CPROF_STOP_FP_LOST;
		if (cprof_unwind_fp_load(mem, r) ||
		    CPROF_UNWIND_READ(mem, &v, r->fp + (__s64)rule->cfa_off))
			return CPROF_STOP_READ;
		*cfa = v + (__s64)rule->cfa_add;
		return 0;
	case CPROF_CFA_PLT:
		*cfa = r->sp + (__s64)rule->cfa_off +
		       ((r->pc & 15) >= (__u64)rule->cfa_add ? 8 : 0);
		return 0;
	case CPROF_CFA_REG:
		if (cprof_unwind_greg(mem, rule, r, &v))
			return CPROF_STOP_CFA_REG;
		*cfa = v + (__s64)rule->cfa_off;
		return 0;
	case CPROF_CFA_REG_DEREF:
		if (cprof_unwind_greg(mem, rule, r, &v))
			return CPROF_STOP_CFA_REG;
		if (CPROF_UNWIND_READ(mem, &v, v + (__s64)rule->cfa_off))
			return CPROF_STOP_READ;
		*cfa = v + (__s64)rule->cfa_add;
		return 0;
	}
	return CPROF_STOP_UNSUPPORTED;
}

/*
 * Where the caller's frame pointer is, found before SP moves; read only when
 * a frame needs it (cprof_unwind_fp_load). 0 or a stop reason.
 */
static __always_inline int cprof_unwind_fp(const void *mem, const struct cprof_unwind_rule *rule,
					   struct cprof_unwind_regs *r, __u64 cfa)
{
	switch (rule->fp_kind) {
	case CPROF_FP_SAME:
		return 0;
	case CPROF_FP_AT_CFA:
		/*
		 * A slot below SP was popped: the epilogue has put the value
		 * back (clang's CFI says "saved" up to the ret), and the copy
		 * of a stack starts at SP.
		 */
		if (cfa + (__s64)rule->fp_off < r->sp)
			return 0;
		r->fp_at = cfa + (__s64)rule->fp_off;
		r->fp_valid = 1;
		return 0;
	case CPROF_FP_AT_FP:
		if (!r->fp_valid)
			return CPROF_STOP_FP_LOST;
		if (cprof_unwind_fp_load(mem, r))
			return CPROF_STOP_READ;
		r->fp_at = r->fp + (__s64)rule->fp_off;
		return 0;
	}
	r->fp_valid = 0;
	r->fp_at = 0;
	return 0;
}

/*
 * One step by a CFI rule. ra_mask clears what is not address in a return
 * address (AArch64 pointer authentication codes); all ones elsewhere.
 */
static __always_inline int cprof_unwind_step(const void *mem, const struct cprof_unwind_rule *rule,
					     struct cprof_unwind_regs *r, __u64 ra_mask,
					     __u32 *stop)
{
	__u64 cfa = 0, ra;
	int err;

	if (rule->cfa_kind == CPROF_CFA_END)
		return CPROF_STEP_ROOT;
	if (rule->cfa_kind == CPROF_CFA_STOP) {
		*stop = rule->stop;
		return CPROF_STEP_STOP;
	}
	if (rule->cfa_kind == CPROF_CFA_SIGNAL) {
		*stop = cprof_unwind_signal(mem, r);
		return *stop ? CPROF_STEP_STOP : CPROF_STEP_CALLER;
	}
	err = cprof_unwind_cfa(mem, rule, r, &cfa);
	if (!err && rule->ra_kind == CPROF_RA_IN_LR && !r->lr_valid)
		err = CPROF_STOP_LR;
	if (!err && rule->ra_kind == CPROF_RA_IN_LR)
		ra = r->lr;
	else if (!err && CPROF_UNWIND_READ(mem, &ra, cfa + (__s64)rule->ra_off))
		err = CPROF_STOP_READ;
	if (!err)
		err = cprof_unwind_fp(mem, rule, r, cfa);
	/*
	 * A zero return address ends the stack, as libgcc's unwinder takes it
	 * (Go's goroutines start under runtime.goexit with one above it).
	 */
	if (!err && !(ra & ra_mask))
		return CPROF_STEP_ROOT;
	/* The stack grows down: a caller's frame is never below its callee's. */
	if (!err && cfa < r->sp)
		err = CPROF_STOP_BAD_FRAME;
	if (err) {
		*stop = err;
		return CPROF_STEP_STOP;
	}
	r->pc = ra & ra_mask;
	r->sp = cfa;
	r->lr_valid = 0;
	r->exact_pc = 0;
	r->gregs_live &= rule->keep_regs;
	return CPROF_STEP_CALLER;
}

/*
 * Whether pc is at a signal trampoline that has no CFI (musl's __restore_rt,
 * a static binary's): its code is exactly the rt_sigreturn system call,
 * as libgcc's fallback recognizes it. x86_64: mov $15,%rax; syscall.
 * AArch64: mov x8,#139; svc #0.
 */
static __always_inline int cprof_unwind_is_sigreturn(const void *mem, __u64 pc)
{
	__u64 code;

	if (CPROF_UNWIND_READ(mem, &code, pc))
		return 0;
#if CPROF_UNWIND_ARM64
	return code == 0xd4000001d2801168ull;
#else
	if (code != 0x0f0000000fc0c748ull || CPROF_UNWIND_READ(mem, &code, pc + 1))
		return 0;
	return code == 0x050f0000000fc0c7ull;
#endif
}

/* Linux gives a stack 8 MiB by default: a frame record farther than this above sp is no frame's. */
#define CPROF_FP_MAX_REACH (256ull << 20)

/*
 * A frame-pointer step, for code without CFI (JIT code, Go, assembly built
 * without unwind tables): the frame record {caller's FP, return address}
 * at FP. A zero FP is the ABI's end of the chain.
 */
static __always_inline int cprof_unwind_fp_step(const void *mem, struct cprof_unwind_regs *r,
						__u64 ra_mask, __u32 *stop)
{
	__u64 fp, next, ra;

	if (!r->fp_valid) {
		*stop = CPROF_STOP_FP_LOST;
		return CPROF_STEP_STOP;
	}
	if (cprof_unwind_fp_load(mem, r)) {
		*stop = CPROF_STOP_READ;
		return CPROF_STEP_STOP;
	}
	fp = r->fp;
	if (!fp)
		return CPROF_STEP_ROOT;
	/*
	 * Below the stack pointer, or farther above it than a stack reaches, it
	 * is no frame's: not read, so no read error is blamed (Java's JIT code
	 * keeps heap addresses and counters there).
	 */
	if (fp < r->sp || fp - r->sp > CPROF_FP_MAX_REACH) {
		*stop = CPROF_STOP_BAD_FRAME;
		return CPROF_STEP_STOP;
	}
	if (CPROF_UNWIND_READ(mem, &next, fp) || CPROF_UNWIND_READ(mem, &ra, fp + 8)) {
		*stop = CPROF_STOP_READ;
		return CPROF_STEP_STOP;
	}
	if (!(ra & ra_mask) || (next && next <= fp)) {
		*stop = CPROF_STOP_BAD_FRAME;
		return CPROF_STEP_STOP;
	}
	r->pc = ra & ra_mask;
	r->sp = fp + 16;
	r->fp = next;
	r->lr_valid = 0;
	r->exact_pc = 0;
	r->gregs_live = 0;
	return CPROF_STEP_CALLER;
}

/*
 * One frame, whatever its code: by its rule where its file has a table
 * (rule NULL: no table, as for JIT code), else a signal trampoline
 * recognized by its code, else a frame-pointer step. *fp_step says a
 * frame-pointer step found the caller. In a file with CFI, code without
 * any that no frame pointer leads out of is where the CFI ended the walk
 * (musl's libc.a), and the stop says so.
 */
static __always_inline int cprof_unwind_frame(const void *mem, const struct cprof_unwind_rule *rule,
					      struct cprof_unwind_regs *r, __u64 ra_mask,
					      __u32 *stop, __u32 *fp_step)
{
	int kind;

	*fp_step = 0;
	if (rule && (rule->cfa_kind != CPROF_CFA_STOP || rule->stop != CPROF_STOP_NO_CFI))
		return cprof_unwind_step(mem, rule, r, ra_mask, stop);
	if (cprof_unwind_is_sigreturn(mem, r->pc)) {
		*stop = cprof_unwind_signal(mem, r);
		return *stop ? CPROF_STEP_STOP : CPROF_STEP_CALLER;
	}
	kind = cprof_unwind_fp_step(mem, r, ra_mask, stop);
	if (kind == CPROF_STEP_STOP && rule)
		*stop = CPROF_STOP_NO_CFI;
	/*
	 * Code with no table at all whose frame pointer points at no frame:
	 * JIT code that uses the register for data (Java without
	 * -XX:+PreserveFramePointer), which no memory error explains.
	 */
	else if (kind == CPROF_STEP_STOP && *stop == CPROF_STOP_BAD_FRAME)
		*stop = CPROF_STOP_NO_FP;
	*fp_step = kind == CPROF_STEP_CALLER;
	return kind;
}

#endif
