/* SPDX-License-Identifier: MIT */
/*
 * Series labels: the name/value pairs that tell a profiling server whose
 * profile it is. Every series gets the defaults (what was profiled, on which
 * host) and the user's --label pairs; in whole-system mode each process's
 * series also gets its pid, comm and cgroup identity, read from
 * /proc/PID/cgroup: the cgroup path, the container ID and the systemd unit.
 */
#ifndef CPROF_LABELS_H
#define CPROF_LABELS_H

#include <stddef.h>
#include <stdint.h>

struct label {
	char *name;
	char *value;
};

/* Sorted by name, names unique: the canonical form servers compare. */
struct labels {
	struct label *v;
	size_t n;
};

/* Sets (or replaces) name to a copy of value; 0 or -ENOMEM. */
int labels__set(struct labels *l, const char *name, const char *value);
const char *labels__get(const struct labels *l, const char *name);
/* Sets every label of src in dst, replacing those of the same name. */
int labels__merge(struct labels *dst, const struct labels *src);
void labels__clear(struct labels *l);

/* Adds a --label NAME=VALUE; returns NULL, or why the argument is refused. */
const char *labels__parse_arg(struct labels *l, const char *arg);
/* __name__, service_name, hostname, kernel_release and arch. */
int labels__defaults(struct labels *l, const char *service_name);

struct cgroup_identity {
	char path[512];	       /* "" when the process sits in the root cgroup */
	char container_id[65]; /* 64 hex digits, or "" */
	char unit[256];	       /* e.g. "sshd.service", or "" */
};

/* From the text of /proc/PID/cgroup (v1, v2 or hybrid); -ENOENT if it names no cgroup. */
int labels__parse_cgroup(const char *text, size_t len, struct cgroup_identity *out);
/* Reads /proc/PID/cgroup; -ESRCH when the process is gone. */
int labels__read_cgroup(uint32_t pid, struct cgroup_identity *out);
/*
 * Adds pid, comm and, when cg names a cgroup, cgroup, container_id and
 * systemd_unit. Values are made valid UTF-8 without control characters
 * (a process chooses its own comm).
 */
int labels__add_process(struct labels *l, uint32_t pid, const char *comm,
			const struct cgroup_identity *cg);

#endif
