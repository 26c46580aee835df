// SPDX-License-Identifier: MIT
/* Blocks of one size kept for reuse; see block_pool.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/block_pool.h"

struct free_block {
	struct free_block *next;
};

struct block_pool {
	size_t block_size;
	size_t min_size;
	size_t max_free;
	pthread_mutex_t lock;
	struct free_block *free; /* under lock, as the counts */
	size_t nfree;
	size_t nout; /* blocks handed out and not given back */
	size_t peak; /* the most ever out at once */
};

int block_pool__new(size_t block_size, size_t min_size, size_t max_free, struct block_pool **out)
{
	struct block_pool *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->block_size =
		block_size < sizeof(struct free_block) ? sizeof(struct free_block) : block_size;
	p->min_size = min_size;
	p->max_free = max_free;
	pthread_mutex_init(&p->lock, NULL);
	*out = p;
	return 0;
}

void block_pool__free(struct block_pool *p)
{
	struct free_block *b, *next;

	if (!p)
		return;
	for (b = p->free; b; b = next) {
		next = b->next;
		free(b);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/*
 * Every size in range: stack copies come in all sizes from 1 to 17 KiB,
 * and an allocator that gives large blocks back to the kernel costs a TLB
 * shootdown on every CPU each time.
 */
static bool pooled(const struct block_pool *p, size_t size)
{
	return p && size >= p->min_size && size <= p->block_size;
}

void *block_pool__get(struct block_pool *p, size_t size)
{
	struct free_block *b;

	if (!pooled(p, size))
		return malloc(size ? size : 1);
	pthread_mutex_lock(&p->lock);
	b = p->free;
	if (b) {
		p->free = b->next;
		p->nfree--;
	}
	if (++p->nout > p->peak)
		p->peak = p->nout;
	pthread_mutex_unlock(&p->lock);
	return b ? (void *)b : malloc(p->block_size);
}

void block_pool__put(struct block_pool *p, void *block, size_t size)
{
	struct free_block *b = block;

	if (!block)
		return;
	if (!pooled(p, size)) {
		free(block);
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (p->nout)
		p->nout--;
	/* As many as were ever out at once: a burst as large comes back without malloc. */
	if (p->nfree < p->max_free && p->nfree < p->peak) {
		b->next = p->free;
		p->free = b;
		p->nfree++;
		b = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	free(b);
}
