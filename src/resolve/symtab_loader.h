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

struct elf_symtab;
struct symtab_loader;

/* Starts the thread. 0, or a negative errno. */
int symtab_loader__new(struct symtab_loader **out);
/*
 * Stops (symtab_loader__stop) and ends the thread; what was still posted
 * and not taken back stays the caller's to free, its symbols not loaded.
 */
void symtab_loader__free(struct symtab_loader *l);

/*
 * Hands e to the loader; owner comes back with it from symtab_loader__take.
 * 0, or -ENOMEM (e stays the caller's).
 */
int symtab_loader__post(struct symtab_loader *l, struct elf_symtab *e, void *owner);
/*
 * A load that ended (loaded, or refused or abandoned as elf_symtab__load
 * says, counted in its budget): its owner, and its elf_symtab is the
 * caller's again; NULL when none has ended since the last take.
 */
void *symtab_loader__take(struct symtab_loader *l);
/* Loads posted and not taken back yet. */
size_t symtab_loader__pending(struct symtab_loader *l);
/*
 * Waits until every load posted has ended, or until deadline_ns
 * (CLOCK_MONOTONIC; UINT64_MAX: no limit). True when none is left.
 */
bool symtab_loader__wait(struct symtab_loader *l, uint64_t deadline_ns);
/*
 * Ends the loads at once, as the run is over: the one under way stops at
 * its next look at the clock (every LOAD_CHECK_EVERY entries), those not
 * begun end unloaded, each counted as abandoned in its budget. Returns
 * when all have ended; later posts end the same way.
 */
void symtab_loader__stop(struct symtab_loader *l);

#endif
