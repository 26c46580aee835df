/* SPDX-License-Identifier: MIT */
/*
 * Walks a user stack in user space, from a sample's registers and a copy of
 * the top of its stack, with the same step the BPF program runs
 * (bpf/unwind_step.h) and the same tables. For samples the kernel could
 * not unwind itself: taken before their process's tables were loaded, or
 * on a kernel where the BPF walk cannot run.
 */
#ifndef CPROF_STACK_WALK_H
#define CPROF_STACK_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_abi.h"
#include "unwind/unwind_table.h"

/* The registers of the interrupted user code, and its stack from sp on. */
struct stack_snapshot {
	uint64_t pc, sp, fp, lr;
	const uint8_t *stack; /* the bytes at sp... */
	size_t stack_size;
	uint64_t gregs[CPROF_GREGS]; /* by DWARF number (see CPROF_GREGS) */
	uint32_t gregs_valid;	     /* bit i: gregs[i] is known */
};

/* What the walk needs to know of the address a frame is at. */
struct walk_code {
	const struct unwind_table *table; /* NULL: the code has no CFI (a frame-pointer step) */
	uint64_t bias;			  /* the table's address = pc - bias */
};

/*
 * 0 and *out for an address in a known executable mapping; -ENOENT if in
 * none, -EAGAIN if its file's table is still being built (the walk stops
 * there: no frame-pointer step guesses its callers).
 */
typedef int (*walk_find_fn)(void *arg, uint64_t pc, struct walk_code *out);

struct stack_walk {
	const struct cprof_unwind_rule *rules; /* the dictionary the tables use */
	size_t nrules;
	uint64_t ra_mask; /* bits of a return address that are address (AArch64 PAC) */
	walk_find_fn find;
	void *arg;
};

struct walk_result {
	uint64_t ips[CPROF_UNWIND_MAX_DEPTH]; /* leaf first; a frame after a signal as pc + 1 */
	uint32_t n;
	uint32_t stop;	    /* enum cprof_unwind_stop: CPROF_STOP_NONE when the root was reached */
	uint32_t fp_frames; /* frames found by frame pointer */
};

/*
 * Why a walk stopped (enum cprof_unwind_stop), in the words of the summary
 * and of a truncated stack's placeholder frame.
 */
const char *stack_walk__stop_name(uint32_t stop);
/* The same reason as a snake_case token, for the profile comments ("no_cfi"). */
const char *stack_walk__stop_token(uint32_t stop);

/*
 * How many frames a walk keeps, 1 to CPROF_UNWIND_MAX_DEPTH (--max-stack;
 * 0 or beyond: 127), also in CPROF_STOP_DEPTH's words. Once, before walks.
 */
void stack_walk__set_max_depth(uint32_t n);

/* Walks as far as it can; the result says where and why it stopped. */
void stack_walk__run(const struct stack_walk *w, const struct stack_snapshot *snap,
		     struct walk_result *out);

#endif
