/* SPDX-License-Identifier: MIT */
/*
 * For unwinder tests: the executable files a live process maps, each with
 * its unwind table (one rule dictionary for all) and its symbols, and the
 * lookups a walk and its checks need.
 */
#ifndef CPROF_TEST_PROC_TABLES_H
#define CPROF_TEST_PROC_TABLES_H

#include <gelf.h>
#include <stdint.h>
#include <sys/types.h>

#include "resolve/elf_symtab.h"
#include "lib/proc_maps.h"
#include "unwind/stack_walk.h"
#include "unwind/unwind_rules.h"
#include "unwind/unwind_table.h"

#define PROC_TABLES_MAX_FILES 16

struct proc_file {
	const struct proc_map *map; /* the executable mapping of the file */
	struct elf_symtab *sym;
	struct unwind_table *table;
	uint64_t bias; /* table address = pc - bias */
	Elf *elf;
	int fd;
};

struct proc_tables {
	struct proc_maps *maps;
	struct unwind_rules *rules;
	struct proc_file files[PROC_TABLES_MAX_FILES];
	size_t nfiles;
};

/* Runs path with one argument, and loads its tables once it runs; returns its PID. */
pid_t proc_tables__run(struct proc_tables *p, const char *path, const char *arg);
void proc_tables__kill(pid_t pid);
/* Reads pid's maps and builds a table for each executable file mapping and its vDSO; fails the
 * test if it cannot. */
void proc_tables__load(struct proc_tables *p, pid_t pid);
void proc_tables__free(struct proc_tables *p);
struct proc_file *proc_tables__file(struct proc_tables *p, uint64_t pc);
/* A walk_find_fn over p. */
int proc_tables__find(void *p, uint64_t pc, struct walk_code *out);
/* The symbol at ip (a return address unless leaf), or "?". */
const char *proc_tables__name(struct proc_tables *p, uint64_t ip, bool leaf);

#endif
