// SPDX-License-Identifier: MIT
/*
 * Unwind tables built by threads of their own; see table_loader.h. The
 * threads, queues and stopping are symtab_loader.c's (resolve/), for jobs
 * of any kind, with an eventfd to wake the loop.
 *
 * A build may block in a read for as long as the file's server likes (a
 * FUSE-served file), where no look at the clock ends it. So the caller
 * never waits for a build without a deadline: past it, the job is left
 * behind, the loader's to drop when the read returns, and a thread still
 * inside one when the loader is freed frees the loader itself, last, on
 * its way out.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "unwind/table_loader.h"

struct job {
	void *work;
	uint64_t cost;
	bool left_behind; /* the caller gave up on it: the loader drops it */
	struct job *next;
};

/* A first-in first-out list of jobs. */
struct job_list {
	struct job *head, **tail;
};

/* One thread and its queue. */
struct lane {
	struct table_loader *l;
	pthread_t thread;
	bool started;
	/* Under the loader's lock: */
	struct job_list queued; /* posted, not begun */
	struct job *running;	/* under way (the thread holds it), or NULL */
};

enum { LANE_SMALL, LANE_LARGE, LANE_HUGE, NLANES };

struct table_loader {
	struct lane lanes[NLANES];
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a job posted, or quitting */
	pthread_cond_t ended; /* a job ended */
	/* Under lock: */
	struct job_list done; /* ended, not taken back */
	size_t pending;	      /* posted, not taken back nor left behind */
	size_t alive;	      /* threads not ended */
	bool quit;
	bool orphaned; /* freed with a thread in a build: the last thread out frees it */
	/* Read by the build under way, which holds no lock. */
	atomic_bool stop;
	table_job_run_fn run;
	table_job_drop_fn drop;
	int efd; /* readable while done is not empty */
};

static void job_list__push(struct job_list *l, struct job *j)
{
	j->next = NULL;
	*l->tail = j;
	l->tail = &j->next;
}

static struct job *job_list__pop(struct job_list *l)
{
	struct job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = &l->head;
	}
	return j;
}

/* Queues j behind the jobs of its cost or less. */
static void job_list__insert(struct job_list *l, struct job *j)
{
	struct job **pp = &l->head;

	while (*pp && (*pp)->cost <= j->cost)
		pp = &(*pp)->next;
	j->next = *pp;
	*pp = j;
	if (!j->next)
		l->tail = &j->next;
}

/* Jobs no caller will take back: ours to drop. */
static void free_jobs(struct table_loader *l, struct job_list *list)
{
	struct job *j;

	while ((j = job_list__pop(list))) {
		l->drop(j->work);
		free(j);
	}
}

static void destroy(struct table_loader *l)
{
	size_t i;

	for (i = 0; i < NLANES; i++)
		free_jobs(l, &l->lanes[i].queued);
	free_jobs(l, &l->done);
	if (l->efd >= 0)
		close(l->efd);
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->ended);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* Under lock: a build ended; the loop is woken to take it, unless it was left behind. */
static void end_job(struct table_loader *l, struct lane *lane, struct job *j)
{
	uint64_t one = 1;

	lane->running = NULL;
	if (j->left_behind) {
		l->drop(j->work);
		free(j);
	} else {
		/* A failed write: the counter is full, readable already. */
		if (!l->done.head)
			(void)!write(l->efd, &one, sizeof(one));
		job_list__push(&l->done, j);
	}
	pthread_cond_broadcast(&l->ended);
}

static void *worker(void *arg)
{
	struct lane *lane = arg;
	struct table_loader *l = lane->l;
	bool last;
	struct job *j;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->quit && !lane->queued.head)
			pthread_cond_wait(&l->work, &l->lock);
		j = job_list__pop(&lane->queued);
		if (!j)
			break;
		lane->running = j;
		pthread_mutex_unlock(&l->lock);
		/* The whole cost of a file, outside the lock: posts and takes go on. */
		l->run(j->work, &l->stop);
		pthread_mutex_lock(&l->lock);
		end_job(l, lane, j);
	}
	last = !--l->alive && l->orphaned;
	pthread_mutex_unlock(&l->lock);
	if (last)
		destroy(l);
	return NULL;
}

/*
 * Under lock: whether a build is queued or under way, of those the caller
 * waits for (all: those left behind too, which a thread may still be in).
 */
static bool busy(const struct table_loader *l, bool all)
{
	const struct job *j;
	size_t i;

	for (i = 0; i < NLANES; i++) {
		for (j = l->lanes[i].queued.head; j; j = j->next)
			if (all || !j->left_behind)
				return true;
		j = l->lanes[i].running;
		if (j && (all || !j->left_behind))
			return true;
	}
	return false;
}

/* Under lock: the jobs queued or under way are given up: how many were not already. */
static size_t leave_behind(struct table_loader *l)
{
	size_t i, n = 0;
	struct job *j;

	for (i = 0; i < NLANES; i++) {
		for (j = l->lanes[i].queued.head; j; j = j->next)
			n += !j->left_behind;
		if (l->lanes[i].running)
			n += !l->lanes[i].running->left_behind;
		for (j = l->lanes[i].queued.head; j; j = j->next)
			j->left_behind = true;
		if (l->lanes[i].running)
			l->lanes[i].running->left_behind = true;
	}
	l->pending -= n;
	return n;
}

int table_loader__new(table_job_run_fn run, table_job_drop_fn drop, struct table_loader **out)
{
	struct table_loader *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	sigset_t block, old;
	int err = 0;
	size_t i;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	for (i = 0; i < NLANES; i++) {
		l->lanes[i].l = l;
		l->lanes[i].queued.tail = &l->lanes[i].queued.head;
	}
	l->done.tail = &l->done.head;
	l->run = run;
	l->drop = drop;
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0) {
		err = -errno;
		free(l);
		return err;
	}
	atomic_init(&l->stop, false);
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->work, &ca);
	pthread_cond_init(&l->ended, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals are the main thread's: it stops sampling and finishes the profile. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < NLANES && !err; i++) {
		err = -pthread_create(&l->lanes[i].thread, NULL, worker, &l->lanes[i]);
		l->lanes[i].started = !err;
		l->alive += !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*out = l;
	if (err) {
		table_loader__free(l);
		*out = NULL;
	}
	return err;
}

void table_loader__free(struct table_loader *l)
{
	bool stuck;
	size_t i;

	if (!l)
		return;
	table_loader__stop(l, clock__mono_ns() + TABLE_LOADER_STOP_NS);
	pthread_mutex_lock(&l->lock);
	l->quit = true;
	stuck = busy(l, true);
	l->orphaned = stuck;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	/* A thread blocked in a read is not waited for: it frees l on its way out. */
	for (i = 0; i < NLANES; i++)
		if (l->lanes[i].started) {
			if (stuck)
				pthread_detach(l->lanes[i].thread);
			else
				pthread_join(l->lanes[i].thread, NULL);
		}
	if (!stuck)
		destroy(l);
}

int table_loader__post(struct table_loader *l, void *work, uint64_t cost)
{
	struct job *j = calloc(1, sizeof(*j));
	size_t lane = cost > TABLE_LOADER_HUGE	  ? LANE_HUGE
		      : cost > TABLE_LOADER_LARGE ? LANE_LARGE
						  : LANE_SMALL;

	if (!j)
		return -ENOMEM;
	j->work = work;
	j->cost = cost;
	pthread_mutex_lock(&l->lock);
	job_list__insert(&l->lanes[lane].queued, j);
	l->pending++;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

void *table_loader__take(struct table_loader *l)
{
	struct job *j;
	void *work = NULL;
	uint64_t n;

	pthread_mutex_lock(&l->lock);
	j = job_list__pop(&l->done);
	if (j)
		l->pending--;
	/* Emptied under the lock: a job that ends next writes it again. */
	if (!l->done.head)
		(void)!read(l->efd, &n, sizeof(n));
	pthread_mutex_unlock(&l->lock);
	if (j)
		work = j->work;
	free(j);
	return work;
}

int table_loader__fd(const struct table_loader *l)
{
	return l->efd;
}

/* Under lock: waits for the builds to end, or deadline_ns. True when none is left. */
static bool wait_locked(struct table_loader *l, uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
			      (long)(deadline_ns % 1000000000u)};

	while (busy(l, false) && clock__mono_ns() < deadline_ns)
		if (pthread_cond_timedwait(&l->ended, &l->lock, &ts) == ETIMEDOUT)
			break;
	return !busy(l, false);
}

bool table_loader__wait_one(struct table_loader *l, uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
			      (long)(deadline_ns % 1000000000u)};
	bool done;

	pthread_mutex_lock(&l->lock);
	while (!l->done.head && busy(l, false) && clock__mono_ns() < deadline_ns)
		if (pthread_cond_timedwait(&l->ended, &l->lock, &ts) == ETIMEDOUT)
			break;
	done = l->done.head != NULL;
	pthread_mutex_unlock(&l->lock);
	return done;
}

size_t table_loader__stop(struct table_loader *l, uint64_t deadline_ns)
{
	size_t n = 0;

	atomic_store(&l->stop, true);
	pthread_mutex_lock(&l->lock);
	if (!wait_locked(l, deadline_ns))
		n = leave_behind(l);
	pthread_mutex_unlock(&l->lock);
	return n;
}
