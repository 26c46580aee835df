// SPDX-License-Identifier: MIT
/*
 * Symbol tables loaded by threads of their own; see symtab_loader.h.
 *
 * A load may block in a read for as long as the file's server likes (a
 * FUSE-served file), where no look at the clock ends it. So the caller
 * never waits for a load without a deadline: past it, the load is left
 * behind, its elf_symtab the loader's to free when the read returns, and
 * a thread still inside one when the loader is freed frees the loader
 * itself, last, on its way out.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "lib/clock.h"
#include "resolve/elf_symtab.h"
#include "resolve/symtab_loader.h"

struct job {
	struct elf_symtab *e;
	void *owner;
	bool left_behind; /* the caller gave up on it: the loader frees e */
	struct job *next;
};

/* A first-in first-out list of jobs. */
struct job_list {
	struct job *head, **tail;
};

/* One thread and its queue. */
struct lane {
	struct symtab_loader *l;
	pthread_t thread;
	bool started;
	/* Under the loader's lock: */
	struct job_list queued; /* posted, not begun */
	struct job *running;	/* under way (the thread holds it), or NULL */
};

enum { LANE_SMALL, LANE_LARGE, NLANES };

struct symtab_loader {
	struct lane lanes[NLANES];
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a job posted, or quitting */
	pthread_cond_t ended; /* a job ended */
	/* Under lock: */
	struct job_list done; /* ended, not taken back */
	size_t pending;	      /* posted, not taken back nor left behind */
	size_t alive;	      /* threads not ended */
	bool quit;
	bool orphaned; /* freed with a thread in a load: the last thread out frees it */
	/* Read by the load under way, which holds no lock: see elf_symtab__load. */
	atomic_bool stop;
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

/* Jobs no caller will take back: their files are ours to free. */
static void free_jobs(struct job_list *l)
{
	struct job *j;

	while ((j = job_list__pop(l))) {
		if (j->left_behind)
			elf_symtab__free(j->e);
		free(j);
	}
}

static void destroy(struct symtab_loader *l)
{
	size_t i;

	for (i = 0; i < NLANES; i++)
		free_jobs(&l->lanes[i].queued);
	free_jobs(&l->done);
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->ended);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/*
 * Under lock: a load ended. Its failure is counted (elf_symtab__load's
 * budget) unless it was left behind, counted by the caller then.
 */
static void end_job(struct symtab_loader *l, struct lane *lane, struct job *j, int err)
{
	lane->running = NULL;
	if (j->left_behind) {
		elf_symtab__free(j->e);
		free(j);
	} else {
		if (err)
			elf_symtab__count_failure(j->e, err);
		job_list__push(&l->done, j);
	}
	pthread_cond_broadcast(&l->ended);
}

static void *worker(void *arg)
{
	struct lane *lane = arg;
	struct symtab_loader *l = lane->l;
	bool last;
	struct job *j;
	int err;

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
		err = elf_symtab__load(j->e, &l->stop);
		pthread_mutex_lock(&l->lock);
		end_job(l, lane, j, err);
	}
	last = !--l->alive && l->orphaned;
	pthread_mutex_unlock(&l->lock);
	if (last)
		destroy(l);
	return NULL;
}

/*
 * Under lock: whether a load is queued or under way, of those the caller
 * waits for (all: those left behind too, which a thread may still be in).
 */
static bool busy(const struct symtab_loader *l, bool all)
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
static size_t leave_behind(struct symtab_loader *l)
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

int symtab_loader__new(struct symtab_loader **out)
{
	struct symtab_loader *l = calloc(1, sizeof(*l));
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
		symtab_loader__free(l);
		*out = NULL;
	}
	return err;
}

void symtab_loader__free(struct symtab_loader *l)
{
	bool stuck;
	size_t i;

	if (!l)
		return;
	symtab_loader__stop(l, clock__mono_ns() + SYMTAB_LOADER_STOP_NS);
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

int symtab_loader__post(struct symtab_loader *l, struct elf_symtab *e, void *owner)
{
	struct job *j = calloc(1, sizeof(*j));
	size_t lane;

	if (!j)
		return -ENOMEM;
	j->e = e;
	j->owner = owner;
	lane = elf_symtab__symbols_claimed(e) > SYMTAB_LOADER_LARGE ? LANE_LARGE : LANE_SMALL;
	pthread_mutex_lock(&l->lock);
	job_list__push(&l->lanes[lane].queued, j);
	l->pending++;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

void *symtab_loader__take(struct symtab_loader *l)
{
	struct job *j;
	void *owner = NULL;

	pthread_mutex_lock(&l->lock);
	j = job_list__pop(&l->done);
	if (j)
		l->pending--;
	pthread_mutex_unlock(&l->lock);
	if (j)
		owner = j->owner;
	free(j);
	return owner;
}

size_t symtab_loader__pending(struct symtab_loader *l)
{
	size_t n;

	pthread_mutex_lock(&l->lock);
	n = l->pending;
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* Under lock: waits for the loads to end, or deadline_ns. True when none is left. */
static bool wait_locked(struct symtab_loader *l, uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
			      (long)(deadline_ns % 1000000000u)};

	while (busy(l, false) && clock__mono_ns() < deadline_ns)
		if (pthread_cond_timedwait(&l->ended, &l->lock, &ts) == ETIMEDOUT)
			break;
	return !busy(l, false);
}

bool symtab_loader__wait(struct symtab_loader *l, uint64_t deadline_ns)
{
	bool done;

	pthread_mutex_lock(&l->lock);
	done = wait_locked(l, deadline_ns);
	pthread_mutex_unlock(&l->lock);
	return done;
}

size_t symtab_loader__stop(struct symtab_loader *l, uint64_t deadline_ns)
{
	size_t n = 0;

	atomic_store(&l->stop, true);
	pthread_mutex_lock(&l->lock);
	if (!wait_locked(l, deadline_ns))
		n = leave_behind(l);
	pthread_mutex_unlock(&l->lock);
	return n;
}
