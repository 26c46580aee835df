/* SPDX-License-Identifier: MIT */
/*
 * Blocks of one size kept for reuse. A stream of large short-lived blocks
 * (stack copies, some 17 KiB each, a thousand a second per CPU) made musl's
 * allocator map and unmap memory for each: every unmap a TLB shootdown
 * across CPUs, which cost the profiler more than all its other work. Safe
 * to use from several threads.
 */
#ifndef CPROF_BLOCK_POOL_H
#define CPROF_BLOCK_POOL_H

#include <stddef.h>

struct block_pool;

/*
 * Blocks of block_size bytes, for sizes from min_size up. Given back, a
 * block is kept for reuse while fewer are kept than were ever out at once,
 * and than max_free. Smaller sizes go to malloc: a whole block for a small
 * record spreads a stream of them over fresh pages, a fault each.
 */
int block_pool__new(size_t block_size, size_t min_size, size_t max_free, struct block_pool **out);
/* Frees the kept blocks; blocks still out must have been put back or freed with free(). */
void block_pool__free(struct block_pool *p);

/* A block of at least size bytes: from the pool when size is within its range, else malloc'd.
 * NULL without memory. */
void *block_pool__get(struct block_pool *p, size_t size);
/* Gives back a block got for size bytes (NULL is ignored). Without a pool (p NULL), malloc and
 * free. */
void block_pool__put(struct block_pool *p, void *block, size_t size);

#endif
