// SPDX-License-Identifier: MIT
/*
 * Issue 38, item 3: the reason a walk gives is the real one. Each reason
 * the step can give (bpf/unwind_step.h, run here by the user-space walk
 * exactly as the BPF program runs it) is produced by a stack and a rule
 * made for it, and said in its own words; a full rule dictionary by the
 * table builder, a copy walked before its process's regions by the region
 * feed. The reasons only the BPF side gives are produced by the BPF walk
 * in test_unwinder_bpf.c. Every reason is listed with its case,
 * so that a reason added without one fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "sample/region_feed.h"
#include "unwind/stack_walk.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_rule.h"
#include "unwind/unwind_rules.h"
#include "test.h"

#define CODE	 0x400000ull /* code with a table: rule i at CODE + 0x100 * i */
#define JIT	 0x500000ull /* code without CFI (anonymous memory) */
#define NOWHERE	 0x900000ull /* in no mapping */
#define SP0	 0x7ff000000000ull
#define WORDS	 1024
#define JUNK_FP	 0x1234ull /* a frame pointer register holding data */
#define BAD_RULE 99	   /* a row naming no rule of the dictionary */

enum {
	R_NO_CFI, /* CPROF_RULE_NO_CFI: a file's code its CFI does not cover */
	R_END,
	R_FRAME, /* 16 bytes, the return address on top */
	R_UNSUPPORTED,
	R_GO_SWITCH,
	R_CFA_FP, /* CFA from the frame pointer */
	R_FP_LOST,
	R_LR,
	R_FAR,	/* CFA past the copied stack */
	R_BACK, /* CFA below SP */
	R_RAX,	/* CFA = rax + 16 (OpenSSL's assembly) */
	R_KEEP, /* as R_FRAME, and rax has no rule: the caller has the callee's */
	R_BAD,	/* the row of BAD_RULE */
	NROWS,
};

static const struct cprof_unwind_rule rules[] = {
	[R_NO_CFI] = {.cfa_kind = CPROF_CFA_STOP, .stop = CPROF_STOP_NO_CFI},
	[R_END] = {.cfa_kind = CPROF_CFA_END},
	[R_FRAME] = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 16, .ra_off = -8},
	[R_UNSUPPORTED] = {.cfa_kind = CPROF_CFA_STOP, .stop = CPROF_STOP_UNSUPPORTED},
	[R_GO_SWITCH] = {.cfa_kind = CPROF_CFA_STOP, .stop = CPROF_STOP_GO_SWITCH},
	[R_CFA_FP] = {.cfa_kind = CPROF_CFA_FP, .cfa_off = 16, .ra_off = -8},
	[R_FP_LOST] = {.cfa_kind = CPROF_CFA_SP,
		       .cfa_off = 16,
		       .ra_off = -8,
		       .fp_kind = CPROF_FP_LOST},
	[R_LR] = {.cfa_kind = CPROF_CFA_SP, .ra_kind = CPROF_RA_IN_LR},
	[R_FAR] = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 1 << 20, .ra_off = -8},
	[R_BACK] = {.cfa_kind = CPROF_CFA_SP, .cfa_off = -16, .ra_off = 16},
	[R_RAX] = {.cfa_kind = CPROF_CFA_REG, .cfa_reg = 0, .cfa_off = 16, .ra_off = -8},
	[R_KEEP] = {.cfa_kind = CPROF_CFA_SP, .cfa_off = 16, .ra_off = -8, .keep_regs = 1},
};

static uint32_t pages[2] = {0, NROWS};
static uint32_t rows[NROWS];
static const struct unwind_table table = {
	.base = CODE,
	.npages = 1,
	.pages = pages,
	.nrows = NROWS,
	.rows = rows,
};

static int find(void *arg, uint64_t pc, struct walk_code *out)
{
	(void)arg;
	if (pc >= CODE && pc < CODE + 0x10000) {
		*out = (struct walk_code){.table = &table};
		return 0;
	}
	if (pc >= JIT && pc < JIT + 0x1000) {
		*out = (struct walk_code){.table = NULL};
		return 0;
	}
	return -ENOENT;
}

/* An address inside rule r's code; as a return address, looked up at itself - 1. */
static uint64_t in(int r)
{
	return CODE + 0x100 * (uint64_t)r + 0x10;
}

static uint64_t stack[WORDS];
static uint64_t rax; /* the leaf's, which every walk knows */

/* Walks from pc with the frame pointer fp over stack[]; the reason it stopped. */
static uint32_t walk(uint64_t pc, uint64_t fp, struct walk_result *res)
{
	const struct stack_walk w = {
		.rules = rules,
		.nrules = sizeof(rules) / sizeof(rules[0]),
		.ra_mask = ~0ull,
		.find = find,
	};
	const struct stack_snapshot snap = {
		.pc = pc,
		.sp = SP0,
		.fp = fp,
		.stack = (const uint8_t *)stack,
		.stack_size = sizeof(stack),
		.gregs = {rax},
		.gregs_valid = 0xffff,
	};
	int i;

	for (i = 0; i < NROWS; i++)
		rows[i] =
			cprof_unwind_row(0x100 * (uint32_t)i, i == R_BAD ? BAD_RULE : (uint32_t)i);
	stack_walk__run(&w, &snap, res);
	return res->stop;
}

static void check_reason(uint32_t got, uint32_t want, const char *words)
{
	CHECK_STR(stack_walk__stop_name(got), stack_walk__stop_name(want));
	CHECK_STR(stack_walk__stop_name(want), words);
}

TEST(stop_reasons_each_from_its_own_stack)
{
	struct walk_result res;
	int i;

	memset(stack, 0, sizeof(stack));
	check_reason(walk(in(R_END), 0, &res), CPROF_STOP_NONE, "reached a thread root");
	/* A file's code outside its CFI, whose frame pointer leads nowhere either. */
	check_reason(walk(in(R_NO_CFI), JUNK_FP, &res), CPROF_STOP_NO_CFI, "no CFI for the code");
	check_reason(walk(in(R_BAD), 0, &res), CPROF_STOP_BAD_CFI, "corrupt CFI");
	check_reason(walk(in(R_UNSUPPORTED), 0, &res), CPROF_STOP_UNSUPPORTED,
		     "CFI rule not supported");
	check_reason(walk(in(R_GO_SWITCH), 0, &res), CPROF_STOP_GO_SWITCH, "Go stack switch");
	check_reason(walk(NOWHERE, 0, &res), CPROF_STOP_NO_MAPPING,
		     "address in no known code mapping");
	/* JIT code keeping data in its frame pointer register (Java without frame pointers). */
	check_reason(walk(JIT + 0x10, JUNK_FP, &res), CPROF_STOP_NO_FP,
		     "no CFI, and no frame pointer");
	/* ...or a heap address, far above any stack: unreadable or not, no frame's. */
	check_reason(walk(JIT + 0x10, SP0 + (512ull << 20), &res), CPROF_STOP_NO_FP,
		     "no CFI, and no frame pointer");
	check_reason(walk(in(R_FAR), 0, &res), CPROF_STOP_COPY_END, "beyond the stack copy");
	stack[0] = in(R_FRAME);
	check_reason(walk(in(R_BACK), 0, &res), CPROF_STOP_BAD_FRAME, "implausible frame");

	/* A frame whose rule loses the frame pointer, under one whose CFA needs it. */
	stack[1] = in(R_CFA_FP) + 1;
	check_reason(walk(in(R_FP_LOST), SP0 + 64, &res), CPROF_STOP_FP_LOST,
		     "frame pointer not recoverable");
	CHECK_INT(res.n, ==, 2);
	/* The return address in LR is known in the leaf only. */
	stack[1] = in(R_LR) + 1;
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_LR, "return address in an unknown LR");

	/*
	 * A CFA in rax: known in the leaf, and above a frame whose rule keeps
	 * it; not above one that says nothing of keeping it (R_FRAME).
	 */
	rax = SP0;
	stack[1] = in(R_END) + 1;
	check_reason(walk(in(R_RAX), 0, &res), CPROF_STOP_NONE, "reached a thread root");
	CHECK_INT(res.n, ==, 2);
	rax = SP0 + 16;
	stack[1] = in(R_RAX) + 1;
	stack[3] = in(R_END) + 1;
	check_reason(walk(in(R_KEEP), 0, &res), CPROF_STOP_NONE, "reached a thread root");
	CHECK_INT(res.n, ==, 3);
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_CFA_REG,
		     "CFA in a register not known above the leaf");
	CHECK_INT(res.n, ==, 2);

	/* A recursion deeper than the frames kept. */
	for (i = 1; i < WORDS; i += 2)
		stack[i] = in(R_FRAME) + 1;
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_DEPTH, "deeper than 127 frames");
	CHECK_INT(res.n, ==, CPROF_MAX_STACK_DEPTH);
	/* --max-stack raises it: 510 frames of 16 bytes fill the copy's 8 KiB. */
	stack_walk__set_max_depth(500);
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_DEPTH, "deeper than 500 frames");
	CHECK_INT(res.n, ==, 500);
	stack_walk__set_max_depth(1024);
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_COPY_END, "beyond the stack copy");
	CHECK_INT(res.n, ==, WORDS / 2 + 1);
	stack_walk__set_max_depth(0);
	check_reason(walk(in(R_FRAME), 0, &res), CPROF_STOP_DEPTH, "deeper than 127 frames");
}

static int find_fixture(void *arg, uint64_t pc, struct walk_code *out)
{
	*out = (struct walk_code){.table = arg};
	(void)pc;
	return 0;
}

/* The first address of t whose row has rule id; 0 if none. */
static uint64_t address_of_rule(const struct unwind_table *t, uint32_t id)
{
	uint32_t p, i;

	for (p = 0; p < t->npages; p++)
		for (i = t->pages[p]; i < t->pages[p + 1]; i++)
			if (t->rows[i] >> CPROF_UNWIND_PAGE_SHIFT == id)
				return t->base + ((uint64_t)p << CPROF_UNWIND_PAGE_SHIFT) +
				       (t->rows[i] & CPROF_UNWIND_PAGE_MASK);
	return 0;
}

/*
 * A dictionary filled to the last rule it takes, then a file whose CFI needs
 * rules it does not have: its rows say the dictionary is full, and a walk
 * from any of them stops with that reason, not with the build's failure.
 */
TEST(stop_reasons_no_rule_room_from_a_full_dictionary)
{
	const struct cprof_unwind_rule room = unwind_rule_stop(CPROF_STOP_NO_RULE_ROOM);
	const struct file_id fid = {8, 1, 1234, 0};
	struct cprof_unwind_rule filler = {.cfa_kind = CPROF_CFA_SP, .ra_off = -8};
	struct stack_walk w = {.ra_mask = ~0ull, .find = find_fixture};
	struct stack_snapshot snap = {
		.sp = SP0, .stack = (const uint8_t *)stack, .stack_size = sizeof(stack)};
	int fd = open(test_build_fixture("libc_qsort"), O_RDONLY);
	struct unwind_rules *rules;
	struct table_cache *c;
	struct cached_table *t;
	struct walk_result res;
	uint32_t id;

	CHECK(fd >= 0);
	CHECK_INT(table_cache__new(NULL, &c), ==, 0);
	rules = table_cache__rules(c);
	/* Rules no compiler writes: a CFA a megabyte and more above SP. */
	for (filler.cfa_off = 1 << 20; !unwind_rules__id(rules, &filler, &id); filler.cfa_off++)
		;
	CHECK(unwind_rules__count(rules) >= CPROF_UNWIND_MAX_RULES - 1);
	/* The file's table, as cprof builds it for a process that maps the file. */
	CHECK_INT(table_cache__get(c, &fid, fd, &t), ==, 0);
	CHECK_INT(t->err, ==, 0);
	CHECK(t->table != NULL);
	if (t->table) {
		CHECK(t->stats.stops[CPROF_STOP_NO_RULE_ROOM] > 0);
		CHECK_INT(unwind_rules__id(rules, &room, &id), ==, 0);
		snap.pc = address_of_rule(t->table, id);
		CHECK(snap.pc != 0);
		w.rules = unwind_rules__all(rules);
		w.nrules = unwind_rules__count(rules);
		w.arg = (void *)t->table;
		stack_walk__run(&w, &snap, &res);
		check_reason(res.stop, CPROF_STOP_NO_RULE_ROOM, "rule dictionary full");
		CHECK_STR(stack_walk__stop_token(res.stop), "no_rule_room");
		CHECK_INT(res.n, ==, 1);
	}
	table_cache__free(c);
	close(fd);
}

/*
 * A stack copy of a process whose regions user space has not read yet, as
 * one taken moments after an exec: walked in user space (region_feed.c), it
 * keeps its leaf alone, for want of a table.
 */
TEST(stop_reasons_no_table_for_a_copy_before_its_regions)
{
	static struct cprof_copy c;
	struct region_feed *f;
	struct walk_result res;

	CHECK_INT(region_feed__new(NULL, NULL, NULL, &f), ==, 0);
	c.magic = CPROF_COPY_MAGIC;
	c.pid = c.tid = (uint32_t)getpid();
	c.space = c.time = 1;
	c.pc = in(R_FRAME);
	c.sp = SP0;
	region_feed__walk(f, &c, &res);
	check_reason(res.stop, CPROF_STOP_NO_TABLE, "no unwind table yet");
	CHECK_STR(stack_walk__stop_token(res.stop), "no_table");
	CHECK_INT(res.n, ==, 1);
	CHECK_U64(res.ips[0], ==, c.pc);
	region_feed__free(f);
}

/*
 * Every reason has a case that produces it, in this file or, for those only
 * the BPF side gives, in test_unwinder_bpf.c: a reason added without one
 * fails here.
 */
TEST(stop_reasons_all_accounted_for)
{
	/*
	 * In test_unwinder_bpf.c, by the BPF walk of a live process (NO_TABLE
	 * from a copy in user space too, above).
	 */
	static const uint32_t bpf_walk[] = {
		CPROF_STOP_NO_TABLE,  /* unwinder_bpf_stop_no_table_for_a_file_not_loaded */
		CPROF_STOP_READ,      /* unwinder_bpf_stop_read_on_an_unmapped_stack */
		CPROF_STOP_COPY_LOST, /* unwinder_bpf_stop_copy_lost_when_the_ring_is_full */
	};
	static const uint32_t above[] = {
		CPROF_STOP_NONE,	CPROF_STOP_NO_CFI,	 CPROF_STOP_BAD_CFI,
		CPROF_STOP_UNSUPPORTED, CPROF_STOP_GO_SWITCH,	 CPROF_STOP_NO_MAPPING,
		CPROF_STOP_NO_FP,	CPROF_STOP_COPY_END,	 CPROF_STOP_BAD_FRAME,
		CPROF_STOP_FP_LOST,	CPROF_STOP_LR,		 CPROF_STOP_DEPTH,
		CPROF_STOP_CFA_REG,	CPROF_STOP_NO_RULE_ROOM,
	};
	bool seen[CPROF_STOP_MAX] = {false};
	size_t i;
	uint32_t r, q;

	for (i = 0; i < sizeof(bpf_walk) / sizeof(bpf_walk[0]); i++)
		seen[bpf_walk[i]] = true;
	for (i = 0; i < sizeof(above) / sizeof(above[0]); i++)
		seen[above[i]] = true;
	for (r = 0; r < CPROF_STOP_MAX; r++) {
		if (!seen[r])
			test_fail(__FILE__, __LINE__, "reason %u (%s) has no case", r,
				  stack_walk__stop_name(r));
		/* Words and tokens of their own: two reasons never read alike. */
		for (q = 0; q < r; q++) {
			CHECK(strcmp(stack_walk__stop_name(q), stack_walk__stop_name(r)));
			CHECK(strcmp(stack_walk__stop_token(q), stack_walk__stop_token(r)));
		}
	}
}
