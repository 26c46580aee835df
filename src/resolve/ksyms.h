/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols from /proc/kallsyms (vmlinux and modules). The text is 5+ MB
 * and 100k+ lines, and a profile hits a few thousand of its symbols at most,
 * so it is streamed and never held whole:
 *  - the load keeps only the sorted text-symbol addresses (8 bytes each) and
 *    which module each belongs to, enough to find the symbol of an address;
 *    it can also name, in the same read, the symbols holding addresses known
 *    by then, and even keep only those (ksyms__load_for): a profile resolved
 *    at its end reads kallsyms once and holds no table;
 *  - the names of symbols hit later are read by one more pass
 *    (ksyms__name_pass) just before the profile is used, and kept, so a
 *    later pass only runs for symbols not named yet.
 * Names of BPF programs and trampolines ([bpf], [__builtin__ftrace], ...) are
 * kept from the load itself: they may be gone by the time of the name pass.
 * A symbol that is no longer listed (same address, same module) at the name
 * pass is reported gone, never given another symbol's name.
 *
 * When kptr_restrict hides the addresses (all zero), the table reports itself
 * hidden and every lookup fails, so callers can keep the frames as "[kernel]"
 * and say so once.
 */
#ifndef CPROF_KSYMS_H
#define CPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* Bytes read from the file at a time. */
#define KSYMS_CHUNK (64 * 1024)

/* Loads path, or /proc/kallsyms when path is NULL; name passes read it again. */
int ksyms__load(const char *path, struct ksyms **out);
/*
 * The same, naming at once the symbols that hold addrs[0..naddrs) (any
 * order, repeats allowed; addresses of no symbol are fine). With only, the
 * table keeps just those symbols: any other address finds nothing.
 */
int ksyms__load_for(const char *path, const uint64_t *addrs, size_t naddrs, bool only,
		    struct ksyms **out);
/*
 * Parses kallsyms text in memory, handed to the same line reader as a file
 * would be, chunk bytes at a time (ksyms__parse: KSYMS_CHUNK). Name passes
 * then take text too (ksyms__name_pass_text).
 */
int ksyms__parse(const char *text, size_t len, struct ksyms **out);
int ksyms__parse_for(const char *text, size_t len, size_t chunk, const uint64_t *addrs,
		     size_t naddrs, bool only, struct ksyms **out);
void ksyms__free(struct ksyms *k);

bool ksyms__hidden(const struct ksyms *k);
/* Distinct text-symbol addresses (in a table of some symbols only, those). */
size_t ksyms__count(const struct ksyms *k);

/* The text symbol at or below addr (within its plausible extent): 0 or -ENOENT. */
int ksyms__find(const struct ksyms *k, uint64_t addr, uint32_t *idx);
uint64_t ksyms__addr(const struct ksyms *k, uint32_t idx);
/* The symbol's module, NULL for the kernel image. */
const char *ksyms__module(const struct ksyms *k, uint32_t idx);
/*
 * The symbol's name: 0 once known, -EAGAIN while not named yet (ask for it
 * with ksyms__want_name), -ENOENT if the last name pass found it gone.
 */
int ksyms__name(const struct ksyms *k, uint32_t idx, const char **name);
/* Asks the next name pass for the name of idx (no-op when known or gone). */
int ksyms__want_name(struct ksyms *k, uint32_t idx);
/* Symbols waiting for a name pass. */
size_t ksyms__wanted(const struct ksyms *k);
/*
 * Reads the file of ksyms__load again and names the wanted symbols; those
 * not found are gone. On failure nothing is named and they stay wanted.
 */
int ksyms__name_pass(struct ksyms *k);
int ksyms__name_pass_text(struct ksyms *k, const char *text, size_t len, size_t chunk);

#endif
