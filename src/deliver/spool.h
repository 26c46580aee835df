/* SPDX-License-Identifier: MIT */
/*
 * A bounded on-disk queue of the batches a server did not take, oldest first,
 * so that an outage delays profiles instead of losing them. Each batch is
 * one file named by its sequence number, written under a temporary name,
 * fsync'd and renamed, so a crash leaves whole entries or none. Past the
 * size cap the oldest entries are dropped, and counted. A lock keeps two
 * cprof processes out of one spool; entries left by an earlier run are
 * found at open and sent first.
 */
#ifndef CPROF_SPOOL_H
#define CPROF_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct batch;
struct spool;

/*
 * Creates dir if needed and locks it; -EBUSY if another cprof holds it,
 * an error (said on stderr) if it is a link or others could write into it.
 */
int spool__open(const char *dir, uint64_t max_bytes, struct spool **out);
void spool__free(struct spool *s);

/*
 * Appends b, durably. Drops the oldest entries to stay under the cap; a
 * batch larger than the cap by itself is dropped (-EFBIG). Any other error
 * means b was not stored.
 */
int spool__push(struct spool *s, const struct batch *b);
/*
 * Reads the oldest entry; -ENOENT when empty. Corrupt entries are removed and
 * counted; entries that are not regular files of ours are skipped and counted.
 */
int spool__peek(struct spool *s, struct batch **out);
/* Removes the oldest entry. */
int spool__pop(struct spool *s);
/* Rewrites the oldest entry, e.g. with b->done advanced after a partial send. */
int spool__update_head(struct spool *s, const struct batch *b);

size_t spool__count(const struct spool *s);
uint64_t spool__dropped(const struct spool *s); /* entries dropped to respect the cap */
uint64_t spool__corrupt(const struct spool *s); /* unreadable entries removed */
uint64_t spool__refused(const struct spool *s); /* entries not ours, left unsent */
const char *spool__dir(const struct spool *s);

#endif
