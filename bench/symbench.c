// SPDX-License-Identifier: MIT
/*
 * Symbolization benchmark for bench/run (figure 6), linked against cprof's
 * own objects so that it times exactly the code the profiler runs: how long
 * loading a symbol table takes (open, read, sort), and how many addresses a
 * loaded table resolves per second. Addresses are drawn at random from the
 * file's .text (or the kernel's _stext.._etext) with a fixed seed, so runs
 * are comparable.
 *
 * The kernel table is streamed (resolve/ksyms.h). A profile's kernel frames are
 * named at its end by one read of kallsyms that keeps only their symbols:
 * once_ms and once_peak_kb time that for -k random kernel addresses (about
 * what a 10 s whole-system profile holds), measured first so that its peak
 * is its own. Continuous mode keeps the table (8 bytes a symbol: load_ms,
 * peak_kb, held_kb, the lookups) and reads the names of symbols hit later
 * in a name pass: each repeat runs one for the symbols of -k random
 * addresses, timed apart as name_ms; the memory figures include it.
 *
 * Memory is read from /proc/self/status: how much the peak RSS grew while
 * loading (VmHWM; inputs are measured in the order given, so a later input
 * only shows what it adds above the earlier peaks: give one input per run
 * for its own peak) and how much a loaded table holds (VmRSS with the table
 * minus before).
 *
 * Usage: symbench [-r REPEATS] [-n LOOKUPS] [-k NAMES] ELF-FILE...|kallsyms
 * Prints one line per input (the last four fields are 0 for ELF files):
 *   NAME symbols N load_ms MEDIAN lookups N resolved N per_s RATE peak_kb N held_kb N
 *   names N name_ms MEDIAN once_ms MEDIAN once_peak_kb N
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resolve/elf_symtab.h"
#include "resolve/ksyms.h"

#define MAX_REPEATS 101

struct text_range {
	uint64_t start;
	uint64_t end;
};

/* One table, either kind: what the timed loops need without caring which. */
struct table {
	struct elf_symtab *elf;
	struct ksyms *ksyms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* xorshift64*: cheap next to a lookup, and the same sequence every run. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ull;
}

/* A "Vm...:" field of /proc/self/status in kB, or 0. */
static long status_kb(const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long kb = 0;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			kb = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int elf_text_range(const char *path, struct text_range *r)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;
	int fd, err = -ENOENT;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -EINVAL;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".text") == 0 && sh.sh_size) {
			r->start = sh.sh_addr;
			r->end = sh.sh_addr + sh.sh_size;
			err = 0;
			break;
		}
	}
out:
	elf_end(elf);
	close(fd);
	return err;
}

static int kernel_text_range(struct text_range *r)
{
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f;

	r->start = r->end = 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && !(r->start && r->end)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (strcmp(name, "_stext") == 0)
			r->start = addr;
		else if (strcmp(name, "_etext") == 0)
			r->end = addr;
	}
	fclose(f);
	if (!r->start || r->end <= r->start)
		return -ENOENT; /* kptr_restrict hides the addresses */
	return 0;
}

/*
 * The kernel table's name pass for the symbols of the first `names` random
 * text addresses that have one; returns how many it named, or -errno.
 */
static long name_pass(struct table *t, const struct text_range *text, long names, double *ms)
{
	uint64_t state = 0x2545f4914f6cdd1dull, span = text->end - text->start;
	uint32_t *want = calloc(names, sizeof(*want));
	long tries, n = 0, named = 0, i;
	const char *name;
	size_t before;
	double t0;
	int err = 0;

	if (!want)
		return -ENOMEM;
	for (tries = 0; tries < 100 * names && n < names; tries++) {
		if (ksyms__find(t->ksyms, text->start + next_random(&state) % span, &want[n]))
			continue;
		/* A symbol already wanted does not count twice. */
		before = ksyms__wanted(t->ksyms);
		err = ksyms__want_name(t->ksyms, want[n]);
		if (err)
			goto cleanup;
		n += ksyms__wanted(t->ksyms) > before;
	}
	t0 = now_ms();
	err = ksyms__name_pass(t->ksyms);
	*ms = now_ms() - t0;
	for (i = 0; i < n && !err; i++)
		named += ksyms__name(t->ksyms, want[i], &name) == 0;
cleanup:
	free(want);
	return err ? err : named;
}

/*
 * A one-shot profile's read: the symbols of `names` random text addresses,
 * named, nothing else kept. Returns how many had a name, or -errno.
 */
static long read_once(const struct text_range *text, long names, double *ms)
{
	uint64_t state = 0x2545f4914f6cdd1dull, span = text->end - text->start;
	uint64_t *addrs = calloc(names ? names : 1, sizeof(*addrs));
	struct ksyms *k = NULL;
	long i, named = 0;
	const char *name;
	uint32_t idx;
	double t0;
	int err;

	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < names; i++)
		addrs[i] = text->start + next_random(&state) % span;
	t0 = now_ms();
	err = ksyms__load_for(NULL, addrs, names, true, &k);
	*ms = now_ms() - t0;
	for (i = 0; i < names && !err; i++)
		named += ksyms__find(k, addrs[i], &idx) == 0 && ksyms__name(k, idx, &name) == 0;
	ksyms__free(k);
	free(addrs);
	return err ? err : named;
}

static int table_load(const char *what, struct table *t, size_t *nsyms)
{
	int err;

	memset(t, 0, sizeof(*t));
	if (strcmp(what, "kallsyms") == 0) {
		err = ksyms__load(NULL, &t->ksyms);
		if (!err)
			*nsyms = ksyms__count(t->ksyms);
		return err;
	}
	err = elf_symtab__open(what, &t->elf);
	/* The table is loaded lazily: counting its symbols loads it. */
	if (!err)
		*nsyms = elf_symtab__symbol_count(t->elf);
	return err;
}

static void table_free(struct table *t)
{
	elf_symtab__free(t->elf);
	ksyms__free(t->ksyms);
}

static bool table_resolves(const struct table *t, uint64_t addr)
{
	uint32_t idx;

	if (t->ksyms)
		return ksyms__find(t->ksyms, addr, &idx) == 0;
	return elf_symtab__lookup(t->elf, addr, NULL) != NULL;
}

static int bench_one(const char *what, int repeats, long lookups, long names)
{
	double ms[MAX_REPEATS], name_ms[MAX_REPEATS] = {0}, once_ms[MAX_REPEATS] = {0}, t0, elapsed;
	struct text_range text;
	struct table t;
	uint64_t state = 0x9e3779b97f4a7c15ull, span;
	size_t nsyms = 0;
	long i, resolved = 0, hwm0, rss0, held_kb = 0, named = 0, once_peak_kb = 0, once;
	int r, err;

	err = strcmp(what, "kallsyms") ? elf_text_range(what, &text) : kernel_text_range(&text);
	if (err) {
		fprintf(stderr, "symbench: %s: no text range: %s\n", what, strerror(-err));
		return err;
	}
	hwm0 = status_kb("VmHWM");
	rss0 = status_kb("VmRSS");
	for (r = 0; !strcmp(what, "kallsyms") && r < repeats; r++) {
		once = read_once(&text, names, &once_ms[r]);
		if (once < 0) {
			fprintf(stderr, "symbench: %s: cannot read: %s\n", what,
				strerror((int)-once));
			return (int)once;
		}
		once_peak_kb = status_kb("VmHWM") - hwm0;
	}
	qsort(once_ms, repeats, sizeof(once_ms[0]), cmp_double);
	for (r = 0; r < repeats; r++) {
		t0 = now_ms();
		err = table_load(what, &t, &nsyms);
		ms[r] = now_ms() - t0;
		if (err) {
			fprintf(stderr, "symbench: %s: cannot load: %s\n", what, strerror(-err));
			return err;
		}
		if (t.ksyms && names)
			named = name_pass(&t, &text, names, &name_ms[r]);
		if (named < 0) {
			fprintf(stderr, "symbench: %s: name pass: %s\n", what,
				strerror((int)-named));
			table_free(&t);
			return (int)named;
		}
		if (r == 0)
			held_kb = status_kb("VmRSS") - rss0;
		/* The last table stays for the lookups. */
		if (r + 1 < repeats)
			table_free(&t);
	}
	qsort(ms, repeats, sizeof(ms[0]), cmp_double);
	qsort(name_ms, repeats, sizeof(name_ms[0]), cmp_double);

	span = text.end - text.start;
	t0 = now_ms();
	for (i = 0; i < lookups; i++)
		resolved += table_resolves(&t, text.start + next_random(&state) % span);
	elapsed = now_ms() - t0;
	table_free(&t);

	printf("%s symbols %zu load_ms %.3f lookups %ld resolved %ld per_s %.0f", what, nsyms,
	       ms[repeats / 2], lookups, resolved, elapsed > 0 ? lookups / (elapsed / 1e3) : 0.0);
	printf(" peak_kb %ld held_kb %ld names %ld name_ms %.3f once_ms %.3f once_peak_kb %ld\n",
	       status_kb("VmHWM") - hwm0, held_kb, named, name_ms[repeats / 2],
	       once_ms[repeats / 2], once_peak_kb);
	return 0;
}

int main(int argc, char **argv)
{
	long lookups = 1000000, names = 1000;
	int repeats = 5, opt, i, failed = 0;
	char *end;

	while ((opt = getopt(argc, argv, "r:n:k:")) != -1) {
		switch (opt) {
		case 'r':
			repeats = (int)strtol(optarg, &end, 10);
			if (*end || repeats < 1 || repeats > MAX_REPEATS)
				goto usage;
			break;
		case 'n':
			lookups = strtol(optarg, &end, 10);
			if (*end || lookups < 1)
				goto usage;
			break;
		case 'k':
			names = strtol(optarg, &end, 10);
			if (*end || names < 0 || names > 1000000)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	elf_version(EV_CURRENT);
	for (i = optind; i < argc; i++)
		failed |= bench_one(argv[i], repeats, lookups, names) != 0;
	return failed;
usage:
	fprintf(stderr,
		"usage: symbench [-r REPEATS (1-%d)] [-n LOOKUPS] [-k NAMES] "
		"ELF-FILE...|kallsyms\n",
		MAX_REPEATS);
	return 2;
}
