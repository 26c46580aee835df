// SPDX-License-Identifier: MIT
/* Symbol tables loaded by a thread of their own; see symtab_loader.h. */
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
	bool running;		/* a job is under way (the thread holds it) */
};

enum { LANE_SMALL, LANE_LARGE, NLANES };

struct symtab_loader {
	struct lane lanes[NLANES];
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a job posted, or quitting */
	pthread_cond_t ended; /* a job ended */
	/* Under lock: */
	struct job_list done; /* ended, not taken back */
	size_t pending;	      /* posted, not taken back */
	bool quit;
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

static void free_jobs(struct job_list *l)
{
	struct job *j;

	while ((j = job_list__pop(l)))
		free(j);
}

static void *worker(void *arg)
{
	struct lane *lane = arg;
	struct symtab_loader *l = lane->l;
	struct job *j;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->quit && !lane->queued.head)
			pthread_cond_wait(&l->work, &l->lock);
		j = job_list__pop(&lane->queued);
		if (!j)
			break;
		lane->running = true;
		pthread_mutex_unlock(&l->lock);
		/* The whole cost of a file, outside the lock: posts and takes go on. */
		elf_symtab__load(j->e, &l->stop);
		pthread_mutex_lock(&l->lock);
		lane->running = false;
		job_list__push(&l->done, j);
		pthread_cond_broadcast(&l->ended);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Under lock: whether a load is queued or under way. */
static bool busy(const struct symtab_loader *l)
{
	size_t i;

	for (i = 0; i < NLANES; i++)
		if (l->lanes[i].queued.head || l->lanes[i].running)
			return true;
	return false;
}

/* Ends the threads started (after a stop: none holds a job) and frees l. */
static void end_threads(struct symtab_loader *l)
{
	size_t i;

	pthread_mutex_lock(&l->lock);
	l->quit = true;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	for (i = 0; i < NLANES; i++) {
		if (l->lanes[i].started)
			pthread_join(l->lanes[i].thread, NULL);
		free_jobs(&l->lanes[i].queued);
	}
	free_jobs(&l->done);
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->ended);
	pthread_mutex_destroy(&l->lock);
	free(l);
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
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		end_threads(l);
		return err;
	}
	*out = l;
	return 0;
}

void symtab_loader__free(struct symtab_loader *l)
{
	if (!l)
		return;
	symtab_loader__stop(l);
	end_threads(l);
}

int symtab_loader__post(struct symtab_loader *l, struct elf_symtab *e, void *owner)
{
	struct job *j = malloc(sizeof(*j));
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

bool symtab_loader__wait(struct symtab_loader *l, uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
			      (long)(deadline_ns % 1000000000u)};
	bool done;

	pthread_mutex_lock(&l->lock);
	while (busy(l) && clock__mono_ns() < deadline_ns)
		if (pthread_cond_timedwait(&l->ended, &l->lock, &ts) == ETIMEDOUT)
			break;
	done = !busy(l);
	pthread_mutex_unlock(&l->lock);
	return done;
}

void symtab_loader__stop(struct symtab_loader *l)
{
	atomic_store(&l->stop, true);
	pthread_mutex_lock(&l->lock);
	while (busy(l))
		pthread_cond_wait(&l->ended, &l->lock);
	pthread_mutex_unlock(&l->lock);
}
