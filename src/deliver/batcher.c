// SPDX-License-Identifier: MIT
/* Profile -> batch; see batcher.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "upload"
#include "build/profile.h"
#include "deliver/batch.h"
#include "deliver/batcher.h"
#include "deliver/labels.h"
#include "encode/pprof.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/u64map.h"

struct batcher {
	struct labels defaults;
	struct labels user;
	bool per_process;
	struct u64map *cgroups; /* pid -> struct cgroup_identity *, while per_process */
};

int batcher__new(const char *service_name, const struct labels *user, bool per_process,
		 struct batcher **out)
{
	struct batcher *bt;
	int err;

	*out = NULL;
	bt = calloc(1, sizeof(*bt));
	if (!bt)
		return -ENOMEM;
	bt->per_process = per_process;
	err = labels__defaults(&bt->defaults, service_name);
	if (!err && user)
		err = labels__merge(&bt->user, user);
	if (!err && per_process) {
		bt->cgroups = u64map__new();
		if (!bt->cgroups)
			err = -ENOMEM;
	}
	if (err) {
		batcher__free(bt);
		return err;
	}
	*out = bt;
	return 0;
}

void batcher__free(struct batcher *bt)
{
	uint64_t key, val;
	size_t pos = 0;

	if (!bt)
		return;
	if (bt->cgroups)
		while (u64map__next(bt->cgroups, &pos, &key, &val))
			free((void *)(uintptr_t)val);
	u64map__free(bt->cgroups);
	labels__clear(&bt->defaults);
	labels__clear(&bt->user);
	free(bt);
}

/* Reads pid's cgroup into the cache; false if the process is gone (the cache stays). */
static bool refresh(struct batcher *bt, uint32_t pid)
{
	struct cgroup_identity cg, *c;
	uint64_t v;
	int err;

	err = labels__read_cgroup(pid, &cg);
	if (err == -ESRCH)
		return false;
	if (err && err != -ENOENT)
		return true;
	if (u64map__get(bt->cgroups, pid, &v)) {
		*(struct cgroup_identity *)(uintptr_t)v = cg;
		return true;
	}
	c = malloc(sizeof(*c));
	if (!c)
		return true;
	*c = cg;
	if (u64map__set(bt->cgroups, pid, (uintptr_t)c))
		free(c);
	return true;
}

void batcher__note_process(struct batcher *bt, uint32_t pid)
{
	if (bt->per_process && pid)
		refresh(bt, pid);
}

static int add_series(struct batcher *bt, struct batch *b, const struct profile *p, bool process)
{
	struct labels labels = {0};
	uint8_t *gz = NULL;
	size_t len = 0;
	int err;

	err = labels__merge(&labels, &bt->defaults);
	if (!err && process) {
		const struct profile_sample *s = profile__sample(p, 0);
		uint32_t pid = s->labels.pid;
		uint64_t v = 0;

		if (pid)
			refresh(bt, pid);
		u64map__get(bt->cgroups, pid, &v);
		err = labels__add_process(&labels, pid, s->labels.comm,
					  (const struct cgroup_identity *)(uintptr_t)v);
	}
	if (!err)
		err = labels__merge(&labels, &bt->user);
	if (!err)
		err = pprof__encode_gz(p, &gz, &len);
	if (err) {
		labels__clear(&labels);
		return err;
	}
	return batch__add(b, &labels, gz, len, NULL);
}

/* Processes that have exited were seen for the last time in this batch. */
static void forget_gone(struct batcher *bt)
{
	uint64_t key, val, *gone;
	size_t pos = 0, n = 0, i;

	gone = calloc(u64map__count(bt->cgroups) + 1, sizeof(*gone));
	if (!gone)
		return;
	while (u64map__next(bt->cgroups, &pos, &key, &val))
		if (!procfs__pid_exists((uint32_t)key))
			gone[n++] = key;
	for (i = 0; i < n; i++) {
		if (u64map__get(bt->cgroups, gone[i], &val))
			free((void *)(uintptr_t)val);
		u64map__delete(bt->cgroups, gone[i]);
	}
	free(gone);
}

int batcher__make(struct batcher *bt, const struct profile *p, struct batch **out)
{
	const struct profile_meta *meta = profile__meta(p);
	struct profile **parts = NULL;
	size_t nparts = 0, i;
	struct batch *b;
	int err = 0;

	*out = NULL;
	b = batch__new(meta->time_ns, meta->duration_ns);
	if (!b)
		return -ENOMEM;
	if (!profile__sample_count(p)) {
		*out = b;
		return 0;
	}
	if (!bt->per_process) {
		err = add_series(bt, b, p, false);
	} else {
		err = profile__split_by_pid(p, &parts, &nparts);
		for (i = 0; i < nparts && !err; i++)
			err = add_series(bt, b, parts[i], true);
		for (i = 0; i < nparts; i++)
			profile__free(parts[i]);
		free(parts);
		forget_gone(bt);
	}
	if (err) {
		pr_err("cannot prepare the profile for upload: %s", strerror(-err));
		batch__free(b);
		return err;
	}
	*out = b;
	return 0;
}
