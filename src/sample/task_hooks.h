/* SPDX-License-Identifier: MIT */
/*
 * The fork, exec and exit hooks: the sched tracepoints whose programs keep
 * `spaces` and the targets current (see the BPF program). Found through
 * tracefs, opened as perf events before the object is loaded (while its
 * maps are made), attached when sampling starts.
 */
#ifndef CPROF_TASK_HOOKS_H
#define CPROF_TASK_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler_abi.h"

struct bpf_object;
struct task_hooks;

/* Finds tracefs (mounting it where it is missing) and the fork record's layout; -ENOMEM. */
int task_hooks__new(struct task_hooks **out);
/* NULL-safe; detaches the hooks first. */
void task_hooks__free(struct task_hooks *h);
/* CPROF_FORK_NONE when the fork tracepoint cannot be read: then there are no hooks. */
enum cprof_fork_layout task_hooks__layout(const struct task_hooks *h);
/*
 * The layout of sched_process_fork under the tracefs directory dir (NULL:
 * none) by the offset of child_pid in its format file.
 */
enum cprof_fork_layout task_hooks__read_layout(const char *dir);
/* Opens the tracepoints as perf events, all or none; nothing without a layout. */
void task_hooks__open(struct task_hooks *h);
/*
 * Attaches the programs of obj (cprof_fork_*, cprof_exec, cprof_exit) to
 * the events, and warns about what is lost if it cannot (follow_children:
 * what the warning says). True when all three are attached.
 */
bool task_hooks__attach(struct task_hooks *h, struct bpf_object *obj, bool follow_children);
/* True when the exec hook is attached. */
bool task_hooks__exec_attached(const struct task_hooks *h);
/* Runs of the hooks the kernel skipped (see skipped_runs.h), detached ones' included. */
uint64_t task_hooks__skipped(const struct task_hooks *h);
/* Detaches them; NULL-safe. */
void task_hooks__detach(struct task_hooks *h);

#endif
