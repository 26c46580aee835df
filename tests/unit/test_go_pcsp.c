// SPDX-License-Identifier: MIT
/*
 * Unwind rules from Go's pcsp tables (src/unwind/go_pcsp.c) against Go's
 * own CFI. Go's linker writes .debug_frame from the same tables, so the
 * unstripped build of the unwinding test's fixture (fixtures/src/unwind/
 * go_spin.go, built here with Debian's Go for x86_64 and, cross-built, for
 * AArch64) gives both: at every address of every Go function that both
 * cover, the table from .debug_frame and the table from pcsp must give the
 * same CFA and return address (the frame pointer, which Go's CFI leaves
 * unsaid, is counted apart). Then the stripped build: a table, whose
 * leaves set up no frame and whose main.spinMid does; then corrupt tables:
 * offsets out of range, tables that run off the end, a byte budget spent.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/go_pclntab.h"
#include "test.h"
#include "unwind/elf_cfi.h"
#include "unwind/go_pcsp.h"
#include "unwind/unwind_rule.h"
#include "unwind/unwind_table.h"

/* go_spin.go built as NAME in the scratch directory (once per run), with ENV and FLAGS. */
static const char *build_spin(const char *name, const char *env, const char *flags)
{
	static char out[4][512];
	static int next;
	char *path = out[next++ % 4], dir[300], cmd[4096];

	if (system("command -v go >/dev/null 2>&1") != 0)
		SKIP("go is not installed (Debian: golang-go, which ./build.sh test installs)");
	snprintf(dir, sizeof(dir), "%s/go_pcsp", test_tmp_dir());
	mkdir(dir, 0700);
	snprintf(path, sizeof(out[0]), "%s/%s", dir, name);
	if (!access(path, X_OK))
		return path;
	snprintf(
		cmd, sizeof(cmd),
		"env GOFLAGS= GO111MODULE= GOENV=off CGO_ENABLED=0 HOME='%s' GOCACHE='%s/cache' %s "
		"go build %s -o '%s' '%s/src/unwind/go_spin.go' >'%s.log' 2>&1",
		dir, dir, env, flags, path, test_fixtures_dir(), path);
	if (system(cmd) != 0)
		test_fail(__FILE__, __LINE__, "go build of %s failed: see %s.log", name, path);
	return path;
}

/* A file mapped as the table cache maps it. */
struct mapped {
	int fd;
	Elf *elf;
	const uint8_t *image;
	size_t size;
};

static void map_file(const char *path, struct mapped *m)
{
	m->fd = open(path, O_RDONLY);
	CHECK(m->fd >= 0);
	elf_version(EV_CURRENT);
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	CHECK(m->elf != NULL);
	m->image = (const uint8_t *)elf_rawfile(m->elf, &m->size);
	CHECK(m->image != NULL);
}

static void unmap_file(struct mapped *m)
{
	elf_end(m->elf);
	close(m->fd);
}

static struct unwind_table *build_table(const struct unwind_sources *src,
					struct unwind_rules *rules, struct unwind_table_stats *st)
{
	struct unwind_table *t;

	CHECK_INT(unwind_table__build(src, rules, &t, st), ==, 0);
	return t;
}

/* Address by address, what the two tables say. */
struct agreement {
	uint64_t both;	   /* addresses where both give a CFA from SP */
	uint64_t same;	   /* ... and the same CFA and return address */
	uint64_t fp_diff;  /* ... with the frame pointer said differently */
	uint64_t special;  /* where pcsp's rule ends or stops the walk (TOPFRAME, SPWRITE) */
	uint64_t no_debug; /* where .debug_frame has no rule */
	uint64_t funcs;
};

static void compare(const struct unwind_table *dwarf, const struct unwind_table *go,
		    const struct unwind_rules *rules, const struct go_pcsp *g, struct agreement *a)
{
	const struct cprof_unwind_rule *all = unwind_rules__all(rules), *x, *y;
	uint64_t begin, end, pc;
	size_t i;

	for (i = 0; i < go_pcsp__count(g); i++, a->funcs++) {
		go_pcsp__range(g, i, &begin, &end);
		for (pc = begin; pc < end; pc++) {
			x = &all[unwind_table__lookup(dwarf, pc)];
			y = &all[unwind_table__lookup(go, pc)];
			if (x->cfa_kind != CPROF_CFA_SP) {
				a->no_debug++;
				continue;
			}
			if (y->cfa_kind != CPROF_CFA_SP) {
				a->special++;
				continue;
			}
			a->both++;
			if (x->cfa_off == y->cfa_off && x->ra_kind == y->ra_kind &&
			    (x->ra_kind != CPROF_RA_AT_CFA || x->ra_off == y->ra_off))
				a->same++;
			if (x->fp_kind != y->fp_kind || x->fp_off != y->fp_off)
				a->fp_diff++;
		}
	}
}

static void agree_with_debug_frame(const char *path, const char *arch)
{
	struct unwind_sources dsrc, gsrc = {0};
	struct unwind_table_stats dst, gst;
	struct unwind_table *dt, *gt;
	struct unwind_rules *rules;
	struct agreement a = {0};
	struct elf_cfi cfi;
	struct mapped m;

	map_file(path, &m);
	CHECK_INT(elf_cfi__read(m.elf, &cfi), ==, 0);
	CHECK(cfi.has_debug_frame && !cfi.has_eh_frame);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	elf_cfi__sources(&cfi, NULL, &dsrc);
	dt = build_table(&dsrc, rules, &dst);
	gsrc.arch = cfi.arch;
	gsrc.is_padding = dsrc.is_padding;
	gsrc.padding_arg = dsrc.padding_arg;
	CHECK_INT(go_pcsp__open(m.image, m.size, cfi.arch, &gsrc.go), ==, 0);
	gt = build_table(&gsrc, rules, &gst);
	CHECK_INT(gst.bad_entries, ==, 0);
	CHECK_INT(gst.fdes, ==, 0);
	CHECK(gst.go_funcs > 1000);
	compare(dt, gt, rules, gsrc.go, &a);
	fprintf(stderr,
		"figure go_pcsp %s: %llu functions; at %llu addresses both give a CFA from SP, "
		"%llu (%.3f%%) the same CFA and return address, %llu a different frame pointer; "
		"%llu where pcsp ends or stops the walk, %llu without .debug_frame; rows: "
		"%u from .debug_frame (%llu FDEs), %u from pcsp\n",
		arch, (unsigned long long)a.funcs, (unsigned long long)a.both,
		(unsigned long long)a.same, a.both ? 100.0 * (double)a.same / (double)a.both : 0,
		(unsigned long long)a.fp_diff, (unsigned long long)a.special,
		(unsigned long long)a.no_debug, dt->nrows, (unsigned long long)dst.fdes, gt->nrows);
	CHECK(a.both > 100000);
	CHECK_U64(a.same, ==, a.both);
	/* Only the few runtime functions flagged TOPFRAME or SPWRITE. */
	CHECK(a.special < a.both / 50);
	unwind_table__free(dt);
	unwind_table__free(gt);
	go_pcsp__free(gsrc.go);
	unwind_rules__free(rules);
	unmap_file(&m);
}

TEST(go_pcsp_agrees_with_debug_frame_x86_64)
{
	agree_with_debug_frame(build_spin("spin_amd64", "GOARCH=amd64", ""), "x86_64");
}

TEST(go_pcsp_agrees_with_debug_frame_arm64)
{
	agree_with_debug_frame(build_spin("spin_arm64", "GOARCH=arm64", ""), "arm64");
}

/* The rule in the middle of the function named name. */
static struct cprof_unwind_rule rule_in(const struct go_pclntab *names,
					const struct unwind_table *t,
					const struct unwind_rules *rules, const char *name,
					uint64_t *start, uint64_t *end)
{
	const char *n;
	size_t i;

	for (i = 0; i < go_pclntab__count(names); i++) {
		CHECK_INT(go_pclntab__func(names, i, start, end, &n), ==, 0);
		if (!strcmp(n, name))
			return unwind_rules__all(
				rules)[unwind_table__lookup(t, (*start + *end) / 2)];
	}
	test_fail(__FILE__, __LINE__, "no function %s", name);
}

TEST(go_pcsp_stripped_program)
{
	struct unwind_sources src = {.arch = CFI_ARCH_X86_64};
	struct cprof_unwind_rule leaf, mid, top, sw;
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	struct go_pclntab *names;
	struct unwind_table *t;
	struct elf_cfi cfi;
	struct mapped m;
	uint64_t start, end;

	map_file(build_spin("spin_stripped", "GOARCH=amd64", "-ldflags='-s -w'"), &m);
	/* No CFI at all: without pcsp, frame pointers only. */
	CHECK_INT(elf_cfi__read(m.elf, &cfi), ==, 0);
	CHECK(!cfi.has_debug_frame && !cfi.has_eh_frame);
	CHECK_INT(go_pclntab__from_elf(m.image, m.size, &names), ==, 0);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(go_pcsp__open(m.image, m.size, CFI_ARCH_X86_64, &src.go), ==, 0);
	t = build_table(&src, rules, &st);
	leaf = rule_in(names, t, rules, "main.spinLeafA", &start, &end);
	/* The leaf pushes nothing: the return address at SP, BP its caller's. */
	CHECK_INT(leaf.cfa_kind, ==, CPROF_CFA_SP);
	CHECK_INT(leaf.cfa_off, ==, 8);
	CHECK_INT(leaf.ra_off, ==, -8);
	CHECK_INT(leaf.fp_kind, ==, CPROF_FP_SAME);
	mid = rule_in(names, t, rules, "main.spinMid", &start, &end);
	CHECK_INT(mid.cfa_kind, ==, CPROF_CFA_SP);
	CHECK(mid.cfa_off > 16);
	CHECK_INT(mid.fp_kind, ==, CPROF_FP_AT_CFA);
	CHECK_INT(mid.fp_off, ==, -16);
	/* Before its prologue, main.spinMid is a leaf too. */
	CHECK_INT(unwind_rules__all(rules)[unwind_table__lookup(t, start)].cfa_off, ==, 8);
	rule_in(names, t, rules, "runtime.goexit", &start, &end);
	top = unwind_rules__all(rules)[unwind_table__lookup(t, start)];
	CHECK_INT(top.cfa_kind, ==, CPROF_CFA_END);
	sw = rule_in(names, t, rules, "runtime.systemstack", &start, &end);
	CHECK_INT(sw.cfa_kind, ==, CPROF_CFA_STOP);
	CHECK_INT(sw.stop, ==, CPROF_STOP_GO_SWITCH);
	/* The signal handler's return: a signal frame, from the byte before (a return address - 1).
	 */
	CHECK_INT(rule_in(names, t, rules, "runtime.sigreturn", &start, &end).cfa_kind, ==,
		  CPROF_CFA_SIGNAL);
	CHECK_INT(unwind_rules__all(rules)[unwind_table__lookup(t, start - 1)].cfa_kind, ==,
		  CPROF_CFA_SIGNAL);
	CHECK(unwind_rules__all(rules)[unwind_table__lookup(t, start - 2)].cfa_kind !=
	      CPROF_CFA_SIGNAL);
	unwind_table__free(t);
	go_pcsp__free(src.go);
	go_pclntab__free(names);
	unwind_rules__free(rules);
	unmap_file(&m);
}

TEST(go_pcsp_rules_refuse_impossible_frames)
{
	struct cprof_unwind_rule r;

	r = go_pcsp__rule(CFI_ARCH_X86_64, -8, 0);
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_STOP);
	CHECK_INT(r.stop, ==, CPROF_STOP_BAD_CFI);
	r = go_pcsp__rule(CFI_ARCH_X86_64, INT32_MAX, 0);
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_STOP);
	r = go_pcsp__rule(CFI_ARCH_X86_64, 1 << 20, 0);
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_SP);
	CHECK_INT(r.cfa_off, ==, (1 << 20) + 8);
	/* AArch64 keeps LR at the frame's bottom: a rule reaches 32 KiB. */
	r = go_pcsp__rule(CFI_ARCH_AARCH64, 1 << 20, 0);
	CHECK_INT(r.cfa_kind, ==, CPROF_CFA_STOP);
	CHECK_INT(r.stop, ==, CPROF_STOP_UNSUPPORTED);
	r = go_pcsp__rule(CFI_ARCH_AARCH64, 0, 0);
	CHECK_INT(r.ra_kind, ==, CPROF_RA_IN_LR);
	r = go_pcsp__rule(CFI_ARCH_AARCH64, 96, 0);
	CHECK_INT(r.cfa_off, ==, 96);
	CHECK_INT(r.ra_off, ==, -96);
	CHECK_INT(r.fp_off, ==, -104);
}

/* --- corrupt tables ------------------------------------------------------------------------ */

/* The header words of a 1.18+ table in a copy of the stripped program. */
struct copy {
	uint8_t *image;
	size_t size;
	uint8_t *table;
	size_t table_size;
	uint32_t nfunc;
	uint64_t pcln; /* pclnOffset: the function table */
};

static void copy_stripped(struct copy *c)
{
	struct go_pclntab_info info;
	struct go_pclntab *t;

	c->image = test_read_file(build_spin("spin_stripped", "GOARCH=amd64", "-ldflags='-s -w'"),
				  &c->size);
	CHECK_INT(go_pclntab__from_elf(c->image, c->size, &t), ==, 0);
	go_pclntab__info(t, &info);
	go_pclntab__free(t);
	CHECK(info.version >= 118);
	c->table = c->image + info.offset;
	c->table_size = info.size;
	memcpy(&c->nfunc, c->table + 8, 4);
	memcpy(&c->pcln, c->table + 8 + 7 * 8, 8);
}

/* Where function k's pcsp offset is: its record (entryoff, nameoff, args, deferreturn, pcsp). */
static uint8_t *pcsp_field(const struct copy *c, uint32_t k)
{
	uint32_t funcoff;

	memcpy(&funcoff, c->table + c->pcln + 8 * (uint64_t)k + 4, 4);
	return c->table + c->pcln + funcoff + 16;
}

static int count_run(const struct go_pcsp_run *run, void *arg)
{
	(void)run;
	++*(size_t *)arg;
	return 0;
}

static int first_run(const struct go_pcsp_run *run, void *arg)
{
	*(int32_t *)arg = run->sp;
	return 1;
}

/* Every function's table read in turn: 0, or the first error. */
static int read_all(const struct copy *c, uint64_t budget, size_t *runs)
{
	struct go_pclntab *t;
	size_t i;
	int err = 0;

	*runs = 0;
	CHECK_INT(go_pclntab__from_elf(c->image, c->size, &t), ==, 0);
	for (i = 0; !err && i < go_pclntab__count(t); i++)
		err = go_pclntab__pcsp(t, c->table, c->table_size, i, &budget, count_run, runs);
	go_pclntab__free(t);
	return err;
}

/* Function k's first run's SP delta. */
static int one_function(const struct copy *c, uint32_t k, int32_t *sp)
{
	struct go_pclntab *t;
	uint64_t budget = UINT64_MAX;
	int err;

	CHECK_INT(go_pclntab__from_elf(c->image, c->size, &t), ==, 0);
	err = go_pclntab__pcsp(t, c->table, c->table_size, k, &budget, first_run, sp);
	go_pclntab__free(t);
	return err;
}

TEST(go_pcsp_corrupt_tables)
{
	int32_t sp = 0;
	uint32_t k, v, saved;
	struct copy c;
	size_t runs, real_runs;

	copy_stripped(&c);
	CHECK_INT(read_all(&c, UINT64_MAX, &real_runs), ==, 0);
	CHECK(real_runs > c.nfunc);
	/* Other bytes than the table's: refused. */
	k = c.nfunc / 2;
	memcpy(&saved, pcsp_field(&c, k), 4);
	/* An offset past the table. */
	v = (uint32_t)c.table_size;
	memcpy(pcsp_field(&c, k), &v, 4);
	CHECK_INT(read_all(&c, UINT64_MAX, &runs), ==, -EBADMSG);
	/* A varint that runs off the end: the table's last byte made a continuation. */
	c.table[c.table_size - 1] = 0x80;
	v = 0;
	memcpy(&v, c.table + 8 + 6 * 8, 4); /* pctabOffset */
	v = (uint32_t)(c.table_size - 1 - v);
	memcpy(pcsp_field(&c, k), &v, 4);
	CHECK_INT(read_all(&c, UINT64_MAX, &runs), ==, -EBADMSG);
	memcpy(pcsp_field(&c, k), &saved, 4);
	/* A value delta of INT32_MIN from -1: wraps as Go's int32 does (found by the fuzzer). */
	memcpy(&v, c.table + 8 + 6 * 8, 4);
	memcpy(c.table + v + saved, "\xff\xff\xff\xff\x0f\x01\x00", 7);
	CHECK_INT(one_function(&c, k, &sp), ==, 1);
	CHECK_INT(sp, ==, INT32_MAX);
	/* Every function on one table: the bytes read are capped, not the table's size. */
	for (k = 0; k < c.nfunc; k++)
		memcpy(pcsp_field(&c, k), &saved, 4);
	CHECK_INT(read_all(&c, 4096, &runs), ==, -EFBIG);
	CHECK_INT(read_all(&c, UINT64_MAX, &runs), ==, 0);
	free(c.image);
}

TEST(go_pcsp_corrupt_function_has_no_cfi)
{
	struct unwind_sources src = {.arch = CFI_ARCH_X86_64};
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	struct unwind_table *t;
	struct go_pclntab *names;
	uint64_t start, end;
	const char *name;
	struct copy c;
	uint32_t v, k;

	copy_stripped(&c);
	CHECK_INT(go_pclntab__from_elf(c.image, c.size, &names), ==, 0);
	for (k = 0; k < go_pclntab__count(names); k++) {
		CHECK_INT(go_pclntab__func(names, k, &start, &end, &name), ==, 0);
		if (!strcmp(name, "main.spinMid"))
			break;
	}
	/* Named functions and table entries agree here: the program names every one. */
	CHECK_INT(go_pclntab__count(names), ==, c.nfunc);
	v = 0xfffffff0u;
	memcpy(pcsp_field(&c, k), &v, 4);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	CHECK_INT(go_pcsp__open(c.image, c.size, CFI_ARCH_X86_64, &src.go), ==, 0);
	t = build_table(&src, rules, &st);
	CHECK_INT(st.bad_entries, ==, 1);
	CHECK_INT(unwind_table__lookup(t, start), ==, CPROF_RULE_NO_CFI);
	CHECK_INT(unwind_table__lookup(t, end - 1), ==, CPROF_RULE_NO_CFI);
	CHECK(unwind_table__lookup(t, end) != CPROF_RULE_NO_CFI);
	unwind_table__free(t);
	go_pcsp__free(src.go);
	go_pclntab__free(names);
	unwind_rules__free(rules);
	free(c.image);
}

/* --- cost -------------------------------------------------------------------------------- */

/*
 * The table of a large stripped Go program: Debian ships its Go tools
 * without .debug_frame. Figures only; the build must succeed within the caps.
 */
static void large_program(const char *path)
{
	struct unwind_sources src = {.arch = CFI_ARCH_X86_64};
	struct unwind_table_stats st;
	struct unwind_rules *rules;
	struct unwind_table *t;
	struct elf_cfi cfi;
	struct mapped m;
	struct timespec a, b;

	if (access(path, R_OK))
		SKIP("%s is not installed (Debian: golang-1.19-go)", path);
	map_file(path, &m);
	CHECK_INT(elf_cfi__read(m.elf, &cfi), ==, 0);
	CHECK(!cfi.has_debug_frame);
	elf_cfi__sources(&cfi, NULL, &src);
	CHECK_INT(unwind_rules__new(&rules), ==, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_INT(go_pcsp__open(m.image, m.size, cfi.arch, &src.go), ==, 0);
	t = build_table(&src, rules, &st);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr,
		"figure go_pcsp %s: %zu bytes, %llu Go functions, %u rows, %zu table bytes, "
		"%zu rules, built in %.1f ms\n",
		path, m.size, (unsigned long long)st.go_funcs, t->nrows, unwind_table__bytes(t),
		unwind_rules__count(rules),
		(double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	CHECK(st.go_funcs > 10000);
	CHECK_INT(st.bad_entries, ==, 0);
	unwind_table__free(t);
	go_pcsp__free(src.go);
	unwind_rules__free(rules);
	unmap_file(&m);
}

TEST(go_pcsp_large_programs)
{
	large_program("/usr/lib/go-1.19/bin/go");
	large_program("/usr/lib/go-1.19/pkg/tool/linux_amd64/compile");
}
