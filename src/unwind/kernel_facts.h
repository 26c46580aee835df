/* SPDX-License-Identifier: MIT */
/*
 * The kernel facts the unwinder needs (kernel_btf.h: where a task's saved
 * user registers are), kept in the table store by the running kernel's
 * build ID: reading them from the kernel's BTF costs some 3 ms of every
 * run, reading them back a few microseconds. The same build ID is the same
 * kernel image, so the same BTF; a kernel without a build ID, or a run
 * without a store, reads the BTF every time.
 */
#ifndef CPROF_KERNEL_FACTS_H
#define CPROF_KERNEL_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/kernel_btf.h"

struct table_store;

/* How kept facts are stored: magic, version, the facts (eight words), a check. */
#define KERNEL_FACTS_BYTES 40

/*
 * The facts, from store (may be NULL) when it has them for this kernel,
 * else from its BTF, then kept there. Errors as kernel_btf__read_vmlinux.
 */
int kernel_facts__read(struct table_store *store, struct kernel_btf_facts *out);

/* The stored form, and back: -EINVAL for anything but a record this code wrote. */
void kernel_facts__encode(const struct kernel_btf_facts *f, uint8_t out[KERNEL_FACTS_BYTES]);
int kernel_facts__decode(const void *buf, size_t len, struct kernel_btf_facts *out);

#endif
