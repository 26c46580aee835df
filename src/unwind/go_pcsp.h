/* SPDX-License-Identifier: MIT */
/*
 * Unwind rules for Go code from Go's own function table, for files without
 * CFI of it: a stripped Go program (-ldflags='-s -w' drops .debug_frame,
 * and Go writes no .eh_frame) would otherwise be walked by frame pointers,
 * which skip the caller of every function that sets up no frame.
 *
 * Each function's pcsp table (lib/go_pclntab.h) gives, at every PC, how far
 * SP is below its value at the entry: the frame in use. Go's linker makes
 * its .debug_frame from the same table, so the rules below are what that
 * CFI says (the CFA and the return address), and the frame pointer where
 * Go's prologue saves it:
 *   x86_64   CFA = SP + sp + 8, the return address at CFA - 8, and the
 *            caller's BP at CFA - 16 where sp > 0 (Go saves BP at the top
 *            of every frame it sets up; in the one instruction of a Go 1.19
 *            prologue between the SUBQ and the store, the slot is not yet
 *            written)
 *   AArch64  CFA = SP + sp; the return address still in LR where sp is 0,
 *            else at CFA - sp (the prologue's MOVD.W R30, -sp(RSP)), the
 *            caller's FP at CFA - sp - 8
 * Functions flagged TOPFRAME (goexit, mstart, rt0_go) end the walk; those
 * that write SP themselves (SPWRITE: systemstack, mcall, morestack,
 * asmcgocall, gogo, time.now) stop it, counted as a Go stack switch: past
 * them the stack is another one (a goroutine's, g0's), which only the
 * runtime's g and m structures tell. Go's signal handler (runtime.sigtramp,
 * flagged TOPFRAME) is walked through: it returns to a signal trampoline,
 * runtime.sigreturn__sigaction on x86_64 (which gets that rule), the vDSO's
 * on AArch64, whose frame leads on to the interrupted code.
 */
#ifndef CPROF_GO_PCSP_H
#define CPROF_GO_PCSP_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_program.h"
#include "unwind_abi.h"

struct go_pcsp;

/*
 * Go's functions in an ELF image laid out as its file (a mapped file),
 * which must outlive the object. -ENOENT for a file without Go's table,
 * -EFBIG for one over the caps of lib/load_budget.h, -ENOMEM.
 */
int go_pcsp__open(const void *image, size_t size, enum cfi_arch arch, struct go_pcsp **out);
void go_pcsp__free(struct go_pcsp *g);

/* The functions, sorted by start: i in [0, count). */
size_t go_pcsp__count(const struct go_pcsp *g);
void go_pcsp__range(const struct go_pcsp *g, size_t i, uint64_t *begin, uint64_t *end);
/*
 * Function i's rules, run by run in address order, into fn (whose nonzero
 * return ends the walk and is returned). -EBADMSG for a corrupt table,
 * -EFBIG once the file's tables have read LOAD_MAX_CFI_BYTES.
 */
int go_pcsp__rules(struct go_pcsp *g, size_t i,
		   int (*fn)(uint64_t begin, uint64_t end, const struct cprof_unwind_rule *rule,
			     void *arg),
		   void *arg);
/* The rule where SP is sp below its value at the entry of a function with flags (GO_FUNC_*). */
struct cprof_unwind_rule go_pcsp__rule(enum cfi_arch arch, int32_t sp, unsigned int flags);

#endif
