/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols from /proc/kallsyms (vmlinux and modules), sorted once and
 * binary-searched. When kptr_restrict hides the addresses (all zero), the
 * table reports itself hidden and every lookup fails, so callers can keep
 * the frames as "[kernel]" and say so once.
 */
#ifndef CPROF_KSYMS_H
#define CPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for the kernel image itself */
};

struct ksyms;

int ksyms__parse(const char *text, size_t len, struct ksyms **out);
/* Loads path, or /proc/kallsyms when path is NULL. */
int ksyms__load(const char *path, struct ksyms **out);
void ksyms__free(struct ksyms *k);

/* The text symbol at or below addr (within its plausible extent), or NULL. */
const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr);
bool ksyms__hidden(const struct ksyms *k);
size_t ksyms__count(const struct ksyms *k);

#endif
