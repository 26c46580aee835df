/* SPDX-License-Identifier: MIT */
/*
 * Takes every entry out of a BPF hash map in a few system calls: the
 * kernel's lookup-and-delete batches (Linux 5.6 and later) copy a bucket at
 * a time and delete it under the bucket's lock. A drain read each key with
 * three calls (next key, lookup, delete), some 7,000 a second on a busy
 * program; each call is a round trip into the kernel, a dear one in a VM.
 * Where the kernel has no batches, map_take__all says so and takes nothing:
 * the caller reads the map one key at a time, as before.
 *
 * The buffers are kept for the next take: a drain after a drain allocates
 * nothing.
 */
#ifndef CPROF_MAP_TAKE_H
#define CPROF_MAP_TAKE_H

#include <stdbool.h>
#include <stddef.h>

struct map_take;

int map_take__new(size_t key_size, size_t value_size, struct map_take **out);
void map_take__free(struct map_take *t);
/*
 * Takes the entries of the hash map fd (its key and value sizes must be
 * those given to map_take__new). -EOPNOTSUPP: this kernel has no batches
 * for it (its first call failed as an unknown command does), nothing was
 * taken, and no later call asks again. Another error can come after some
 * entries were taken by the calls before: they are in t all the same; the
 * failed call's count is never taken for entries.
 */
int map_take__all(struct map_take *t, int fd);
size_t map_take__count(const struct map_take *t);
const void *map_take__key(const struct map_take *t, size_t i);
const void *map_take__value(const struct map_take *t, size_t i);
/*
 * Whether err, from a batched map call that did nothing, says this kernel
 * has no batches (an unknown command, or none for the map's type).
 */
bool map_take__unsupported(int err);

#endif
