/* SPDX-License-Identifier: MIT */
/*
 * Delivery owns the retries of uploads (upload__send makes one attempt): a
 * failure that may pass is retried with exponential backoff and jitter, or
 * the wait the server asked for, up to a number of attempts.
 *
 * Continuous mode's delivery: every interval's batch reaches the server once,
 * in the order the intervals were taken, whatever the server does meanwhile.
 * A thread of its own sends, so sampling never waits on the network. What
 * cannot be sent goes to the spool; while the spool holds anything, newer
 * batches line up behind it there, so order holds through outages and
 * restarts of cprof. The spool is retried with growing backoff and drained
 * oldest first once the server answers again.
 */
#ifndef CPROF_DELIVERY_H
#define CPROF_DELIVERY_H

#include <stddef.h>
#include <stdint.h>

#include "deliver/upload.h"

struct batch;
struct cancel;
struct delivery;
struct spool;

struct delivery_stats {
	uint64_t submitted;	  /* batches made by this run */
	uint64_t found_in_spool;  /* batches an earlier run left in the spool */
	uint64_t sent;		  /* accepted by the server */
	uint64_t sent_from_spool; /* of those, sent after a stay in the spool */
	uint64_t spooled;	  /* written to the spool */
	uint64_t rejected;	  /* refused by the server, which retrying would not change */
	uint64_t dropped;	  /* lost to the spool's cap, a failed write, a corrupt entry */
	uint64_t in_spool;	  /* still in the spool at the end */
	uint64_t not_ours;	  /* spool entries not sent: not a regular file of ours */
};

/*
 * One-shot: sends b now, in the calling thread, with up to `attempts`
 * attempts. cancel (optional; a signal handler may trigger it) ends an
 * exchange under way or a backoff at once with UPLOAD_CANCELED.
 */
enum upload_result delivery__send_now(struct upload *u, struct batch *b, int attempts,
				      const struct cancel *cancel);

/* attempts: tries per new batch before it is spooled. */
int delivery__start(struct upload *u, struct spool *spool, int attempts, uint64_t max_queue_bytes,
		    struct delivery **out);
/* Hands b over (never blocks on the network). */
void delivery__submit(struct delivery *d, struct batch *b);
/*
 * Lets the exchange under way (if any) complete, ends a backoff at once,
 * delivers what is queued and tries the spool once more, each with a
 * single attempt, then stops the thread. What the server does not take
 * stays in the spool for the next run.
 */
void delivery__finish(struct delivery *d, struct delivery_stats *st);
void delivery__free(struct delivery *d);

#endif
