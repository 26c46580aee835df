/* SPDX-License-Identifier: MIT */
/*
 * Kernel addresses named by the kernel itself (bpf/ksym_names.bpf.c): its
 * own symbol lookup, per address, instead of reading all of /proc/kallsyms
 * to name the few hundred addresses a profile holds. Needs Linux 5.17 (a
 * syscall program run through BPF_PROG_TEST_RUN, bpf_loop) and CAP_BPF+CAP_PERFMON;
 * callers fall back to kallsyms where it cannot load or cannot name.
 */
#ifndef CPROF_KSYM_NAMES_H
#define CPROF_KSYM_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct ksym_names;

/*
 * Called for each address: err 0 with its symbol's name (module suffix
 * removed), -ENOENT when no symbol holds it, or another negative errno
 * when the kernel's answer could not be used (a name longer than the
 * program's room): the caller names that one some other way.
 */
typedef void (*ksym_names_fn)(void *ctx, size_t i, const char *name, int err);

/*
 * Loads the program: 0, or a negative errno: not supported here, or
 * -EACCES where /proc/kallsyms hides its addresses from this process
 * (kernel.kptr_restrict): the kernel's policy holds for this way too.
 */
int ksym_names__new(struct ksym_names **out);
/*
 * Names addrs[0..n), calling fn for each in order. Returns 0, or a negative
 * errno if the program could not run: fn was called for the addresses
 * before it only.
 */
int ksym_names__name(struct ksym_names *k, const uint64_t *addrs, size_t n, ksym_names_fn fn,
		     void *ctx);
void ksym_names__free(struct ksym_names *k);

#endif
