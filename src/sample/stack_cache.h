/* SPDX-License-Identifier: MIT */
/*
 * A drain's cache of the stack map (the sampler's object: stacks by id):
 * a stack shared by many counts is read once, and the ids read are those
 * cleared from the map at the end of the drain.
 */
#ifndef CPROF_STACK_CACHE_H
#define CPROF_STACK_CACHE_H

#include <stdint.h>

struct stack_cache;

/* For a stack map of entries ids; -ENOMEM. Its tables are made at the first read. */
int stack_cache__new(uint32_t entries, struct stack_cache **out);
/* NULL-safe. */
void stack_cache__free(struct stack_cache *c);
/*
 * The frames (leaf first, *n of them) of stack id in the stack map fd, read
 * once per drain; NULL with *err: 0 for no stack (-EFAULT, as the kernel
 * gives for a user-mode sample or a kernel thread), the kernel's error for
 * one it could not take, -ERANGE past the map, -ENOENT when the stack is
 * gone from the map, -ENOMEM.
 */
const uint64_t *stack_cache__frames(struct stack_cache *c, int fd, int id, uint32_t *n, int *err);
/* Deletes the stacks read from fd and forgets them: the drain of its set is over. */
void stack_cache__clear(struct stack_cache *c, int fd);

#endif
