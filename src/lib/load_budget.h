/* SPDX-License-Identifier: MIT */
/*
 * What one run lets the files of other users cost it. A symbol table or
 * CFI section is read from whatever a process maps, so its size is the
 * mapper's choice: each file is held to the caps below (checked from its
 * section sizes before anything is parsed), and all of them to one point
 * in time, past which a load under way is abandoned and none begins, so
 * that -d holds. The session owns one; the symbolizer and the unwind table
 * cache borrow it and count what they refused in it for the summary.
 *
 * Two threads use it at once: the main thread (the unwind tables, the end
 * of the run) and the symbol loader's (resolve/symtab_loader.h). So its
 * deadline and counters are atomics: each is one word on its own, read and
 * moved without a lock, and the deadline only ever moves by a
 * compare-and-swap, so that a signal's earlier end is never lost to -d's.
 */
#ifndef CPROF_LOAD_BUDGET_H
#define CPROF_LOAD_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/clock.h"

/*
 * Symbols of one file (.symtab and .dynsym entries, or its debug file's).
 * The most on this Debian host (every ELF file in /usr and /opt): node's
 * 185k, libjvm's 71k, libLLVM-15's 46k; chromium with its debug file has
 * over a million. 2^21 holds them all; a file of 2M took 1.8-2.4 s and
 * 320 MB to load; four of 4M took 18 s and 1.26 GB in all on a 3 s run.
 */
#define LOAD_MAX_SYMBOLS (1u << 21)
/* Their names: node's are 12.8 MB; C++ names average under 100 bytes. */
#define LOAD_MAX_NAME_BYTES (256u << 20)
/*
 * Symbols held by all loaded files at once: two files at the cap (about
 * 100 MB each once loaded). A whole-system run here holds under 1M; a user
 * who maps many files just under the cap would otherwise make cprof hold
 * one more every second or two. Checked before a load, from the file's
 * section sizes; files no process maps any more give theirs back.
 */
#define LOAD_MAX_HELD_SYMBOLS (2 * LOAD_MAX_SYMBOLS)
/*
 * CFI (.eh_frame and .debug_frame, uncompressed) of one file: the largest
 * here is libnvrtc's 6.8 MB (libLLVM-15: 5.2 MB); 64 MiB is ten times it.
 */
#define LOAD_MAX_CFI_BYTES (64ull << 20)
/*
 * Rows of one file's unwind table: libLLVM's ~840k rows across its files;
 * a byte of CFI can make a row, so the bytes alone do not bound them.
 */
#define LOAD_MAX_CFI_ROWS (4u << 20)
/*
 * FDEs of one file (32 bytes each while the table is built), one a
 * function: libnvrtc has 146k, libLLVM-15 98k, node 76k; 2M bound a file
 * to 64 MB of them.
 */
#define LOAD_MAX_CFI_FDES (2u << 20)

/*
 * DWARF line tables (their sections as the files store them, copied while
 * the symbols are loaded, for the lines looked up when a profile ends)
 * held by all loaded files at once: libc's debug file holds 0.6 MB, a
 * large C++ program's tens of MB. Past it a file's are refused, counted.
 */
#define LOAD_MAX_HELD_DWARF_BYTES (256ull << 20)

/*
 * Code mappings of one process that get eager work: their files opened as
 * they are seen (the symbolizer) and their CFI read for a table (the
 * unwinder). Real processes have tens, a Python with every scientific
 * package a few hundred; one of a user's that maps 20,000 files cost
 * seconds of the sampling loop. Past this many, a file is opened only when
 * a sample needs its symbols, and its code gets frame-pointer steps.
 */
#define LOAD_MAX_EAGER_MAPPINGS 1024

/* How often a loop over a file's entries looks at the clock. */
#define LOAD_CHECK_EVERY 65536
/*
 * How long after -d, or after a signal asked to stop, loads may still run,
 * for the last samples; past it, a load under way is abandoned and counted,
 * so that however big other users' files are, the run ends about this late.
 */
#define LOAD_GRACE_MS 500

struct load_budget {
	_Atomic uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
	/*
	 * Nonzero once a signal asked to stop (NULL: none): looked at by the
	 * load under way, since the main loop that ends the run is inside it.
	 */
	int (*stop_requested)(void);
	_Atomic uint64_t symtabs_refused;   /* files whose symbols were over a cap */
	_Atomic uint64_t symtabs_over_held; /* not loaded: LOAD_MAX_HELD_SYMBOLS were held */
	_Atomic uint64_t symbols_held;	    /* by the loaded files, for LOAD_MAX_HELD_SYMBOLS */
	_Atomic uint64_t symtabs_abandoned; /* symbol loads cut off by the deadline */
	_Atomic uint64_t cfi_refused;	    /* files whose CFI was over a cap */
	_Atomic uint64_t cfi_abandoned;	    /* table builds cut off by the deadline */
	_Atomic uint64_t cfi_left_behind;   /* ... of them still reading their file (a thread's) */
	_Atomic uint64_t dwarf_held; /* line table bytes held, for LOAD_MAX_HELD_DWARF_BYTES */
};

/* Moves the deadline earlier only (a signal's stop, then -d's). */
static inline void load_budget__end_by(struct load_budget *b, uint64_t ns)
{
	uint64_t old;

	if (!b)
		return;
	old = atomic_load(&b->deadline_ns);
	while ((!old || ns < old) && !atomic_compare_exchange_weak(&b->deadline_ns, &old, ns))
		;
}

/*
 * Whether the run's time for loading is over (a NULL budget never is). A
 * signal first seen here leaves loads the grace from now: the load under
 * way ends within it, even one the main loop is stuck in.
 */
static inline bool load_budget__over(struct load_budget *b)
{
	uint64_t now, deadline;

	if (!b)
		return false;
	now = clock__mono_ns();
	if (b->stop_requested && b->stop_requested())
		load_budget__end_by(b, now + LOAD_GRACE_MS * 1000000ull);
	deadline = atomic_load(&b->deadline_ns);
	return deadline && now >= deadline;
}

/* The deadline, or UINT64_MAX when there is none (nor a budget). */
static inline uint64_t load_budget__deadline(struct load_budget *b)
{
	uint64_t deadline = b ? atomic_load(&b->deadline_ns) : 0;

	return deadline ? deadline : UINT64_MAX;
}

/* Moves the deadline later by a wait the operator asked for (--debuginfod-timeout). */
static inline void load_budget__postpone(struct load_budget *b, uint64_t ns)
{
	uint64_t old;

	if (!b)
		return;
	old = atomic_load(&b->deadline_ns);
	while (old && !atomic_compare_exchange_weak(&b->deadline_ns, &old, old + ns))
		;
}

#endif
