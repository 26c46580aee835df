/* SPDX-License-Identifier: MIT */
/*
 * Every process's address spaces over time. A process gets a new one at
 * fork (a copy of its parent's memory) and at each exec (a new program):
 * a sample is resolved with the space it was taken in, even when the
 * process has exec'd since, and the name goes with it (`env` becomes the
 * program it runs). The BPF program stamps each sample with its space's id,
 * the time of the fork or exec that began it; the kernel's records of the
 * same fork or exec carry a time a little earlier (see sampler_abi.h).
 *
 * A process that ran before cprof started has one space that began at 0,
 * read from /proc.
 */
#ifndef CPROF_ADDRESS_SPACES_H
#define CPROF_ADDRESS_SPACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resolve/mapping_table.h"

#define SPACE_COMM_LEN 16

struct space {
	uint32_t pid;
	uint64_t start; /* CLOCK_MONOTONIC ns of the fork or exec that began it; 0: before cprof */
	uint64_t end;	/* when the next began or the process exited; UINT64_MAX while current */
	char comm[SPACE_COMM_LEN]; /* the process's name in this space */
	bool exec;		   /* begun by an exec (set by the owner) */
	struct mapping_table *maps;
	void *priv; /* the owner's, freed with the space */
};

struct address_spaces;
typedef void (*space_priv_free_fn)(void *priv);

int address_spaces__new(space_priv_free_fn free_priv, struct address_spaces **out);
void address_spaces__free(struct address_spaces *as);

/*
 * A space of pid beginning at start, named comm, with the mappings of from
 * (a fork: the table is shared, see mapping_table__own) or none (an exec).
 * The space current at start ends there. NULL when out of memory.
 */
struct space *address_spaces__begin(struct address_spaces *as, uint32_t pid, uint64_t start,
				    const char *comm, const struct space *from);
/* The space of pid at time t: the last to begin at or before t; NULL if none. */
struct space *address_spaces__at(struct address_spaces *as, uint32_t pid, uint64_t t);
/* The space of the same PID that began just before sp, NULL if none. */
struct space *address_spaces__before(struct address_spaces *as, const struct space *sp);
/* The space of the same PID that began next after sp, NULL if none. */
struct space *address_spaces__after(struct address_spaces *as, const struct space *sp);
/* The newest space of pid, NULL if none. */
struct space *address_spaces__latest(struct address_spaces *as, uint32_t pid);
/* The process exited at t: its newest space ends there. */
void address_spaces__exit(struct address_spaces *as, uint32_t pid, uint64_t t);
/*
 * Frees the spaces that ended before t: no sample taken in them is still
 * waiting to be resolved. Returns how many.
 */
size_t address_spaces__forget(struct address_spaces *as, uint64_t t);

/* Iteration over every space: *pos and *idx start at 0; NULL at the end. */
struct space *address_spaces__next(struct address_spaces *as, size_t *pos, size_t *idx);
size_t address_spaces__count(const struct address_spaces *as);

#endif
