// SPDX-License-Identifier: MIT
/*
 * An mmap record as a mapping; see task_mapping.h. In sample/, beside the
 * record, so that the unwinder's region feed takes it from its own stage
 * and resolve/task_feed.c from an earlier one.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "sample/task_mapping.h"

static unsigned int perms_of(const struct task_event *ev)
{
	return (ev->prot & PROT_READ ? PROC_MAP_READ : 0) |
	       (ev->prot & PROT_WRITE ? PROC_MAP_WRITE : 0) |
	       (ev->prot & PROT_EXEC ? PROC_MAP_EXEC : 0) |
	       (ev->flags & MAP_PRIVATE ? PROC_MAP_PRIVATE : 0);
}

bool task_event__mapping(const struct task_event *ev, struct proc_map *m, char *name, size_t size)
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
