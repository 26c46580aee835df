// SPDX-License-Identifier: MIT
/*
 * unwind_tables FILE...: builds the compact unwind table of each ELF file
 * with one shared rule dictionary, as a whole-system run would, and
 * reports what bench/run's unwind-table figure needs: rows, bytes per row,
 * build time per file, distinct rules, the CFI rows the unwinder
 * cannot run, by reason, and those it runs only where a register is known. Files that are not
 * x86_64/AArch64 ELF or have no CFI are counted and skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/elf_cfi.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

static const char *const stop_names[CPROF_STOP_MAX] = {
	[CPROF_STOP_NO_CFI] = "no_cfi",
	[CPROF_STOP_BAD_CFI] = "bad_cfi",
	[CPROF_STOP_UNSUPPORTED] = "unsupported",
	[CPROF_STOP_NO_RULE_ROOM] = "no_rule_room",
};

struct totals {
	unsigned long files, skipped;
	struct unwind_table_stats st;
	uint64_t rows, bytes;
	double ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void add_stats(struct unwind_table_stats *to, const struct unwind_table_stats *s)
{
	int i;

	to->fdes += s->fdes;
	to->bad_entries += s->bad_entries;
	to->cfi_rows += s->cfi_rows;
	to->overlaps += s->overlaps;
	to->padding_gaps += s->padding_gaps;
	to->cfa_in_reg += s->cfa_in_reg;
	for (i = 0; i < CPROF_STOP_MAX; i++)
		to->stops[i] += s->stops[i];
}

static int one_file(const char *path, struct unwind_rules *rules, struct totals *t, bool verbose)
{
	struct unwind_table_stats st;
	struct unwind_sources src;
	struct unwind_table *tab;
	struct elf_cfi cfi;
	double t0, ms;
	Elf *elf = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t0 = now_ms();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? elf_cfi__read(elf, &cfi) : -ENOEXEC;
	if (!err) {
		elf_cfi__sources(&cfi, NULL, &src);
		err = unwind_table__build(&src, rules, &tab, &st);
	}
	ms = now_ms() - t0;
	if (!err) {
		t->files++;
		t->rows += tab->nrows;
		t->bytes += unwind_table__bytes(tab);
		t->ms += ms;
		add_stats(&t->st, &st);
		if (verbose)
			printf("%-60s fdes %7" PRIu64 " cfi_rows %8" PRIu64 " rows %8u bytes %9zu "
			       "build %.2f ms\n",
			       path, st.fdes, st.cfi_rows, tab->nrows, unwind_table__bytes(tab),
			       ms);
		unwind_table__free(tab);
	} else {
		t->skipped++;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

static void report(const struct totals *t, const struct unwind_rules *rules)
{
	uint64_t stopped = 0;
	int i;

	for (i = 1; i < CPROF_STOP_MAX; i++)
		if (i != CPROF_STOP_NO_CFI)
			stopped += t->st.stops[i];
	printf("files %lu (skipped %lu: not x86_64/aarch64 ELF, or no CFI)\n", t->files,
	       t->skipped);
	printf("fdes %" PRIu64 " bad_entries %" PRIu64 " overlaps %" PRIu64
	       " padding_gaps_without_row %" PRIu64 "\n",
	       t->st.fdes, t->st.bad_entries, t->st.overlaps, t->st.padding_gaps);
	printf("cfi_rows %" PRIu64 " table_rows %" PRIu64 " table_bytes %" PRIu64 "\n",
	       t->st.cfi_rows, t->rows, t->bytes);
	printf("bytes_per_table_row %.3f bytes_per_cfi_row %.3f\n",
	       t->rows ? (double)t->bytes / t->rows : 0,
	       t->st.cfi_rows ? (double)t->bytes / t->st.cfi_rows : 0);
	printf("rules %zu (%zu bytes)\n", unwind_rules__count(rules),
	       unwind_rules__count(rules) * sizeof(struct cprof_unwind_rule));
	printf("cfi_rows_unrunnable %" PRIu64 " (%.4f%%):", stopped,
	       t->st.cfi_rows ? 100.0 * stopped / t->st.cfi_rows : 0);
	for (i = 1; i < CPROF_STOP_MAX; i++)
		if (stop_names[i] && t->st.stops[i])
			printf(" %s %" PRIu64, stop_names[i], t->st.stops[i]);
	printf("\ncfi_rows_cfa_in_register %" PRIu64 " (%.4f%%): followed where the register "
	       "is known (the leaf, and callers of frames that keep it)\n",
	       t->st.cfa_in_reg, t->st.cfi_rows ? 100.0 * t->st.cfa_in_reg / t->st.cfi_rows : 0);
	printf("build_ms_total %.1f\n", t->ms);
}

int main(int argc, char **argv)
{
	struct unwind_rules *rules;
	struct totals t = {0};
	bool verbose = false;
	int i = 1;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = true;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: unwind_tables [-v] FILE...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	if (unwind_rules__new(&rules))
		return 1;
	for (; i < argc; i++)
		one_file(argv[i], rules, &t, verbose);
	report(&t, rules);
	unwind_rules__free(rules);
	return 0;
}
