// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "build/profile.h"
#include "lib/u64map.h"
#include "lib/words.h"
#include "summary.h"

struct func_total {
	const char *name;
	const char *module;
	uint64_t self;
	uint64_t total;
};

static const char *frame_module(const struct profile *p, const struct profile_frame *f)
{
	const struct profile_mapping *m;
	const char *slash;

	if (f->kernel)
		return "[kernel]";
	if (!f->mapping)
		return "";
	m = profile__mapping(p, f->mapping);
	if (!m || !m->path || !*m->path)
		return "";
	slash = strrchr(m->path, '/');
	return slash ? slash + 1 : m->path;
}

static int cmp_self(const void *a, const void *b)
{
	const struct func_total *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * Self and total per function name. Total counts a sample once even when a
 * function appears several times in its stack (recursion).
 */
static struct func_total *function_totals(const struct profile *p, size_t *n_out)
{
	struct u64map *index = u64map__new(), *in_sample = u64map__new();
	struct func_total *funcs = NULL, *tmp;
	size_t n = 0, cap = 0, i;
	uint32_t j;
	uint64_t v;

	if (!index || !in_sample)
		goto fail;
	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *s = profile__sample(p, i);

		for (j = 0; j < s->nframes; j++) {
			const struct profile_frame *f = profile__frame(p, s->frames[j]);
			uint64_t key = (uintptr_t)f->name;

			if (!u64map__get(index, key, &v)) {
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					tmp = realloc(funcs, cap * sizeof(*funcs));
					if (!tmp)
						goto fail;
					funcs = tmp;
				}
				funcs[n] = (struct func_total){f->name, frame_module(p, f), 0, 0};
				v = n++;
				if (u64map__set(index, key, v))
					goto fail;
			}
			if (j == 0)
				funcs[v].self += s->count;
			if (!u64map__get(in_sample, key, NULL)) {
				funcs[v].total += s->count;
				if (u64map__set(in_sample, key, 1))
					goto fail;
			}
		}
		for (j = 0; j < s->nframes; j++)
			u64map__delete(in_sample, (uintptr_t)profile__frame(p, s->frames[j])->name);
	}
	u64map__free(index);
	u64map__free(in_sample);
	qsort(funcs, n, sizeof(*funcs), cmp_self);
	*n_out = n;
	return funcs;
fail:
	u64map__free(index);
	u64map__free(in_sample);
	free(funcs);
	*n_out = 0;
	return NULL;
}

static size_t count_processes(const struct profile *p)
{
	struct u64map *pids = u64map__new();
	size_t i, n;

	if (!pids)
		return 0;
	for (i = 0; i < profile__sample_count(p); i++)
		u64map__set(pids, profile__sample(p, i)->labels.pid, 1);
	n = u64map__count(pids);
	u64map__free(pids);
	return n;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

uint64_t summary__unnamed_samples(const struct profile *p)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *smp = profile__sample(p, i);

		for (uint32_t j = 0; j < smp->nframes; j++) {
			const struct profile_frame *f = profile__frame(p, smp->frames[j]);

			if (f->unknown && !f->kernel) {
				n += smp->count;
				break;
			}
		}
	}
	return n;
}

/* A user frame in no known mapping; placeholders for lost stacks have no address. */
static bool unmapped(const struct profile_frame *f)
{
	return f->unknown && !f->kernel && !f->mapping && f->address;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0;
}

/* "name count, ..." of the (name, count) pairs in by, most first, as long as they fit. */
static void list_who(struct u64map *by, char *who, size_t size)
{
	size_t n = u64map__count(by), pos = 0, i = 0, off = 0;
	uint64_t *pairs = calloc(2 * n + 2, sizeof(*pairs));
	int w;

	who[0] = '\0';
	if (!pairs)
		return;
	while (u64map__next(by, &pos, &pairs[2 * i], &pairs[2 * i + 1]))
		i++;
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_count_desc);
	for (i = 0; i < n; i++) {
		w = snprintf(who + off, size - off, "%s%s %" PRIu64, i ? ", " : "",
			     (const char *)(uintptr_t)pairs[2 * i], pairs[2 * i + 1]);
		if (w < 0 || (size_t)w >= size - off) {
			who[off] = '\0';
			break;
		}
		off += (size_t)w;
	}
	free(pairs);
}

uint64_t summary__unmapped_samples(const struct profile *p, char *who, size_t size)
{
	struct u64map *by = u64map__new(); /* interned comm -> samples */
	uint64_t n = 0, v;
	size_t i;

	for (i = 0; i < profile__sample_count(p); i++) {
		const struct profile_sample *smp = profile__sample(p, i);
		const char *comm = smp->labels.comm ? smp->labels.comm : "?";

		for (uint32_t j = 0; j < smp->nframes; j++) {
			if (!unmapped(profile__frame(p, smp->frames[j])))
				continue;
			n += smp->count;
			if (by && !u64map__get(by, (uintptr_t)comm, &v))
				v = 0;
			if (by)
				u64map__set(by, (uintptr_t)comm, v + smp->count);
			break;
		}
	}
	if (by)
		list_who(by, who, size);
	else
		who[0] = '\0';
	u64map__free(by);
	return n;
}

static uint64_t lost_samples(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_COUNTS_FULL] + in->lost_spills;
}

static uint64_t lost_stacks(const struct summary_info *in)
{
	return in->stats[CPROF_STAT_USER_COLLISION] + in->stats[CPROF_STAT_KERN_COLLISION] +
	       in->stats[CPROF_STAT_USER_STACK_ERR] + in->stats[CPROF_STAT_KERN_STACK_ERR] +
	       in->missing_stacks;
}

int summary__add_comments(struct profile *p, const struct summary_info *in)
{
	char buf[1024];
	int err;

	snprintf(buf, sizeof(buf),
		 "cprof: samples taken %" PRIu64 ", in profile %" PRIu64 ", lost %" PRIu64
		 " (counts map full, or no memory for a spilled stack); of the command before "
		 "its exec, not kept %" PRIu64 "; ticks %" PRIu64 " at %" PRIu64
		 " Hz on %d CPUs; kernel.perf_event_max_sample_rate %" PRIu64,
		 in->stats[CPROF_STAT_SAMPLES], profile__total_count(p), lost_samples(in),
		 in->stats[CPROF_STAT_BEFORE_EXEC], in->stats[CPROF_STAT_TICKS], in->hz, in->ncpus,
		 in->kernel_max_rate);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: stacks lost (sample kept with a placeholder frame): user collisions "
		 "%" PRIu64 ", kernel collisions %" PRIu64 ", user errors %" PRIu64
		 ", kernel errors %" PRIu64 ", vanished %" PRIu64
		 "; samples kept whole past a stack-map collision %" PRIu64,
		 in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
		 in->stats[CPROF_STAT_USER_STACK_ERR], in->stats[CPROF_STAT_KERN_STACK_ERR],
		 in->missing_stacks, in->stats[CPROF_STAT_SPILLED]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: samples with a user frame no symbol names %" PRIu64
		 "; distinct frames without a symbol: user %" PRIu64 " of %" PRIu64
		 " (in no known mapping %" PRIu64 "), kernel %" PRIu64 " of %" PRIu64
		 "; processes read from /proc %" PRIu64 ", of which gone before their maps were "
		 "read %" PRIu64 "; address spaces followed from their fork or exec %" PRIu64
		 ", code mappings followed %" PRIu64 ", ended spaces released %" PRIu64
		 "; lost first-sight notifications %" PRIu64 "; perf buffer records lost %" PRIu64
		 " (each counted above under its reason)",
		 in->unnamed_samples, in->sym[SYM_STAT_UNKNOWN_USER], in->sym[SYM_STAT_USER_FRAMES],
		 in->sym[SYM_STAT_USER_UNMAPPED], in->sym[SYM_STAT_UNKNOWN_KERNEL],
		 in->sym[SYM_STAT_KERNEL_FRAMES], in->sym[SYM_STAT_PROCESSES],
		 in->sym[SYM_STAT_PROCESSES_GONE], in->sym[SYM_STAT_SPACES_FOLLOWED],
		 in->sym[SYM_STAT_MAPPINGS_FOLLOWED], in->sym[SYM_STAT_SPACES_FORGOTTEN],
		 in->stats[CPROF_STAT_NOTIFY_LOST], in->lost_notifications);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: samples with a user address in no mapping known to its process %" PRIu64
		 "%s%s%s; mapped files that could not be opened (gone, or replaced) %" PRIu64
		 "%s%s%s",
		 in->unmapped_samples, in->unmapped_who[0] ? " (" : "", in->unmapped_who,
		 in->unmapped_who[0] ? ")" : "", in->sym[SYM_STAT_FILES_UNOPENED],
		 in->unopened_who[0] ? " (" : "", in->unopened_who, in->unopened_who[0] ? ")" : "");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->followed)
		snprintf(buf, sizeof(buf),
			 "cprof: the kernel's records of forks, execs and mmaps: read %" PRIu64
			 ", lost by the kernel (ring full) %" PRIu64 ", malformed %" PRIu64
			 ", out of time order %" PRIu64,
			 in->records, in->records_lost, in->records_broken, in->records_late);
	else
		snprintf(buf, sizeof(buf),
			 "cprof: processes not followed as they began (no kernel records): "
			 "each was read from /proc when first sampled");
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "cprof: symbols: separate debug files used %" PRIu64
		 "; malformed perf map lines skipped %" PRIu64 "; ELF files read %" PRIu64
		 ", closed when no process had mapped them for a minute %" PRIu64
		 "; frames named by function start (no symbol) %" PRIu64,
		 in->sym[SYM_STAT_DEBUG_FILES], in->sym[SYM_STAT_PERF_MAP_BAD_LINES],
		 in->sym[SYM_STAT_ELF_FILES], in->sym[SYM_STAT_ELF_FILES_CLOSED],
		 in->sym[SYM_STAT_FUNCTION_STARTS]);
	err = profile__add_comment(p, buf);
	if (err)
		return err;
	if (in->targeted)
		snprintf(buf, sizeof(buf),
			 "cprof: idle samples: none (only the targets are sampled)");
	else
		snprintf(buf, sizeof(buf), "cprof: idle samples %s: %" PRIu64,
			 in->include_idle ? "included" : "excluded", in->stats[CPROF_STAT_IDLE]);
	return profile__add_comment(p, buf);
}

static void print_lost(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t lost = lost_samples(in), stacks = lost_stacks(in);

	if (lost)
		fprintf(f, "cprof: LOST %" PRIu64 " %s (%.1f%%): %s\n", lost,
			plural(lost, "sample", "samples"), pct(lost, total + lost),
			in->lost_spills
				? "the counts map was full, or no memory for a spilled stack"
				: "the counts map was full; raise --map-size");
	else
		fprintf(f, "cprof: lost samples: 0\n");
	if (stacks)
		fprintf(f,
			"cprof: %" PRIu64 " %s lost but their samples kept as placeholders: "
			"stack-map collisions user %" PRIu64 " kernel %" PRIu64 ", errors %" PRIu64
			"\n",
			stacks, plural(stacks, "stack", "stacks"),
			in->stats[CPROF_STAT_USER_COLLISION], in->stats[CPROF_STAT_KERN_COLLISION],
			in->stats[CPROF_STAT_USER_STACK_ERR] +
				in->stats[CPROF_STAT_KERN_STACK_ERR] + in->missing_stacks);
}

static void print_unnamed(FILE *f, uint64_t total, const struct summary_info *in)
{
	uint64_t n;

	if (in->sym[SYM_STAT_UNKNOWN_USER] || in->sym[SYM_STAT_UNKNOWN_KERNEL])
		fprintf(f,
			"cprof: %" PRIu64 " of %" PRIu64 " %s (%.1f%%) %s a user frame no symbol "
			"names; distinct frames without a symbol, shown as module+offset: user "
			"%" PRIu64 " of %" PRIu64 ", kernel %" PRIu64 " of %" PRIu64 "\n",
			in->unnamed_samples, total, plural(total, "sample", "samples"),
			pct(in->unnamed_samples, total), in->unnamed_samples == 1 ? "has" : "have",
			in->sym[SYM_STAT_UNKNOWN_USER], in->sym[SYM_STAT_USER_FRAMES],
			in->sym[SYM_STAT_UNKNOWN_KERNEL], in->sym[SYM_STAT_KERNEL_FRAMES]);
	n = in->unmapped_samples;
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s a user address in no mapping known to %s process, "
			"shown as [unknown]%s%s\n",
			n, plural(n, "sample has", "samples have"), plural(n, "its", "their"),
			in->unmapped_who[0] ? ": " : "", in->unmapped_who);
	n = in->sym[SYM_STAT_FILES_UNOPENED];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " mapped %s not be opened (deleted and gone, or replaced "
			"by another file): %s frames are shown as file+offset%s%s\n",
			n, plural(n, "file could", "files could"), plural(n, "its", "their"),
			in->unopened_who[0] ? "; in " : "", in->unopened_who);
	n = in->sym[SYM_STAT_FUNCTION_STARTS];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64 " %s named by function start (no symbol), shown as "
			"FILE+0xSTART of their function (from .eh_frame)\n",
			n, plural(n, "frame", "frames"));
	n = in->sym[SYM_STAT_PERF_MAP_BAD_LINES];
	if (n)
		fprintf(f, "cprof: %" PRIu64 " malformed perf map %s skipped\n", n,
			plural(n, "line", "lines"));
}

static void print_processes(FILE *f, const struct summary_info *in)
{
	uint64_t gone = in->sym[SYM_STAT_PROCESSES_GONE], n = in->stats[CPROF_STAT_NOTIFY_LOST];

	if (in->records_lost)
		fprintf(f,
			"cprof: the kernel lost %" PRIu64 " %s of forks, execs and mmaps (its ring "
			"was full): processes that began or mapped code then may show [unknown] "
			"frames\n",
			in->records_lost, plural(in->records_lost, "record", "records"));
	if (in->records_broken)
		fprintf(f, "cprof: %" PRIu64 " malformed process %s skipped\n", in->records_broken,
			plural(in->records_broken, "record", "records"));

	if (gone)
		fprintf(f, "cprof: %" PRIu64 " %s before %s memory map could be read\n", gone,
			plural(gone, "process exited", "processes exited"),
			plural(gone, "its", "their"));
	if (n)
		fprintf(f, "cprof: %" PRIu64 " new-process %s lost (%s read late)\n", n,
			plural(n, "notification", "notifications"),
			plural(n, "that process was", "those processes were"));
	n = in->stats[CPROF_STAT_BEFORE_EXEC];
	if (n)
		fprintf(f,
			"cprof: %" PRIu64
			" %s of the command before its exec not kept (cprof's own "
			"code)\n",
			n, plural(n, "sample", "samples"));
}

static void print_rate(FILE *f, const struct summary_info *in)
{
	uint64_t idle = in->stats[CPROF_STAT_IDLE];

	/*
	 * -F was checked against the limit at the start; the kernel lowers it when
	 * sampling interrupts take too long, and then throttles the events. (The
	 * tick count cannot tell: an idle CPU in a tickless sleep takes none.)
	 */
	if (in->kernel_max_rate && in->kernel_max_rate < in->hz)
		fprintf(f,
			"cprof: the kernel throttled sampling: it lowered "
			"kernel.perf_event_max_sample_rate to %" PRIu64
			" during the run, below the "
			"%" PRIu64 " Hz asked, so fewer samples were taken (%" PRIu64
			" ticks in %.2f s on %d %s)\n",
			in->kernel_max_rate, in->hz, in->stats[CPROF_STAT_TICKS],
			(double)in->duration_ns / 1e9, in->ncpus,
			plural((uint64_t)in->ncpus, "CPU", "CPUs"));
	/* With -p or a command, other CPUs' idle time is not the target's business. */
	if (!idle || in->targeted)
		return;
	if (in->include_idle)
		fprintf(f, "cprof: %" PRIu64 " idle %s included (the swapper task)\n", idle,
			plural(idle, "sample", "samples"));
	else
		fprintf(f, "cprof: %" PRIu64 " idle %s not counted (--include-idle keeps them)\n",
			idle, plural(idle, "sample", "samples"));
}

void summary__print_losses(FILE *f, uint64_t total, const struct summary_info *in)
{
	print_lost(f, total, in);
	print_unnamed(f, total, in);
	print_processes(f, in);
	print_rate(f, in);
}

void summary__print(FILE *f, const struct profile *p, const struct summary_info *in, int top_n)
{
	uint64_t total = profile__total_count(p);
	struct func_total *funcs;
	size_t nfuncs = 0, i;

	fprintf(f, "cprof: %" PRIu64 " %s in %.2f s at %" PRIu64 " Hz on %d %s, %zu %s\n", total,
		plural(total, "sample", "samples"), (double)in->duration_ns / 1e9, in->hz,
		in->ncpus, plural((uint64_t)in->ncpus, "CPU", "CPUs"), count_processes(p),
		plural(count_processes(p), "process", "processes"));
	summary__print_losses(f, total, in);
	if (!total)
		return;
	funcs = function_totals(p, &nfuncs);
	fprintf(f, "cprof: top functions by self samples:\n");
	fprintf(f, "  %6s %6s %8s  %s\n", "self%", "total%", "samples", "function");
	for (i = 0; i < nfuncs && (int)i < top_n; i++) {
		if (!funcs[i].self)
			break;
		fprintf(f, "  %5.1f%% %5.1f%% %8" PRIu64 "  %s%s%s%s\n", pct(funcs[i].self, total),
			pct(funcs[i].total, total), funcs[i].self, funcs[i].name,
			*funcs[i].module ? " (" : "", funcs[i].module, *funcs[i].module ? ")" : "");
	}
	free(funcs);
}
