// SPDX-License-Identifier: MIT
/* Debug files fetched by worker threads; see debuginfod_queue.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "resolve/debuginfod_queue.h"

#define LOG_MODULE "debuginfod"
#include "lib/log.h"

enum req_state { REQ_QUEUED, REQ_RUNNING, REQ_ENDED };

struct request {
	char *build_id;
	enum req_state state;
	int err;    /* of the fetch, once ended */
	char *path; /* the debug file, when it is there */
	enum debuginfod_status status;
};

struct debuginfod_queue {
	const struct debuginfod *client;
	pthread_t threads[DEBUGINFOD_QUEUE_THREADS];
	size_t nthreads;
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a request queued, or stopping */
	pthread_cond_t ended; /* a request ended */
	/* Under lock: */
	struct request *reqs; /* ticket i + 1 is reqs[i]; served in order from next */
	size_t n, cap, next;
	uint64_t nended;
	size_t busy; /* requests under way */
	bool stopping;
};

/* Fetches one request's file, outside the lock; the outcome goes in under it. */
static void serve(struct debuginfod_queue *q, size_t i, const char *build_id)
{
	struct debuginfod_result res;
	char path[4096];
	int err = debuginfod__fetch(q->client, build_id, path, sizeof(path), &res);
	char *copy = err ? NULL : strdup(path);

	/* The client said why a failure happened, server by server. */
	pr_debug("%s: %s", build_id, res.why);
	pthread_mutex_lock(&q->lock);
	q->reqs[i].err = err ? err : copy ? 0 : -ENOMEM;
	q->reqs[i].path = copy;
	q->reqs[i].status = res.status;
	q->reqs[i].state = REQ_ENDED;
	q->nended++;
	q->busy--;
	pthread_cond_broadcast(&q->ended);
	pthread_mutex_unlock(&q->lock);
}

static void *worker(void *arg)
{
	struct debuginfod_queue *q = arg;
	char *bid;
	size_t i;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stopping && q->next == q->n)
			pthread_cond_wait(&q->work, &q->lock);
		if (q->stopping)
			break;
		i = q->next++;
		q->reqs[i].state = REQ_RUNNING;
		q->busy++;
		/* reqs may move while the lock is not held: the fetch works on its own copy. */
		bid = strdup(q->reqs[i].build_id);
		pthread_mutex_unlock(&q->lock);
		if (bid)
			serve(q, i, bid);
		free(bid);
		pthread_mutex_lock(&q->lock);
		if (!bid) {
			q->reqs[i].err = -ENOMEM;
			q->reqs[i].status = DEBUGINFOD_CANCELLED;
			q->reqs[i].state = REQ_ENDED;
			q->nended++;
			q->busy--;
			pthread_cond_broadcast(&q->ended);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int debuginfod_queue__new(const struct debuginfod *d, struct debuginfod_queue **out)
{
	struct debuginfod_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;
	sigset_t block, old;
	int err = 0;

	*out = NULL;
	if (!q)
		return -ENOMEM;
	q->client = d;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->work, &ca);
	pthread_cond_init(&q->ended, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals are the main thread's: it stops sampling and finishes the profile. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	while (q->nthreads < DEBUGINFOD_QUEUE_THREADS) {
		err = -pthread_create(&q->threads[q->nthreads], NULL, worker, q);
		if (err)
			break;
		q->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!q->nthreads) {
		debuginfod_queue__free(q);
		return err;
	}
	*out = q;
	return 0;
}

void debuginfod_queue__free(struct debuginfod_queue *q)
{
	size_t i;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < q->nthreads; i++)
		pthread_join(q->threads[i], NULL);
	for (i = 0; i < q->n; i++) {
		free(q->reqs[i].build_id);
		free(q->reqs[i].path);
	}
	free(q->reqs);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->ended);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Under lock: the ticket of a build ID already asked for, or 0. */
static uint32_t find(const struct debuginfod_queue *q, const char *build_id)
{
	size_t i;

	/* A run maps tens of stripped files, not thousands: a scan is enough. */
	for (i = 0; i < q->n; i++)
		if (!strcmp(q->reqs[i].build_id, build_id))
			return (uint32_t)(i + 1);
	return 0;
}

/* Under lock: a new request at the end of reqs. */
static int append(struct debuginfod_queue *q, const char *build_id)
{
	size_t cap = q->cap ? 2 * q->cap : 16;
	struct request *r;
	char *copy;

	if (q->n >= UINT32_MAX - 1)
		return -ENOSPC;
	if (q->n == q->cap) {
		r = reallocarray(q->reqs, cap, sizeof(*r));
		if (!r)
			return -ENOMEM;
		q->reqs = r;
		q->cap = cap;
	}
	copy = strdup(build_id);
	if (!copy)
		return -ENOMEM;
	q->reqs[q->n++] = (struct request){.build_id = copy, .state = REQ_QUEUED};
	return 0;
}

int debuginfod_queue__request(struct debuginfod_queue *q, const char *build_id, uint32_t *ticket)
{
	int err = 0;

	pthread_mutex_lock(&q->lock);
	*ticket = find(q, build_id);
	if (!*ticket) {
		err = append(q, build_id);
		if (!err) {
			*ticket = (uint32_t)q->n;
			pthread_cond_signal(&q->work);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

int debuginfod_queue__result(struct debuginfod_queue *q, uint32_t ticket, const char **path)
{
	const struct request *r;
	int ret = -1;

	*path = NULL;
	pthread_mutex_lock(&q->lock);
	if (ticket && ticket <= q->n) {
		r = &q->reqs[ticket - 1];
		if (r->state != REQ_ENDED)
			ret = 0;
		else if (!r->err)
			ret = 1;
		*path = ret == 1 ? r->path : NULL;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

uint64_t debuginfod_queue__ended(struct debuginfod_queue *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->nended;
	pthread_mutex_unlock(&q->lock);
	return n;
}

bool debuginfod_queue__wait(struct debuginfod_queue *q, uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
			      (long)(deadline_ns % 1000000000u)};
	bool done;

	pthread_mutex_lock(&q->lock);
	while (q->nended < q->n && clock__mono_ns() < deadline_ns)
		if (pthread_cond_timedwait(&q->ended, &q->lock, &ts) == ETIMEDOUT)
			break;
	done = q->nended == q->n;
	pthread_mutex_unlock(&q->lock);
	return done;
}

void debuginfod_queue__counts(struct debuginfod_queue *q, struct debuginfod_counts *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->n; i++) {
		if (q->reqs[i].state != REQ_ENDED)
			out->unfinished++;
		else if (q->reqs[i].status < DEBUGINFOD_NSTATUS)
			out->status[q->reqs[i].status]++;
	}
	pthread_mutex_unlock(&q->lock);
	debuginfod__budget(q->client, &out->spent);
}
