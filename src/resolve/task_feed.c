// SPDX-License-Identifier: MIT
/*
 * Hands the kernel's records of processes (sample/perf_record.h) to the
 * symbolizer. A thread's fork, exit or rename is not its process's, and an
 * mmap record becomes the mapping /proc/PID/maps would show.
 */
#include "resolve/task_feed.h"
#include "sample/task_mapping.h"

static void feed_mmap(struct symbolizer *s, const struct task_event *ev)
{
	char name[4096 + 16];
	struct proc_map m;

	if (task_event__mapping(ev, &m, name, sizeof(name)))
		symbolizer__mmap(s, ev->pid, ev->time, &m);
}

void task_feed__apply(struct symbolizer *s, const struct task_event *ev)
{
	switch (ev->type) {
	case TASK_EVENT_FORK:
		if (ev->pid == ev->tid)
			symbolizer__fork(s, ev->ppid, ev->pid, ev->time);
		break;
	case TASK_EVENT_EXIT:
		if (ev->pid == ev->tid)
			symbolizer__exit(s, ev->pid, ev->time);
		break;
	case TASK_EVENT_COMM:
		if (ev->exec)
			symbolizer__exec(s, ev->pid, ev->time, ev->comm);
		else if (ev->pid == ev->tid)
			symbolizer__rename(s, ev->pid, ev->comm);
		break;
	case TASK_EVENT_MMAP:
		feed_mmap(s, ev);
		break;
	case TASK_EVENT_LOST:
		break;
	}
}
