// SPDX-License-Identifier: MIT
/*
 * The sentences the summary says both on stderr and as profile comments:
 * fallbacks, stack walks, copies, lines, refusals, caps, debuginfod.
 */
#include "summary_internal.h"

/* snprintf at *off of buf; what does not fit is cut, and *off stays inside buf. */
static void appendf(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*off >= size - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *off, size - *off, fmt, ap);
	va_end(ap);
	if (w > 0)
		*off = (size_t)w < size - *off ? *off + (size_t)w : size - 1;
}

/*
 * "kernel fallbacks (as Linux 4.18, CPROF_KERNEL_AS): A; B", or "" when the
 * kernel could do everything cprof asked of it.
 */
void summary_fallbacks_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const char *sep = ": ";
	size_t off = 0;
	int c;

	*buf = '\0';
	if (!in->kernel_fallbacks)
		return;
	appendf(buf, size, &off, "kernel fallbacks");
	if (in->kernel_as)
		appendf(buf, size, &off, " (as Linux %s, CPROF_KERNEL_AS)", in->kernel_as);
	for (c = 0; c < KCAP_MAX; c++) {
		if (!(in->kernel_fallbacks & (1u << c)))
			continue;
		/* Without an in-kernel walk, how it would be verified is moot. */
		if ((c == KCAP_BPF_LOOP || c == KCAP_FIND_VMA) &&
		    (in->kernel_fallbacks & (1u << KCAP_UNWINDER)))
			continue;
		appendf(buf, size, &off, "%s%s", sep, kernel_caps__fallback_name(c));
		sep = "; ";
	}
}

/*
 * Samples the profile holds past those the BPF side counted: 0 when it
 * holds no more (losses and samples not kept explain fewer).
 */
uint64_t summary_uncounted_samples(uint64_t total, const struct summary_info *in)
{
	if (in->interval || in->stats_unread || total <= in->stats[CPROF_STAT_SAMPLES])
		return 0;
	return total - in->stats[CPROF_STAT_SAMPLES];
}

/* How user stacks were walked, in one comment: snake_case reasons (stack_walk__stop_token). */
void summary_user_stacks_comment(char *buf, size_t size, const struct summary_info *in)
{
	uint32_t order[CPROF_STOP_MAX];
	size_t off = 0, n, i;

	if (in->copy_walks) {
		appendf(buf, size, &off,
			"cprof: user stacks: cfi_in_user_space (stack copies: %s);",
			in->unwind_status == -ENOENT ? "asked for" : strerror(-in->unwind_status));
	} else if (in->unwind_status == -ENOENT) {
		snprintf(buf, size, "cprof: user stacks: frame_pointers (asked for)");
		return;
	} else if (in->unwind_status) {
		snprintf(
			buf, size,
			"cprof: user stacks: frame_pointers (the unwinder could not be loaded: %s)",
			strerror(-in->unwind_status));
		return;
	}
	if (!off)
		appendf(buf, size, &off, "cprof: user stacks: cfi;");
	appendf(buf, size, &off, " walked %" PRIu64 ": %s %" PRIu64, in->walked,
		stack_walk__stop_token(CPROF_STOP_NONE), in->walk_stops[CPROF_STOP_NONE]);
	n = summary_stops_by_count(in, order);
	for (i = 0; i < n; i++)
		appendf(buf, size, &off, ", %s %" PRIu64, stack_walk__stop_token(order[i]),
			in->walk_stops[order[i]]);
	appendf(buf, size, &off, "; samples ending in a truncation marker %" PRIu64,
		in->truncated_samples);
	if (in->truncated_who[0])
		appendf(buf, size, &off, " (stopped most in: %s)", in->truncated_who);
	appendf(buf, size, &off, "; not walked, by frame pointers (taken in the kernel) %" PRIu64,
		in->fp_user);
}

/* Why user stacks were walked from stack copies, not in the kernel; "" when none were. */
void summary_copy_causes_comment(char *buf, size_t size, const struct summary_info *in)
{
	buf[0] = '\0';
	if (in->stats[CPROF_STAT_COPIES] && !in->copy_walks)
		snprintf(buf, size,
			 "cprof: stack copies %" PRIu64 ": process_not_followed %" PRIu64
			 ", walk_not_loaded %" PRIu64 ", table_not_built %" PRIu64
			 ", mapping_not_seen %" PRIu64,
			 in->stats[CPROF_STAT_COPIES], in->stats[CPROF_STAT_COPY_NEW],
			 in->stats[CPROF_STAT_COPY_EARLY], in->stats[CPROF_STAT_COPY_NO_TABLE],
			 in->stats[CPROF_STAT_COPY_YOUNG]);
}

/*
 * Why samples were walked in user space from stack copies, not in the
 * kernel, the causes the BPF side counted: " (N because ..., ...)".
 */
void summary_print_copy_causes(FILE *f, const struct summary_info *in)
{
	static const struct {
		int stat;
		const char *why;
	} causes[] = {
		{CPROF_STAT_COPY_YOUNG, "the process was new: code it had just mapped"},
		{CPROF_STAT_COPY_NO_TABLE, "its file's table was not built yet"},
		{CPROF_STAT_COPY_NEW, "cprof had not followed the process yet"},
		{CPROF_STAT_COPY_EARLY, "the in-kernel walk was not loaded yet"},
	};
	const char *sep = " (";
	size_t i;

	for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		if (!in->stats[causes[i].stat])
			continue;
		fprintf(f, "%s%" PRIu64 " because %s", sep, in->stats[causes[i].stat],
			causes[i].why);
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', f);
}

/*
 * "debuginfod: 3 debug files asked for: 1 downloaded, 2 from the cache; 1
 * failed: 1 not found", or "" when none was asked for.
 */
/* " (REASON N, ...)": the reasons counted from stat first, in lib/proc_file.h's order. */
static void reasons(char *buf, size_t size, const struct summary_info *in, int first, int nreasons)
{
	size_t len = strlen(buf);
	const char *sep = " (";
	int i;

	for (i = 0; i < nreasons; i++) {
		if (!in->sym[first + i])
			continue;
		snprintf(buf + len, size - len, "%s%s %" PRIu64, sep,
			 proc_file__refusal_name(PROC_FILE_LINK + i), in->sym[first + i]);
		len = strlen(buf);
		sep = ", ";
	}
	if (*sep == ',')
		snprintf(buf + len, size - len, ")");
}

static uint64_t sum(const uint64_t *v, int n)
{
	uint64_t t = 0;

	while (n--)
		t += v[n];
	return t;
}

/*
 * The share of samples with an inlined function in a frame, and why
 * others may have none: files whose .debug_info was not read, units
 * skipped (only when there were some).
 */
static void inlines_sentence(char *buf, size_t size, size_t *off, const struct summary_info *in,
			     uint64_t all)
{
	const uint64_t *v = &in->sym[SYM_STAT_INLINE_UNITS_BAD];

	appendf(buf, size, off, "; inlined functions in %" PRIu64 " (%.1f%%)",
		in->line_samples[SYM_LINE_INLINED],
		summary_pct(in->line_samples[SYM_LINE_INLINED], all));
	if (sum(v, 4))
		appendf(buf, size, off,
			"; .debug_info not read in %" PRIu64 " files, units skipped: malformed "
			"%" PRIu64 ", unsupported %" PRIu64 ", capped %" PRIu64,
			in->sym[SYM_STAT_INLINE_FILES_UNREAD], v[0], v[1], v[2]);
}

/*
 * "source lines: ..." with what the leaf user frames got, and the line
 * table units skipped when there were some (a comment stays under 200
 * characters).
 */
void summary_lines_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const uint64_t *n = in->line_samples;
	uint64_t all = sum(n, SYM_LINE_INLINED);
	size_t off = 0;

	appendf(buf, size, &off,
		"source lines: %" PRIu64 " of %" PRIu64 " user samples (%.1f%%) have one at the "
		"leaf; none: no symbol %" PRIu64 ", no debug info %" PRIu64 ", no row %" PRIu64
		", unreadable %" PRIu64 ", refused %" PRIu64 ", not zlib %" PRIu64
		", cut off %" PRIu64,
		n[SYM_LINE_FOUND], all, summary_pct(n[SYM_LINE_FOUND], all), n[SYM_LINE_NOT_ASKED],
		n[SYM_LINE_NO_DEBUG], n[SYM_LINE_NO_ROW], n[SYM_LINE_UNREADABLE],
		n[SYM_LINE_REFUSED], n[SYM_LINE_UNSUPPORTED], n[SYM_LINE_CUT_OFF]);
	if (in->sym[SYM_STAT_LINE_UNITS_BAD] + in->sym[SYM_STAT_LINE_UNITS_UNSUPPORTED] +
	    in->sym[SYM_STAT_LINE_UNITS_CAPPED])
		appendf(buf, size, &off,
			"; line table units skipped: malformed %" PRIu64 ", unsupported %" PRIu64
			", capped %" PRIu64,
			in->sym[SYM_STAT_LINE_UNITS_BAD], in->sym[SYM_STAT_LINE_UNITS_UNSUPPORTED],
			in->sym[SYM_STAT_LINE_UNITS_CAPPED]);
	if (in->inlines)
		inlines_sentence(buf, size, &off, in, all);
}

void summary_print_lines(FILE *f, const struct summary_info *in)
{
	char line[640];

	if (!in->lines)
		return;
	summary_lines_sentence(line, sizeof(line), in);
	fprintf(f, "cprof: %s\n", line);
}

/*
 * Files opened on a process's behalf that its rule refused or capped
 * (lib/proc_file.h): "" when none, unless always.
 */
void summary_refusals_sentence(char *buf, size_t size, const struct summary_info *in, bool always)
{
	uint64_t maps = sum(&in->sym[SYM_STAT_PERF_MAP_REFUSED_LINK], 3);
	uint64_t dbg = sum(&in->sym[SYM_STAT_DEBUG_REFUSED_LINK], 4);
	size_t len;

	*buf = '\0';
	if (!always && !maps && !dbg && !in->sym[SYM_STAT_PERF_MAPS_CAPPED] &&
	    !in->sym[SYM_STAT_PERF_MAP_READS_POSTPONED] &&
	    !in->sym[SYM_STAT_PERF_MAPS_OVER_BUDGET] && !in->sym[SYM_STAT_DEBUG_CRC_STOPPED])
		return;
	snprintf(buf, size, "perf maps refused %" PRIu64, maps);
	reasons(buf, size, in, SYM_STAT_PERF_MAP_REFUSED_LINK, 3);
	len = strlen(buf);
	snprintf(buf + len, size - len,
		 ", capped (only their first 16 MiB or 256Ki lines read) %" PRIu64
		 ", reads put off to the next drain (0.1 s of reading per drain) %" PRIu64
		 ", not read (all maps held 128 MiB) %" PRIu64 "; debug files refused %" PRIu64,
		 in->sym[SYM_STAT_PERF_MAPS_CAPPED], in->sym[SYM_STAT_PERF_MAP_READS_POSTPONED],
		 in->sym[SYM_STAT_PERF_MAPS_OVER_BUDGET], dbg);
	reasons(buf, size, in, SYM_STAT_DEBUG_REFUSED_LINK, 4);
	len = strlen(buf);
	snprintf(buf + len, size - len, ", not checked (the run ended during their CRC) %" PRIu64,
		 in->sym[SYM_STAT_DEBUG_CRC_STOPPED]);
}

/*
 * Perf maps read when a profile was finished, of processes that exited or
 * of JVMs asked for theirs (--jvm-perf-map), and what was not read: "" when
 * nothing was tried.
 */
void summary_end_maps_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const uint64_t *v = in->sym;
	size_t len;

	*buf = '\0';
	if (!sum(&v[SYM_STAT_EXIT_MAPS_READ], SYM_STAT_JVMS_UNASKED - SYM_STAT_EXIT_MAPS_READ + 1))
		return;
	snprintf(buf, size,
		 "perf maps of processes that exited, read at the end %" PRIu64
		 ", frames they (or JVMs) named %" PRIu64
		 ", not read (in another mount namespace) %" PRIu64
		 ", not read (the end's 0.3 s spent) %" PRIu64
		 ", refused (older than the process, or its PID's next one's) %" PRIu64,
		 v[SYM_STAT_EXIT_MAPS_READ], v[SYM_STAT_EXIT_FRAMES_NAMED],
		 v[SYM_STAT_EXIT_MAPS_OTHER_NS], v[SYM_STAT_EXIT_MAPS_LATE],
		 v[SYM_STAT_PERF_MAPS_NOT_ITS]);
	if (!v[SYM_STAT_JVMS_ASKED] && !v[SYM_STAT_JVMS_UNASKED])
		return;
	len = strlen(buf);
	snprintf(buf + len, size - len,
		 "; JVMs asked for their perf map %" PRIu64 ", no answer or refused %" PRIu64
		 ", not asked (the end's 1 s spent) %" PRIu64,
		 v[SYM_STAT_JVMS_ASKED], v[SYM_STAT_JVMS_FAILED], v[SYM_STAT_JVMS_UNASKED]);
}

void summary_debuginfod_sentence(char *buf, size_t size, const struct summary_info *in)
{
	const struct debuginfod_counts *c = &in->fetched;
	uint64_t asked = c->unfinished, failed = 0;
	size_t len;
	int i;

	*buf = '\0';
	for (i = 0; i < DEBUGINFOD_NSTATUS; i++) {
		asked += c->status[i];
		if (i != DEBUGINFOD_DOWNLOADED && i != DEBUGINFOD_FROM_CACHE)
			failed += c->status[i];
	}
	if (!in->debuginfod || !asked)
		return;
	snprintf(buf, size,
		 "debuginfod: %" PRIu64 " debug %s asked for: %" PRIu64 " downloaded, %" PRIu64
		 " from the cache",
		 asked, plural(asked, "file", "files"), c->status[DEBUGINFOD_DOWNLOADED],
		 c->status[DEBUGINFOD_FROM_CACHE]);
	for (i = 0; i < DEBUGINFOD_NSTATUS; i++) {
		if (i == DEBUGINFOD_DOWNLOADED || i == DEBUGINFOD_FROM_CACHE || !c->status[i])
			continue;
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s%" PRIu64 " %s", failed ? "; failed: " : ", ",
			 c->status[i], debuginfod_status__name(i));
		failed = 0;
	}
	len = strlen(buf);
	if (c->unfinished)
		snprintf(buf + len, size - len,
			 "; %" PRIu64
			 " still downloading when the run ended (--debuginfod-timeout)",
			 c->unfinished);
	len = strlen(buf);
	if (c->spent.pruned)
		snprintf(buf + len, size - len,
			 "; the cache kept under its cap: %" PRIu64 " %s used longest ago removed "
			 "(%" PRIu64 " bytes)",
			 c->spent.pruned, plural(c->spent.pruned, "file", "files"),
			 c->spent.pruned_bytes);
}

/* What the run's caps and deadline kept out (lib/load_budget.h), or "". */
void summary_budget_sentence(char *buf, size_t size, const struct summary_info *in)
{
	size_t off = 0;

	*buf = '\0';
	if (in->symtabs_refused || in->symtabs_abandoned || in->symtabs_over_held)
		appendf(buf, size, &off,
			"symbol tables refused: %" PRIu64
			" over the cap of %u symbols or %u MiB of "
			"names, %" PRIu64 " not loaded as the run was over, %" PRIu64
			" not loaded while other files held %u symbols",
			in->symtabs_refused, LOAD_MAX_SYMBOLS, LOAD_MAX_NAME_BYTES >> 20,
			in->symtabs_abandoned, in->symtabs_over_held, LOAD_MAX_HELD_SYMBOLS);
	if (in->cfi_refused || in->cfi_abandoned)
		appendf(buf, size, &off,
			"%sunwind tables refused: %" PRIu64
			" with CFI over the cap of %llu MiB, %u "
			"FDEs or %u rows, %" PRIu64 " not built as the run was over (%" PRIu64
			" of them left behind, still reading their file)",
			off ? "; " : "", in->cfi_refused, LOAD_MAX_CFI_BYTES >> 20,
			LOAD_MAX_CFI_FDES, LOAD_MAX_CFI_ROWS, in->cfi_abandoned,
			in->cfi_left_behind);
	if (in->files_cut_short)
		appendf(buf, size, &off,
			"%sfiles truncated while cprof read them: %" PRIu64
			" (their symbols or unwind tables are missing)",
			off ? "; " : "", in->files_cut_short);
	if (in->regions_over_cap)
		appendf(buf, size, &off,
			"%scode mappings without an unwind table: %" PRIu64
			" past the first %u of their process",
			off ? "; " : "", in->regions_over_cap, LOAD_MAX_EAGER_MAPPINGS);
}
