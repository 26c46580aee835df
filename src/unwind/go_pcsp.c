// SPDX-License-Identifier: MIT
/* Unwind rules from Go's pcsp tables; see go_pcsp.h. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf_image.h"
#include "lib/go_pclntab.h"
#include "lib/load_budget.h"
#include "unwind/go_pcsp.h"
#include "unwind/unwind_rule.h"

struct go_pcsp {
	struct go_pclntab *t;
	const uint8_t *table; /* in the image */
	size_t size;
	enum cfi_arch arch;
	uint64_t budget;  /* bytes of pcsp tables the file may still read */
	size_t sigreturn; /* the signal handler's return (x86_64), or SIZE_MAX */
	bool early;	  /* ... whose rule starts at the padding byte before it */
};

/* Walks the rules of one function for go_pcsp__rules. */
struct rules_walk {
	enum cfi_arch arch;
	unsigned int flags;
	int (*fn)(uint64_t begin, uint64_t end, const struct cprof_unwind_rule *rule, void *arg);
	void *arg;
};

/* The byte at vaddr in an executable segment, or -1. */
static int code_byte(const void *image, size_t size, uint64_t vaddr)
{
	struct elf_image img;
	struct elf_segment s;
	size_t i;

	if (elf_image__open(image, size, &img))
		return -1;
	for (i = 0; i < img.phnum; i++) {
		elf_image__segment(&img, i, &s);
		if (s.type == PT_LOAD && (s.flags & PF_X) && vaddr >= s.vaddr &&
		    vaddr - s.vaddr < s.filesz && elf_image__contains(&img, s.offset, s.filesz))
			return img.p[s.offset + (vaddr - s.vaddr)];
	}
	return -1;
}

/*
 * Go's signal handler returns to runtime.sigreturn__sigaction (before Go
 * 1.19, runtime.sigreturn), its sa_restorer: a signal trampoline. As a
 * return address it is looked up one byte early, in the padding before it
 * (int3 or nop, Go aligns functions to 32 bytes), so its rule starts there,
 * as the FDE of glibc's __restore_rt does.
 */
static void find_sigreturn(struct go_pcsp *g, const void *image, size_t size)
{
	uint64_t begin, end;
	const char *name;
	size_t i;
	int b;

	g->sigreturn = SIZE_MAX;
	if (g->arch != CFI_ARCH_X86_64)
		return;
	for (i = 0; !go_pclntab__func(g->t, i, &begin, &end, &name); i++) {
		if (strcmp(name, "runtime.sigreturn__sigaction") &&
		    strcmp(name, "runtime.sigreturn"))
			continue;
		g->sigreturn = i;
		b = begin ? code_byte(image, size, begin - 1) : -1;
		g->early = b == 0xcc || b == 0x90;
		return;
	}
}

int go_pcsp__open(const void *image, size_t size, enum cfi_arch arch, struct go_pcsp **out)
{
	struct go_pclntab_info info;
	struct go_pcsp *g;
	int err;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	err = go_pclntab__from_elf(image, size, &g->t);
	if (err) {
		free(g);
		/* A table that is not one is a file without Go's table. */
		return err == -ENOMEM || err == -EFBIG ? err : -ENOENT;
	}
	go_pclntab__info(g->t, &info);
	g->table = (const uint8_t *)image + info.offset;
	g->size = info.size;
	g->arch = arch;
	g->budget = LOAD_MAX_CFI_BYTES;
	find_sigreturn(g, image, size);
	*out = g;
	return 0;
}

void go_pcsp__free(struct go_pcsp *g)
{
	if (!g)
		return;
	go_pclntab__free(g->t);
	free(g);
}

size_t go_pcsp__count(const struct go_pcsp *g)
{
	return g ? go_pclntab__count(g->t) : 0;
}

void go_pcsp__range(const struct go_pcsp *g, size_t i, uint64_t *begin, uint64_t *end)
{
	const char *name;

	*begin = *end = 0;
	go_pclntab__func(g->t, i, begin, end, &name);
	if (g->early && i == g->sigreturn)
		--*begin;
	if (g->early && i + 1 == g->sigreturn)
		--*end;
}

struct cprof_unwind_rule go_pcsp__rule(enum cfi_arch arch, int32_t sp, unsigned int flags)
{
	struct cprof_unwind_rule r = {.cfa_kind = CPROF_CFA_SP};

	if (flags & GO_FUNC_TOPFRAME)
		return (struct cprof_unwind_rule){.cfa_kind = CPROF_CFA_END};
	if (flags & GO_FUNC_SPWRITE)
		return unwind_rule_stop(CPROF_STOP_GO_SWITCH);
	/* A frame above the entry's SP: the table lies. */
	if (sp < 0 || sp > INT32_MAX - 8)
		return unwind_rule_stop(CPROF_STOP_BAD_CFI);
	if (arch == CFI_ARCH_AARCH64) {
		/* LR and FP are saved at the bottom of the frame: a rule reaches 32 KiB down. */
		if (sp > INT16_MAX - 8)
			return unwind_rule_stop(CPROF_STOP_UNSUPPORTED);
		r.cfa_off = sp;
		if (!sp) {
			r.ra_kind = CPROF_RA_IN_LR;
			return r;
		}
		r.ra_off = (__s16)-sp;
		r.fp_kind = CPROF_FP_AT_CFA;
		r.fp_off = (__s16)(-sp - 8);
		return r;
	}
	r.cfa_off = sp + 8;
	r.ra_off = -8;
	if (sp > 0) {
		r.fp_kind = CPROF_FP_AT_CFA;
		r.fp_off = -16;
	}
	return r;
}

static int on_run(const struct go_pcsp_run *run, void *arg)
{
	const struct rules_walk *w = arg;
	struct cprof_unwind_rule rule = go_pcsp__rule(w->arch, run->sp, w->flags);

	return w->fn(run->begin, run->end, &rule, w->arg);
}

/*
 * Before Go 1.17 the table has no flags: the outermost functions by name.
 * The signal handler is flagged TOPFRAME (Go's own tracebacks start over
 * on the goroutine's stack), but the kernel's signal frame above it leads
 * on to the interrupted code: it gets its deltas.
 */
static unsigned int flags_of(const struct go_pcsp *g, size_t i)
{
	static const char *const tops[] = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go"};
	uint64_t begin, end;
	const char *name;
	size_t k;

	if (go_pclntab__func(g->t, i, &begin, &end, &name))
		return 0;
	for (k = 0; k < sizeof(tops) / sizeof(tops[0]); k++)
		if (!strcmp(name, tops[k]))
			return GO_FUNC_TOPFRAME;
	if (!strcmp(name, "runtime.sigtramp") || !strcmp(name, "runtime.cgoSigtramp"))
		return 0;
	return go_pclntab__flags(g->t, g->table, g->size, i);
}

int go_pcsp__rules(struct go_pcsp *g, size_t i,
		   int (*fn)(uint64_t begin, uint64_t end, const struct cprof_unwind_rule *rule,
			     void *arg),
		   void *arg)
{
	struct rules_walk w = {g->arch, flags_of(g, i), fn, arg};
	struct cprof_unwind_rule signal = {.cfa_kind = CPROF_CFA_SIGNAL};
	uint64_t begin, end;

	if (i == g->sigreturn) {
		go_pcsp__range(g, i, &begin, &end);
		return fn(begin, end, &signal, arg);
	}
	return go_pclntab__pcsp(g->t, g->table, g->size, i, &g->budget, on_run, &w);
}
