/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables loaded on a thread of their own, off the sampling loop. A
 * file's symbols cost up to a couple of seconds to load (load_budget.h caps
 * the rest): on the main thread, that many seconds of no records read, no
 * tables built and no drain, for each such file a user runs. The symbolizer
 * posts an elf_symtab whose symbols it needs, goes on, and takes it back
 * loaded; its frames wait for their names meanwhile (symbolizer__finish).
 *
 * Ownership: from post until take hands it back, the elf_symtab is the
 * loader's; the caller must not touch it at all (no lookup, no release of
 * its file, no debug file set).
 *
 * Two threads load, one file at a time each, in the order posted: one the
 * files of many symbols (past SYMTAB_LOADER_LARGE, from their section
 * headers), one the others. A real program's libraries take milliseconds
 * each, a file just under the cap seconds: with one queue, a process begun
 * behind a few such files had its symbols after the run. One large load
 * at a time also keeps the memory of loads what it was on the main thread.
 */
#ifndef CPROF_SYMTAB_LOADER_H
#define CPROF_SYMTAB_LOADER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Symbols past which a file is loaded by the thread of large files: node
 * has 185k, libjvm 71k, libLLVM-15 46k; such a file loads in 0.1-0.2 s.
 */
#define SYMTAB_LOADER_LARGE (1u << 16)

/*
 * How long stopping waits for a load past its deadline to notice: between
 * two looks at the clock a load of 2M symbols spends up to some hundreds
 * of milliseconds.
 */
#define SYMTAB_LOADER_STOP_NS (300 * 1000000ull)

struct elf_symtab;
struct symtab_loader;

/* Starts the threads. 0, or a negative errno. */
int symtab_loader__new(struct symtab_loader **out);
/*
 * Stops the loads (symtab_loader__stop, for SYMTAB_LOADER_STOP_NS at most)
 * and ends the threads. What was posted and not taken back is the
 * caller's to free, its symbols not loaded, but what was left behind.
 */
void symtab_loader__free(struct symtab_loader *l);

/*
 * Hands e to the loader; owner comes back with it from symtab_loader__take.
 * 0, or -ENOMEM (e stays the caller's).
 */
int symtab_loader__post(struct symtab_loader *l, struct elf_symtab *e, void *owner);
/*
 * A load that ended (loaded, or refused or abandoned, counted in e's
 * budget as elf_symtab__count_failure does): its owner, and its elf_symtab
 * is the caller's again; NULL when none has ended since the last take.
 */
void *symtab_loader__take(struct symtab_loader *l);
/* Loads posted and neither taken back nor left behind. */
size_t symtab_loader__pending(struct symtab_loader *l);
/*
 * Waits until every load posted has ended, or until deadline_ns
 * (CLOCK_MONOTONIC; UINT64_MAX: no limit). True when none is left.
 */
bool symtab_loader__wait(struct symtab_loader *l, uint64_t deadline_ns);
/*
 * Ends the loads, as the run is over: the one under way stops at its next
 * look at the clock (every LOAD_CHECK_EVERY entries), those not begun end
 * unloaded, each counted as abandoned in its budget; later posts end the
 * same way. Waits for them until deadline_ns: those still under way then
 * (a read that blocks) are left behind, never to be taken back, their
 * elf_symtab the loader's to free, and counted by none. Returns how many.
 */
size_t symtab_loader__stop(struct symtab_loader *l, uint64_t deadline_ns);

#endif
