// SPDX-License-Identifier: MIT
/*
 * Samples come from the kernel, but a bug, a newer kernel or a ring we fell
 * out of step with can hand the parser any bytes, and at a thousand samples
 * a second per CPU it must never read past a record nor copy past a field.
 * The input is parsed whole as one record with this architecture's layout;
 * then its first 8 bytes pick a layout (any mix of the supported fields,
 * any registers) for the rest. Each parse is from a heap copy of exactly
 * its size (ASan catches a read past it). Checked: a copy stays within its
 * arrays, its stack bytes are bytes of the record, and the general
 * registers it knows are those the layout samples.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "sample/perf_sample.h"

static struct cprof_copy copy;

/* A general register is known only where the layout samples it, and never without user registers.
 */
static void check_gregs(const struct perf_sample_layout *l)
{
	unsigned int i;
	int bit;

	if ((copy.flags & CPROF_COPY_NO_USER) && copy.gregs_valid)
		abort();
	for (i = 0; i < 32; i++) {
		if (!(copy.gregs_valid >> i & 1))
			continue;
		bit = perf_sample__greg_bit(i);
		if (i >= CPROF_GREGS || bit < 0 || !(l->regs_mask >> bit & 1))
			abort();
	}
}

static void check(const uint8_t *rec, size_t size, const struct perf_sample_layout *l, int err)
{
	if (err != 0 && err != -EINVAL && err != -ENOTSUP)
		abort();
	if (err) {
		if (copy.magic || copy.kern_bytes || copy.stack_bytes)
			abort();
		return;
	}
	if (copy.magic != CPROF_COPY_MAGIC ||
	    (copy.flags & ~CPROF_COPY_NO_USER) != CPROF_COPY_FROM_PERF || copy.set)
		abort();
	/* No user registers: nothing of the user's to walk, not even a pc of 0. */
	if ((copy.flags & CPROF_COPY_NO_USER) &&
	    (copy.pc || copy.sp || copy.lr_valid || copy.stack_bytes))
		abort();
	if (copy.space != copy.time || copy.comm[0] || copy.comm[1])
		abort();
	if (copy.kern_bytes > sizeof(copy.kern) || copy.kern_bytes % 8)
		abort();
	if (copy.stack_bytes > CPROF_COPY_STACK || copy.stack_bytes > size)
		abort();
	if (copy.stack_bytes && !memmem(rec, size, copy.stack, copy.stack_bytes))
		abort();
	if (copy.lr_valid && l->lr_reg < 0)
		abort();
	if (!(l->sample_type & PERF_SAMPLE_REGS_USER) &&
	    (copy.pc || copy.sp || copy.lr_valid || copy.gregs_valid))
		abort();
	check_gregs(l);
	if (!(l->sample_type & PERF_SAMPLE_STACK_USER) && copy.stack_bytes)
		abort();
}

static void parse(const uint8_t *data, size_t size, const struct perf_sample_layout *l)
{
	uint8_t *rec = malloc(size ? size : 1);

	if (!rec)
		return;
	memcpy(rec, data, size);
	check(rec, size, l, perf_sample__parse(rec, size, l, &copy));
	free(rec);
}

/* The n-th lowest register of mask, or -1 when it has fewer. */
static int nth_reg(uint64_t mask, int n)
{
	for (; mask; mask &= mask - 1)
		if (n-- == 0)
			return __builtin_ctzll(mask);
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_sample_layout l;
	uint64_t v;

	perf_sample__layout(&l);
	parse(data, size, &l);
	if (size < sizeof(v))
		return 0;
	memcpy(&v, data, sizeof(v));
	/* The supported bits are all below bit 17; the bits above pick registers. */
	l.sample_type = v & PERF_SAMPLE_PARSED_TYPES;
	l.regs_mask = v >> 17;
	l.pc_reg = nth_reg(l.regs_mask, 0);
	l.sp_reg = nth_reg(l.regs_mask, 1);
	l.fp_reg = nth_reg(l.regs_mask, 2);
	l.lr_reg = nth_reg(l.regs_mask, 3);
	parse(data + sizeof(v), size - sizeof(v), &l);
	return 0;
}
