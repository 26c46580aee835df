/* SPDX-License-Identifier: MIT */
/*
 * An open-addressing hash map from u64 keys to u64 values, for the hot
 * lookups of the symbolizer (address -> frame, pid -> process state) where a
 * tree or a linear scan would dominate the drain time.
 */
#ifndef CPROF_U64MAP_H
#define CPROF_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map;

struct u64map *u64map__new(void);
void u64map__free(struct u64map *m);
/* Inserts or replaces. Returns 0 or -ENOMEM. */
int u64map__set(struct u64map *m, uint64_t key, uint64_t value);
bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *value);
bool u64map__delete(struct u64map *m, uint64_t key);
size_t u64map__count(const struct u64map *m);
/* Iteration: *pos starts at 0; returns false at the end. */
bool u64map__next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *value);

#endif
