/* SPDX-License-Identifier: MIT */
/*
 * The code mappings of one address space, kept current as the kernel
 * reports each new one: a /proc/PID/maps snapshot is a picture of one
 * moment, while a process maps its loader, its libraries and its plugins
 * over its first milliseconds. Only executable mappings are kept (an
 * instruction pointer is nowhere else), sorted and without overlaps, as an
 * mmap over existing memory replaces what was there.
 *
 * Each entry also carries what the symbolizer learned of it (the ELF file,
 * the profile module id), so that an address costs one binary search.
 */
#ifndef CPROF_MAPPING_TABLE_H
#define CPROF_MAPPING_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proc_maps.h"

struct elf_symtab;
struct mapping_table;

struct mapping {
	struct proc_map map; /* path owned by the table */
	/* The symbolizer's: */
	struct elf_symtab *elf; /* borrowed from its file cache; NULL: not ELF, or not opened */
	bool elf_tried;		/* elf was looked for */
	uint32_t module_id;	/* 0 until first used, in module_gen */
	uint32_t module_gen;
};

int mapping_table__new(struct mapping_table **out);
/* Drops a reference; the last frees the table. */
void mapping_table__free(struct mapping_table *t);
/* A copy, as a forked child starts with its parent's memory; 0 or -ENOMEM. */
int mapping_table__clone(const struct mapping_table *t, struct mapping_table **out);
/*
 * Another reference to t: a forked child shares its parent's table until
 * either maps something, as most children exec or exit first.
 */
struct mapping_table *mapping_table__share(struct mapping_table *t);
/* Makes *t a table of its own, copied if shared, before an insert; 0 or -ENOMEM. */
int mapping_table__own(struct mapping_table **t);

/*
 * Adds m (its path is copied), cutting back or dropping the mappings it
 * overlaps. Returns the new entry, valid until the next insert, or NULL
 * when out of memory (the table is then unchanged).
 */
struct mapping *mapping_table__insert(struct mapping_table *t, const struct proc_map *m);
/* The mapping holding addr, or NULL. */
struct mapping *mapping_table__find(struct mapping_table *t, uint64_t addr);
size_t mapping_table__count(const struct mapping_table *t);
struct mapping *mapping_table__get(struct mapping_table *t, size_t i);

#endif
