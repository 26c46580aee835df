// SPDX-License-Identifier: MIT
/*
 * Hands the kernel's records of processes (sample/perf_record.h) to the
 * symbolizer. A thread's fork, exit or rename is not its process's, and an
 * mmap record becomes the mapping /proc/PID/maps would show.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "resolve/task_feed.h"

static unsigned int perms_of(const struct task_event *ev)
{
	return (ev->prot & PROT_READ ? PROC_MAP_READ : 0) |
	       (ev->prot & PROT_WRITE ? PROC_MAP_WRITE : 0) |
	       (ev->prot & PROT_EXEC ? PROC_MAP_EXEC : 0) |
	       (ev->flags & MAP_PRIVATE ? PROC_MAP_PRIVATE : 0);
}

bool task_feed__mapping(const struct task_event *ev, struct proc_map *m, char *name, size_t size)
{
	*m = (struct proc_map){
		.start = ev->start,
		.end = ev->start + ev->len,
		.offset = ev->pgoff,
		.inode = ev->inode,
		.dev_major = ev->dev_major,
		.dev_minor = ev->dev_minor,
		.perms = perms_of(ev),
	};
	/* A length that wraps is no mapping (the table refuses an empty one). */
	if (m->end < m->start)
		return false;
	snprintf(name, size, "%s", ev->filename ? ev->filename : "");
	proc_map__set_name(m, name);
	return true;
}

static void feed_mmap(struct symbolizer *s, const struct task_event *ev)
{
	char name[4096 + 16];
	struct proc_map m;

	if (task_feed__mapping(ev, &m, name, sizeof(name)))
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
