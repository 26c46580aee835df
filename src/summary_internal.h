/* SPDX-License-Identifier: MIT */
/*
 * The summary in pieces (summary.c): what a profile holds, counted
 * (summary_counts.c), and the sentences said both on stderr and as profile
 * comments (summary_sentences.c).
 */
#ifndef CPROF_SUMMARY_INTERNAL_H
#define CPROF_SUMMARY_INTERNAL_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "lib/kernel_caps.h"
#include "lib/proc_file.h"
#include "lib/short_name.h"
#include "lib/strpool.h"
#include "lib/term_text.h"
#include "lib/load_budget.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "summary.h"
#include "unwind/process_regions.h"
#include "unwind/stack_walk.h"

/* Names are escaped into buffers of this size before they are shown. */
#define SHOWN_SIZE 4096

struct func_total {
	const char *name;
	const char *module;
	uint64_t self;
	uint64_t total;
	size_t last_sample; /* 1 + the sample that last counted total */
	uint32_t next;	    /* 1 + the next function of the same name (another module) */
};

/* summary_counts.c */
size_t summary_count_processes(const struct profile *p);
struct func_total *summary_function_totals(const struct profile *p, struct strpool *names,
					   size_t *n_out);
uint64_t summary_lost_samples(const struct summary_info *in);
uint64_t summary_lost_stacks(const struct summary_info *in);
double summary_pct(uint64_t part, uint64_t whole);
const char *summary_shown(const char *name, char buf[SHOWN_SIZE]);
size_t summary_stops_by_count(const struct summary_info *in, uint32_t *out);

/* summary_sentences.c */
void summary_budget_sentence(char *buf, size_t size, const struct summary_info *in);
void summary_copy_causes_comment(char *buf, size_t size, const struct summary_info *in);
void summary_debuginfod_sentence(char *buf, size_t size, const struct summary_info *in);
void summary_end_maps_sentence(char *buf, size_t size, const struct summary_info *in);
void summary_fallbacks_sentence(char *buf, size_t size, const struct summary_info *in);
void summary_lines_sentence(char *buf, size_t size, const struct summary_info *in);
void summary_print_copy_causes(FILE *f, const struct summary_info *in);
void summary_print_lines(FILE *f, const struct summary_info *in);
void summary_refusals_sentence(char *buf, size_t size, const struct summary_info *in, bool always);
uint64_t summary_uncounted_samples(uint64_t total, const struct summary_info *in);
void summary_user_stacks_comment(char *buf, size_t size, const struct summary_info *in);

#endif
