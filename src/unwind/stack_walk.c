// SPDX-License-Identifier: MIT
/*
 * The user-space walk; see stack_walk.h. Memory outside the copied stack
 * cannot be read (the process may be gone by now), so a rule that needs it
 * stops the walk with CPROF_STOP_READ, as a fault would in the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unwind/stack_walk.h"

/* Reads from the copied stack: what is outside it is unknown. */
static int read_stack(const struct stack_snapshot *s, __u64 *dst, __u64 addr)
{
	if (addr < s->sp || addr - s->sp > s->stack_size || s->stack_size - (addr - s->sp) < 8)
		return -1;
	memcpy(dst, s->stack + (addr - s->sp), 8);
	return 0;
}

#define CPROF_UNWIND_READ(mem, dst, addr) read_stack((mem), (dst), (addr))
#define CPROF_UNWIND_GREG(mem, i)	  (((const struct stack_snapshot *)(mem))->gregs[(i)])
#include "unwind_step.h"

static int frame_rule(const struct stack_walk *w, const struct cprof_unwind_regs *r,
		      const struct walk_code *code, const struct cprof_unwind_rule **rule)
{
	/* A return address may be past the end of its call's function (a noreturn call). */
	uint64_t at = (r->exact_pc ? r->pc : r->pc - 1) - code->bias;
	uint32_t id = unwind_table__lookup(code->table, at);

	if (id >= w->nrules)
		return CPROF_STOP_BAD_CFI;
	*rule = &w->rules[id];
	return 0;
}

static int step(const struct stack_walk *w, const struct stack_snapshot *snap,
		struct cprof_unwind_regs *r, struct walk_result *out)
{
	const struct cprof_unwind_rule *rule = NULL;
	struct walk_code code;
	__u32 stop = 0, fp_step;
	int kind, err;

	err = w->find(w->arg, r->pc, &code);
	if (err) {
		out->stop = err == -EAGAIN ? CPROF_STOP_NO_TABLE : CPROF_STOP_NO_MAPPING;
		return CPROF_STEP_STOP;
	}
	if (code.table) {
		stop = frame_rule(w, r, &code, &rule);
		if (stop) {
			out->stop = stop;
			return CPROF_STEP_STOP;
		}
	}
	kind = cprof_unwind_frame(snap, rule, r, w->ra_mask, &stop, &fp_step);
	out->fp_frames += fp_step;
	out->stop = stop;
	return kind;
}

/*
 * The run's --max-stack, one for all walks (the kernel's and these), and
 * the words that say it.
 */
static uint32_t max_depth = CPROF_MAX_STACK_DEPTH;
static char depth_name[40] = "deeper than 127 frames";

void stack_walk__set_max_depth(uint32_t n)
{
	max_depth = n && n <= CPROF_UNWIND_MAX_DEPTH ? n : CPROF_MAX_STACK_DEPTH;
	snprintf(depth_name, sizeof(depth_name), "deeper than %u frames", max_depth);
}

void stack_walk__run(const struct stack_walk *w, const struct stack_snapshot *snap,
		     struct walk_result *out)
{
	struct cprof_unwind_regs r = {
		.pc = snap->pc,
		.sp = snap->sp,
		.fp = snap->fp,
		.lr = snap->lr,
		.fp_valid = 1,
		.lr_valid = 1,
		.exact_pc = 1,
		.gregs_live = snap->gregs_valid,
	};
	int kind = CPROF_STEP_CALLER;

	memset(out, 0, sizeof(*out));
	while (kind == CPROF_STEP_CALLER) {
		if (out->n == max_depth) {
			out->stop = CPROF_STOP_DEPTH;
			break;
		}
		/* The symbolizer looks a return address up at ip - 1: an exact pc goes in as pc
		 * + 1. */
		out->ips[out->n] = r.exact_pc && out->n ? r.pc + 1 : r.pc;
		out->n++;
		kind = step(w, snap, &r, out);
	}
	if (kind == CPROF_STEP_ROOT)
		out->stop = CPROF_STOP_NONE;
	/* The only memory a walk here reads is the copy: a read it refused was past its end. */
	else if (out->stop == CPROF_STOP_READ)
		out->stop = CPROF_STOP_COPY_END;
}

/* The summary's words and the profile comments' tokens, one row per reason. */
static const struct {
	const char *name, *token;
} stops[CPROF_STOP_MAX] = {
	[CPROF_STOP_NONE] = {"reached a thread root", "root"},
	[CPROF_STOP_NO_CFI] = {"no CFI for the code", "no_cfi"},
	[CPROF_STOP_BAD_CFI] = {"corrupt CFI", "bad_cfi"},
	[CPROF_STOP_UNSUPPORTED] = {"CFI rule not supported", "unsupported"},
	[CPROF_STOP_NO_RULE_ROOM] = {"rule dictionary full", "no_rule_room"},
	[CPROF_STOP_NO_MAPPING] = {"address in no known code mapping", "no_mapping"},
	[CPROF_STOP_NO_TABLE] = {"no unwind table yet", "no_table"},
	[CPROF_STOP_READ] = {"stack memory unreadable", "read"},
	[CPROF_STOP_LR] = {"return address in an unknown LR", "lr"},
	[CPROF_STOP_BAD_FRAME] = {"implausible frame", "bad_frame"},
	[CPROF_STOP_FP_LOST] = {"frame pointer not recoverable", "fp_lost"},
	[CPROF_STOP_DEPTH] = {depth_name, "depth"},
	[CPROF_STOP_COPY_END] = {"beyond the stack copy", "copy_end"},
	[CPROF_STOP_COPY_LOST] = {"stack copy lost (ring full)", "copy_lost"},
	[CPROF_STOP_NO_FP] = {"no CFI, and no frame pointer", "no_fp"},
	[CPROF_STOP_GO_SWITCH] = {"Go stack switch", "go_switch"},
	[CPROF_STOP_CFA_REG] = {"CFA in a register not known above the leaf", "cfa_reg"},
};

const char *stack_walk__stop_name(uint32_t stop)
{
	return stop < CPROF_STOP_MAX ? stops[stop].name : "unknown reason";
}

const char *stack_walk__stop_token(uint32_t stop)
{
	return stop < CPROF_STOP_MAX ? stops[stop].token : "unknown";
}
