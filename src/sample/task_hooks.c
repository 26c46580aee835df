// SPDX-License-Identifier: MIT
/*
 * The fork, exec and exit hooks: the sched tracepoints that keep `spaces`
 * (see the BPF program) and the targets current as processes come and go.
 * Found through tracefs, opened as perf events before the load, attached
 * when sampling starts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "sample/perf_attach.h"
#include "sample/skipped_runs.h"
#include "sample/task_hooks.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

/* The tracepoints that follow processes: see `spaces` in the BPF program. */
enum hook { HOOK_FORK, HOOK_EXEC, HOOK_EXIT, HOOK_MAX };
static const char *const hook_names[HOOK_MAX] = {"sched_process_fork", "sched_process_exec",
						 "sched_process_exit"};

struct task_hooks {
	const char *tracefs; /* where tracepoints are, or NULL */
	enum cprof_fork_layout layout;
	/* Links, and events until a link owns them (or -1). */
	struct bpf_link *links[HOOK_MAX];
	int fds[HOOK_MAX];
	int open_err;		 /* why the events could not be opened */
	uint64_t skipped_before; /* runs the kernel skipped, of the links gone */
};

/* libbpf resolves tracepoints through tracefs; mount it where it is missing. */
static const char *tracefs_dir(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (access(path, F_OK) == 0)
			return dirs[i];
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		pr_debug("mounted tracefs on /sys/kernel/tracing");
		return dirs[0];
	}
	pr_debug("cannot mount tracefs: %s", strerror(errno));
	return NULL;
}

/* Reads the offset of child_pid in sched_process_fork to pick the record layout. */
enum cprof_fork_layout task_hooks__read_layout(const char *dir)
{
	char path[256], line[256];
	enum cprof_fork_layout layout = CPROF_FORK_NONE;
	FILE *f;
	int off;

	if (!dir)
		return CPROF_FORK_NONE;
	snprintf(path, sizeof(path), "%s/events/sched/sched_process_fork/format", dir);
	f = fopen(path, "re");
	if (!f)
		return CPROF_FORK_NONE;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "child_pid;");

		if (!p || !(p = strstr(p, "offset:")) || sscanf(p, "offset:%d", &off) != 1)
			continue;
		if (off == 44)
			layout = CPROF_FORK_STATIC_COMM;
		else if (off == 20)
			layout = CPROF_FORK_DYNAMIC_COMM;
		break;
	}
	fclose(f);
	return layout;
}

int task_hooks__new(struct task_hooks **out)
{
	struct task_hooks *h = calloc(1, sizeof(*h));

	*out = h;
	if (!h)
		return -ENOMEM;
	for (int i = 0; i < HOOK_MAX; i++)
		h->fds[i] = -1;
	h->tracefs = tracefs_dir();
	h->layout = h->tracefs ? task_hooks__read_layout(h->tracefs) : CPROF_FORK_NONE;
	return 0;
}

enum cprof_fork_layout task_hooks__layout(const struct task_hooks *h)
{
	return h->layout;
}

static void close_hook_fds(struct task_hooks *h)
{
	int i;

	for (i = 0; i < HOOK_MAX; i++) {
		if (h->fds[i] >= 0)
			close(h->fds[i]);
		h->fds[i] = -1;
	}
}

/* The hooks' tracepoints as perf events, for the programs to be attached later: all or none. */
void task_hooks__open(struct task_hooks *h)
{
	int i, fd;

	if (h->layout == CPROF_FORK_NONE)
		return;
	for (i = 0; i < HOOK_MAX; i++) {
		fd = perf_attach__tracepoint(h->tracefs, "sched", hook_names[i]);
		if (fd < 0) {
			h->open_err = fd;
			close_hook_fds(h);
			return;
		}
		h->fds[i] = fd;
	}
}

/* Attaches a program to a tracepoint event opened by task_hooks__open(). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, int *fd)
{
	struct bpf_link *link;

	link = perf_attach__link(prog, *fd);
	if (link)
		*fd = -1; /* the link owns it now */
	return link;
}

#define PROG(name) bpf_object__find_program_by_name(obj, #name)

bool task_hooks__attach(struct task_hooks *h, struct bpf_object *obj, bool follow_children)
{
	struct bpf_program *progs[HOOK_MAX] = {
		h->layout == CPROF_FORK_STATIC_COMM ? PROG(cprof_fork_static_comm)
						    : PROG(cprof_fork_dynamic_comm),
		PROG(cprof_exec),
		PROG(cprof_exit),
	};
	int i, err;

	if (h->layout == CPROF_FORK_NONE)
		return false;
	err = h->open_err;
	for (i = 0; i < HOOK_MAX && !err; i++) {
		h->links[i] = attach_tracepoint(progs[i], &h->fds[i]);
		if (!h->links[i])
			err = -errno;
	}
	if (err)
		pr_warn("cannot attach to %s: %s: %s", i ? hook_names[i - 1] : hook_names[0],
			strerror(-err),
			follow_children
				? "children started during the profile are not followed"
				: "a sample taken before its process's exec may be named after "
				  "the program it ran next");
	return !err;
}

bool task_hooks__exec_attached(const struct task_hooks *h)
{
	return h->links[HOOK_EXEC];
}

uint64_t task_hooks__skipped(const struct task_hooks *h)
{
	uint64_t n = h->skipped_before;

	for (int i = 0; i < HOOK_MAX; i++)
		n += skipped_runs__link(h->links[i]);
	return n;
}

void task_hooks__detach(struct task_hooks *h)
{
	if (!h)
		return;
	for (int i = 0; i < HOOK_MAX; i++) {
		h->skipped_before += skipped_runs__link(h->links[i]);
		bpf_link__destroy(h->links[i]);
		h->links[i] = NULL;
	}
}

void task_hooks__free(struct task_hooks *h)
{
	if (!h)
		return;
	task_hooks__detach(h);
	close_hook_fds(h);
	free(h);
}
