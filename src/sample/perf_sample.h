/* SPDX-License-Identifier: MIT */
/*
 * A PERF_RECORD_SAMPLE of a sampling event (user registers, the top of the
 * user stack, the kernel callchain) turned into the stack copy the BPF
 * program would have sent (struct cprof_copy), so that kernels which cannot
 * run the in-kernel unwinder still get their user stacks walked by the same
 * code in user space. No syscalls: the bytes are outside input, so the
 * parser is tested and fuzzed on its own.
 */
#ifndef CPROF_PERF_SAMPLE_H
#define CPROF_PERF_SAMPLE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler_abi.h"

/* The sample_type fields the parser can follow: their size needs no more of the attr. */
#define PERF_SAMPLE_PARSED_TYPES                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |           \
	 PERF_SAMPLE_STACK_USER)

/* What the parser must know of the event's attr to find the fields of a sample. */
struct perf_sample_layout {
	uint64_t sample_type; /* attr.sample_type */
	uint64_t regs_mask;   /* attr.sample_regs_user */
	/* Bit numbers in regs_mask of those registers; -1: not sampled. */
	int pc_reg, sp_reg, fp_reg, lr_reg;
};

/*
 * The bit in a regs_mask of general register i by DWARF number (i below
 * CPROF_GREGS, see struct cprof_copy.gregs), on this build's architecture.
 */
int perf_sample__greg_bit(unsigned int i);

/*
 * The layout cprof opens its sampling events with, for this build's
 * architecture: TID, TIME, CALLCHAIN (to be opened with
 * exclude_callchain_user: kernel frames only), REGS_USER (PC, SP, the frame
 * pointer, on arm64 the link register, and the general registers of
 * perf_sample__greg_bit) and STACK_USER.
 */
void perf_sample__layout(struct perf_sample_layout *out);

/*
 * Parses one record (header included, size from the header, as copied out
 * of the ring) into *out, which must be a whole struct cprof_copy: its
 * fields are all set except stack[] past stack_bytes and kern[] past
 * kern_bytes. Returns 0 for a sample; -ENOTSUP for a record of another
 * type, which callers skip (they read PERF_RECORD_LOST themselves);
 * -EINVAL for a malformed or truncated record (also one longer than its
 * fields: the event's layout is not l), or a layout this parser cannot
 * follow (a sample_type field outside PERF_SAMPLE_PARSED_TYPES, a register
 * outside regs_mask). Nothing past size is read. On failure *out holds no
 * copy (magic 0).
 */
int perf_sample__parse(const void *rec, size_t size, const struct perf_sample_layout *l,
		       struct cprof_copy *out);

#endif
