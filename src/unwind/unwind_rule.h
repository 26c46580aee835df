/* SPDX-License-Identifier: MIT */
/*
 * Turns a row of CFI (any DWARF rule) into the compact rule the unwinder
 * runs (bpf/unwind_abi.h): the CFA from SP or FP plus an offset, or one of
 * the few expressions compilers and hand-written assembly really use; the
 * return address and the frame pointer from the stack or unchanged; signal
 * trampolines and the outermost frame. Anything else becomes a stop rule
 * that says why, so a walk ends there instead of guessing.
 */
#ifndef CPROF_UNWIND_RULE_H
#define CPROF_UNWIND_RULE_H

#include <stdbool.h>

#include "unwind/cfi_program.h"
#include "unwind_abi.h"

/* The FDE facts a rule depends on beyond its row. */
struct unwind_rule_ctx {
	enum cfi_arch arch;
	uint64_t ra_column;
	bool signal_frame;
};

struct cprof_unwind_rule unwind_rule_from_cfi(const struct unwind_rule_ctx *ctx,
					      const struct cfi_row *row);
/* A rule that stops the walk for reason (enum cprof_unwind_stop). */
struct cprof_unwind_rule unwind_rule_stop(unsigned int reason);

#endif
