// SPDX-License-Identifier: MIT
/*
 * Delivery thread; see delivery.h. The main thread only appends to the queue
 * and sets finishing, under the lock, and signals the condition variable.
 * Everything else (the upload client, the spool, the counters) belongs to
 * the delivery thread until delivery__finish has joined it. Every wait of
 * the thread, for work or for a retry, is on that condition variable, so
 * finish ends a backoff at once; an exchange under way is never cut short,
 * as one cut after the server took the request would be sent twice.
 *
 * An outage is reported once when it starts and once when it ends, not for
 * every interval in between, so a long outage does not flood the log.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "upload"
#include "deliver/batch.h"
#include "deliver/delivery.h"
#include "deliver/spool.h"
#include "deliver/upload.h"
#include "lib/cancel.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/words.h"

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS	 30000

struct delivery {
	struct upload *u;
	struct spool *spool;
	int attempts;
	uint64_t max_queue_bytes;

	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work queued, or finishing */
	/* Under lock: */
	struct batch **queue; /* [qhead, qn) waiting */
	size_t qhead, qn, qcap;
	uint64_t qbytes;
	uint64_t queue_dropped;
	bool finishing;

	/* Owned by the thread: */
	struct delivery_stats st;
	uint64_t write_failures;
	struct batch *pending; /* first in line, between two attempts */
	int tries;	       /* attempts made at the batch first in line */
	int failures;	       /* batches in a row that failed every attempt */
	int64_t retry_at;      /* ms, CLOCK_MONOTONIC: when to try pending, or the spool, again */
	uint64_t rng;
	bool outage;
	bool finishing_seen; /* d->finishing as last read under the lock */
	bool final_failed;   /* while finishing: the server failed once, spool the rest */
};

static uint64_t seed(const void *p)
{
	return (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)p;
}

/* xorshift64*: jitter only needs to spread clients apart, not to be unpredictable. */
static uint64_t next_random(uint64_t *rng)
{
	*rng ^= *rng >> 12;
	*rng ^= *rng << 25;
	*rng ^= *rng >> 27;
	return *rng * 0x2545f4914f6cdd1dull;
}

/*
 * The wait after the n-th failure in a row: half the exponential delay, plus
 * up to as much again at random; longer if the server asked for it.
 */
static int backoff_ms(uint64_t *rng, const struct upload *u, int failures)
{
	int64_t ms = BACKOFF_FIRST_MS;

	while (--failures > 0 && ms < BACKOFF_MAX_MS)
		ms *= 2;
	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	ms = ms / 2 + (int64_t)(next_random(rng) % (uint64_t)(ms / 2 + 1));
	if (upload__retry_after_ms(u) > ms)
		ms = upload__retry_after_ms(u);
	return (int)ms;
}

/* The wait before the next attempt, after attempt n of attempts failed. */
static int retry_wait(uint64_t *rng, const struct upload *u, int n, int attempts)
{
	int ms = backoff_ms(rng, u, n);

	pr_warn("attempt %d of %d failed: %s; retrying in %.1f s", n, attempts,
		upload__last_error(u), ms / 1000.0);
	return ms;
}

enum upload_result delivery__send_now(struct upload *u, struct batch *b, int attempts,
				      const struct cancel *cancel)
{
	uint64_t rng = seed(b);
	enum upload_result res;
	int n;

	for (n = 1;; n++) {
		res = upload__send(u, b, cancel);
		if (res != UPLOAD_RETRY_LATER || n >= attempts)
			return res;
		if (cancel__wait(cancel, retry_wait(&rng, u, n, attempts)))
			return UPLOAD_CANCELED;
	}
}

static void failed(struct delivery *d)
{
	d->failures++;
	d->retry_at = clock__mono_ms() + backoff_ms(&d->rng, d->u, d->failures);
	if (d->finishing_seen)
		d->final_failed = true;
	if (!d->outage)
		pr_warn("cannot upload to %s: %s; keeping profiles in the spool %s and retrying",
			upload__url(d->u), upload__last_error(d->u), spool__dir(d->spool));
	else
		pr_debug("still failing: %s", upload__last_error(d->u));
	d->outage = true;
}

static void succeeded(struct delivery *d)
{
	d->failures = 0;
	if (d->outage)
		pr_warn("uploads to %s work again; sending the %zu spooled %s", upload__url(d->u),
			spool__count(d->spool),
			plural(spool__count(d->spool), "interval", "intervals"));
	d->outage = false;
}

static void rejected(struct delivery *d, const struct batch *b)
{
	d->st.rejected++;
	pr_err("the interval starting at %.3f s was refused and dropped: %s",
	       (double)b->time_ns / 1e9, upload__last_error(d->u));
}

static void to_spool(struct delivery *d, const struct batch *b)
{
	int err = spool__push(d->spool, b);

	if (!err)
		d->st.spooled++;
	else if (err != -EFBIG)
		d->write_failures++;
}

/* Sends the spool oldest first; false at the first failure. */
static bool flush_spool(struct delivery *d)
{
	while (spool__count(d->spool)) {
		struct batch *b = NULL;
		enum upload_result res;
		size_t done;
		int err;

		err = spool__peek(d->spool, &b);
		if (err == -ENOENT)
			break;
		if (err)
			return false;
		done = b->done;
		/* One attempt: the spool's backoff is between flushes. */
		res = upload__send(d->u, b, NULL);
		switch (res) {
		case UPLOAD_OK:
			succeeded(d);
			spool__pop(d->spool);
			d->st.sent++;
			d->st.sent_from_spool++;
			break;
		case UPLOAD_REJECTED:
			rejected(d, b);
			spool__pop(d->spool);
			break;
		default:
			/* Series the server took (one /ingest at a time) are not sent twice. */
			if (b->done != done)
				spool__update_head(d->spool, b);
			failed(d);
			batch__free(b);
			return false;
		}
		batch__free(b);
	}
	return true;
}

/*
 * An attempt at b, first in line (d->tries made before). While attempts
 * remain it stays first in line, pending, until its retry is due; once
 * finishing, a failure is final at once, as the run is ending.
 */
static void send_first(struct delivery *d, struct batch *b)
{
	enum upload_result res;

	d->pending = NULL;
	d->tries++;
	res = upload__send(d->u, b, NULL);
	switch (res) {
	case UPLOAD_OK:
		succeeded(d);
		d->st.sent++;
		break;
	case UPLOAD_REJECTED:
		rejected(d, b);
		break;
	default:
		if (res != UPLOAD_UNTRUSTED && !d->finishing_seen && d->tries < d->attempts) {
			d->retry_at =
				clock__mono_ms() + retry_wait(&d->rng, d->u, d->tries, d->attempts);
			d->pending = b;
			return;
		}
		failed(d);
		to_spool(d, b);
	}
	batch__free(b);
}

/* Takes b; behind a spool it lines up in the spool, to keep the order. */
static void deliver(struct delivery *d, struct batch *b)
{
	if (spool__count(d->spool) || d->final_failed) {
		to_spool(d, b);
		batch__free(b);
		return;
	}
	d->tries = 0;
	send_first(d, b);
}

/* Whether the pending batch, or else the spool, is to be tried now. */
static bool retry_due(const struct delivery *d)
{
	if (d->pending)
		return d->finishing_seen || clock__mono_ms() >= d->retry_at;
	if (!spool__count(d->spool))
		return false;
	return d->finishing_seen ? !d->final_failed : clock__mono_ms() >= d->retry_at;
}

static void wait_for_work(struct delivery *d)
{
	struct timespec ts;
	int64_t at;

	if (!d->pending && !spool__count(d->spool)) {
		pthread_cond_wait(&d->cond, &d->lock);
		return;
	}
	at = d->retry_at;
	ts.tv_sec = at / 1000;
	ts.tv_nsec = (at % 1000) * 1000000;
	pthread_cond_timedwait(&d->cond, &d->lock, &ts);
}

static void *run(void *arg)
{
	struct delivery *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		d->finishing_seen = d->finishing;
		if (retry_due(d)) {
			pthread_mutex_unlock(&d->lock);
			if (d->pending)
				send_first(d, d->pending);
			else
				flush_spool(d);
			pthread_mutex_lock(&d->lock);
		} else if (!d->pending && d->qhead < d->qn) {
			struct batch *b = d->queue[d->qhead++];

			d->qbytes -= batch__size(b);
			pthread_mutex_unlock(&d->lock);
			deliver(d, b);
			pthread_mutex_lock(&d->lock);
		} else if (d->finishing_seen && !d->pending) {
			break;
		} else {
			wait_for_work(d);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int delivery__start(struct upload *u, struct spool *spool, int attempts, uint64_t max_queue_bytes,
		    struct delivery **out)
{
	pthread_condattr_t ca;
	sigset_t block, old;
	struct delivery *d;
	int err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->u = u;
	d->spool = spool;
	d->attempts = attempts > 0 ? attempts : 1;
	d->max_queue_bytes = max_queue_bytes;
	d->st.found_in_spool = spool__count(spool);
	d->rng = seed(d);
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals are the main thread's business: it stops sampling and calls finish. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = -pthread_create(&d->thread, NULL, run, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the upload thread: %s", strerror(-err));
		delivery__free(d);
		return err;
	}
	d->started = true;
	*out = d;
	return 0;
}

void delivery__submit(struct delivery *d, struct batch *b)
{
	struct batch **q;

	pthread_mutex_lock(&d->lock);
	/* Only a server stuck for many intervals gets here; the oldest gives way. */
	while (d->qhead < d->qn && d->qbytes + batch__size(b) > d->max_queue_bytes) {
		struct batch *old = d->queue[d->qhead++];

		d->qbytes -= batch__size(old);
		d->queue_dropped++;
		batch__free(old);
	}
	if (d->qhead == d->qn)
		d->qhead = d->qn = 0;
	if (d->qn == d->qcap && d->qhead) {
		memmove(d->queue, d->queue + d->qhead, (d->qn - d->qhead) * sizeof(*q));
		d->qn -= d->qhead;
		d->qhead = 0;
	}
	if (d->qn == d->qcap) {
		size_t cap = d->qcap ? d->qcap * 2 : 16;

		q = reallocarray(d->queue, cap, sizeof(*q));
		if (!q) {
			d->queue_dropped++;
			batch__free(b);
			pthread_mutex_unlock(&d->lock);
			return;
		}
		d->queue = q;
		d->qcap = cap;
	}
	d->queue[d->qn++] = b;
	d->qbytes += batch__size(b);
	d->st.submitted++;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

void delivery__finish(struct delivery *d, struct delivery_stats *st)
{
	if (d->started) {
		pthread_mutex_lock(&d->lock);
		d->finishing = true;
		pthread_cond_signal(&d->cond);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		d->started = false;
	}
	*st = d->st;
	st->dropped = spool__dropped(d->spool) + spool__corrupt(d->spool) + d->write_failures +
		      d->queue_dropped;
	st->in_spool = spool__count(d->spool);
	st->not_ours = spool__refused(d->spool);
}

void delivery__free(struct delivery *d)
{
	struct delivery_stats st;

	if (!d)
		return;
	if (d->started)
		delivery__finish(d, &st);
	while (d->qhead < d->qn)
		batch__free(d->queue[d->qhead++]);
	free(d->queue);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
