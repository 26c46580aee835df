// SPDX-License-Identifier: MIT
/*
 * The run's counters for its summaries: read once for the whole run, and
 * as an interval's share in continuous mode.
 */
#include "session_internal.h"

#define LOG_MODULE NULL
#include "lib/log.h"

/* The run's counters now, beside what r->base says of the run. */
void run__read_info(struct run *r, struct summary_info *in)
{
	uint64_t rate;

	*in = r->base;
	if (procfs__perf_max_sample_rate(&rate) == 0)
		in->kernel_max_rate = rate;
	in->stats_unread = sampler__read_stats(r->sampler, in->stats) != 0;
	in->lost_notifications = sampler__lost_notifications(r->sampler);
	in->missing_stacks = sampler__missing_stacks(r->sampler);
	in->lost_spills = sampler__lost_spills(r->sampler) + r->bad_copies;
	sampler__skipped(r->sampler, &in->skipped_samples, &in->skipped_hooks);
	in->forks_late = r->forks_late;
	in->kernel_fallbacks = kernel_caps__fallbacks();
	in->max_stack = r->o->max_stack;
	in->kernel_as = kernel_caps__emulated();
	in->symtabs_refused = r->budget.symtabs_refused;
	in->symtabs_abandoned = r->budget.symtabs_abandoned;
	in->symtabs_over_held = r->budget.symtabs_over_held;
	in->cfi_refused = r->budget.cfi_refused;
	in->cfi_abandoned = r->budget.cfi_abandoned;
	in->cfi_left_behind = r->budget.cfi_left_behind;
	in->files_cut_short = sigbus__faults();
	if (r->feed) {
		struct region_feed_stats fs;

		region_feed__stats(r->feed, &fs);
		in->regions_over_cap = fs.regions.regions_over_cap;
	}
	memcpy(in->sym, symbolizer__stats(r->sym), sizeof(in->sym));
	symbolizer__unopened_who(r->sym, in->unopened_who, sizeof(in->unopened_who));
	fuse_file__counts(&in->fuse);
	if (r->fetches) {
		in->debuginfod = true;
		debuginfod_queue__counts(r->fetches, &in->fetched);
	}
	if (r->events) {
		struct task_events_stats st;

		task_events__stats(r->events, &st);
		in->followed = true;
		in->records = st.records;
		in->records_lost = st.lost;
		in->records_broken = st.malformed;
		in->records_late = st.late;
	}
	if (r->tables) {
		struct table_store_stats ts;

		table_store__stats(r->tables, &ts);
		in->store_capped = ts.capped;
	}
}

/* The counters are cumulative; an interval's profile reports its own share. */
struct summary_info run__since(const struct summary_info *cur, const struct summary_info *prev)
{
	struct summary_info d = *cur;
	int i;

	for (i = 0; i < CPROF_STAT_MAX; i++)
		d.stats[i] -= prev->stats[i];
	/* A process first counted as gone can be read after all, a moment later. */
	for (i = 0; i < SYM_STAT_MAX; i++)
		d.sym[i] = cur->sym[i] > prev->sym[i] ? cur->sym[i] - prev->sym[i] : 0;
	d.lost_notifications -= prev->lost_notifications;
	d.missing_stacks -= prev->missing_stacks;
	d.lost_spills -= prev->lost_spills;
	d.records -= prev->records;
	d.records_lost -= prev->records_lost;
	d.records_broken -= prev->records_broken;
	d.records_late -= prev->records_late;
	d.skipped_samples -= prev->skipped_samples;
	d.skipped_hooks -= prev->skipped_hooks;
	d.forks_late -= prev->forks_late;
	d.symtabs_refused -= prev->symtabs_refused;
	d.symtabs_abandoned -= prev->symtabs_abandoned;
	d.symtabs_over_held -= prev->symtabs_over_held;
	d.cfi_refused -= prev->cfi_refused;
	d.cfi_abandoned -= prev->cfi_abandoned;
	d.cfi_left_behind -= prev->cfi_left_behind;
	d.files_cut_short -= prev->files_cut_short;
	d.regions_over_cap -= prev->regions_over_cap;
	d.walked -= prev->walked;
	for (i = 0; i < CPROF_STOP_MAX; i++)
		d.walk_stops[i] -= prev->walk_stops[i];
	d.fp_user -= prev->fp_user;
	d.store_capped -= prev->store_capped;
	return d;
}
