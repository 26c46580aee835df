// SPDX-License-Identifier: MIT
/*
 * The processes a run with a PID filter samples: added by the caller, by
 * the fork hook in the kernel, late from the kernel's fork record, and
 * removed once they have exited.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/sampler_internal.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

int targets__set(struct sampler *s, uint32_t pid, __u32 value)
{
	int err;

	err = bpf_map_update_elem(FD(&s->cur, targets), &pid, &value, BPF_ANY);
	if (err) {
		err = -errno;
		pr_err("cannot add PID %u to the targets map: %s", pid, strerror(-err));
	}
	return err;
}

int sampler__add_target(struct sampler *s, uint32_t pid)
{
	return targets__set(s, pid, CPROF_TARGET_ON);
}

int sampler__add_command(struct sampler *s, uint32_t pid)
{
	s->command_pid = pid;
	return targets__set(s, pid, CPROF_TARGET_ON);
}

int sampler__prune_targets(struct sampler *s)
{
	int fd = FD(&s->cur, targets), n = 0;
	__u32 key, next, *dead = NULL, ndead = 0, cap = 0, *tmp;
	bool first = true;
	char path[32];

	if (!s->opts.filter_pids)
		return 0;
	/* Collect first: deleting while walking a hash map restarts the walk. */
	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		snprintf(path, sizeof(path), "/proc/%u", key);
		if (access(path, F_OK) == 0)
			continue;
		if (ndead == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(dead, cap * sizeof(*dead));
			if (!tmp)
				break;
			dead = tmp;
		}
		dead[ndead++] = key;
	}
	for (__u32 i = 0; i < ndead; i++)
		n += bpf_map_delete_elem(fd, &dead[i]) == 0;
	free(dead);
	return n;
}

int sampler__follow_late(struct sampler *s, uint32_t parent, uint32_t child)
{
	int fd = FD(&s->cur, targets);
	char path[32];
	__u32 value;

	if (!s->opts.filter_pids || !s->opts.follow_children || s->stopped ||
	    bpf_map_lookup_elem(fd, &parent, &value) || value != CPROF_TARGET_ON)
		return 0;
	/* Gone already: its entry may have been pruned (sampler__prune_targets), not missed. */
	snprintf(path, sizeof(path), "/proc/%u", child);
	if (access(path, F_OK))
		return 0;
	value = CPROF_TARGET_ON;
	if (!bpf_map_update_elem(fd, &child, &value, BPF_NOEXIST))
		return 1;
	return errno == EEXIST ? 0 : -errno;
}
