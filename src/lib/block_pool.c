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
	size_t max_free;
	pthread_mutex_t lock;
	struct free_block *free; /* under lock */
	size_t nfree;
};

int block_pool__new(size_t block_size, size_t max_free, struct block_pool **out)
{
	struct block_pool *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->block_size =
		block_size < sizeof(struct free_block) ? sizeof(struct free_block) : block_size;
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

/* Small blocks are not worth a whole block: malloc keeps those well. */
static bool pooled(const struct block_pool *p, size_t size)
{
	return p && size <= p->block_size && size >= p->block_size / 4;
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
	if (p->nfree < p->max_free) {
		b->next = p->free;
		p->free = b;
		p->nfree++;
		b = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	free(b);
}
