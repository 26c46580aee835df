/* SPDX-License-Identifier: MIT */
/*
 * The command cprof starts with `cprof -- COMMAND`: forked at once but held
 * before exec until sampling has begun, so its first instructions are seen.
 */
#ifndef CPROF_TARGET_H
#define CPROF_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

struct target;

/* Forks; the child waits for target__release() before it execs argv. */
int target__spawn(char *const argv[], struct target **out);
pid_t target__pid(const struct target *t);
/*
 * Lets the child exec. Returns 0, or the exec's negative errno (e.g. -ENOENT)
 * with a message logged, in which case the child has exited with 127.
 */
int target__release(struct target *t);
/* Non-blocking: true once the child has exited; *status gets its wait status. */
bool target__exited(struct target *t, int *status);
/* Blocks until the child exits. */
int target__wait(struct target *t, int *status);
/* The exit code cprof should forward: the child's, or 128+signal. */
int target__exit_code(int status);
/* Kills (if still running) and reaps the child; accepts NULL. */
void target__free(struct target *t);

#endif
