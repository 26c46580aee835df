/* SPDX-License-Identifier: MIT */
/*
 * The stacks of the samples, as the kernel sends them: each distinct stack
 * (a walked user stack, one by frame pointers, a kernel stack) once, by its
 * 128-bit hash (struct cprof_ustack through `walked_out`), the first time a
 * sample has it; the counts name it by that hash from then on. The kernel remembers which hashes it
 * has sent (`known_stacks`), so this table holds every stack a count may name, and says which the
 * kernel should forget: a stack no count named for a while, once this
 * table runs three quarters full (the kernel's set is a slot per hash, and
 * forgets a stack by itself when another takes its slot: sent again, it is
 * found here again). A forgotten stack is sent again the next time a
 * sample has it; until then it stays here two more drains, for the counts
 * taken while the kernel still knew it.
 */
#ifndef CPROF_WALKED_STACKS_H
#define CPROF_WALKED_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "unwind_abi.h"

struct walked_stacks;

struct walked_stack {
	uint32_t n;    /* frames in ips */
	uint32_t stop; /* enum cprof_unwind_stop */
	uint32_t kind; /* enum cprof_ustack_kind */
	const uint64_t *ips;
};

/* capacity: the stacks kept at most (three quarters of it before forgetting the oldest). */
int walked_stacks__new(uint32_t capacity, struct walked_stacks **out);
void walked_stacks__free(struct walked_stacks *ws);

/*
 * A struct cprof_ustack record of size bytes (only 4-byte aligned: read
 * with care); 0, -EINVAL for a record that makes no sense, or -ENOMEM.
 */
int walked_stacks__add(struct walked_stacks *ws, const void *record, uint32_t size);

/*
 * The stack of hash, marked as named in the current drain; NULL when the
 * kernel never sent it (its record was lost), which also makes the kernel
 * forget it, so that the next sample sends it again.
 */
const struct walked_stack *walked_stacks__get(struct walked_stacks *ws, const __u64 hash[2]);

/*
 * Ends a drain: the hashes the kernel is to forget now, into *out (n of
 * them, valid until the next call), and the stacks forgotten two drains
 * ago are freed.
 */
void walked_stacks__end_drain(struct walked_stacks *ws, const struct cprof_stack_hash **out,
			      size_t *n);

size_t walked_stacks__count(const struct walked_stacks *ws);
/* Records that arrived without room to keep them, or malformed. */
uint64_t walked_stacks__dropped(const struct walked_stacks *ws);

#endif
