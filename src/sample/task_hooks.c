// SPDX-License-Identifier: MIT
/*
 * The fork, exec and exit hooks: the sched tracepoints that keep `spaces`
 * (see the BPF program) and the targets current as processes come and go.
 * Found through tracefs, opened as perf events before the load, attached
 * when sampling starts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "sample/perf_attach.h"
#include "sample/sampler_internal.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

static const char *const hook_names[HOOK_MAX] = {"sched_process_fork", "sched_process_exec",
						 "sched_process_exit"};

/* libbpf resolves tracepoints through tracefs; mount it where it is missing. */
const char *tracefs_dir(void)
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
enum cprof_fork_layout fork_layout(const char *dir)
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

void close_hook_fds(struct sampler *s)
{
	int i;

	for (i = 0; i < HOOK_MAX; i++) {
		if (s->hook_fds[i] >= 0)
			close(s->hook_fds[i]);
		s->hook_fds[i] = -1;
	}
}

/* The hooks' tracepoints as perf events, for the programs to be attached later: all or none. */
void open_tracepoints(struct sampler *s, const char *tracefs)
{
	int i, fd;

	for (i = 0; i < HOOK_MAX; i++) {
		fd = perf_attach__tracepoint(tracefs, "sched", hook_names[i]);
		if (fd < 0) {
			s->tracepoint_err = fd;
			close_hook_fds(s);
			return;
		}
		s->hook_fds[i] = fd;
	}
}

/* Attaches a program to a tracepoint event opened by open_tracepoints(). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, int *fd)
{
	struct bpf_link *link;

	link = perf_attach__link(prog, *fd);
	if (link)
		*fd = -1; /* the link owns it now */
	return link;
}

/* Attaches the fork, exec and exit hooks of instance k to the tracepoint events. */
void attach_hooks(struct sampler *s, struct instance *k)
{
	struct bpf_program *progs[HOOK_MAX] = {
		s->cfg.fork_layout == CPROF_FORK_STATIC_COMM ? PROG(k, cprof_fork_static_comm)
							     : PROG(k, cprof_fork_dynamic_comm),
		PROG(k, cprof_exec),
		PROG(k, cprof_exit),
	};
	int i, err;

	if (s->cfg.fork_layout == CPROF_FORK_NONE)
		return;
	err = s->tracepoint_err;
	for (i = 0; i < HOOK_MAX && !err; i++) {
		s->hook_links[i] = attach_tracepoint(progs[i], &s->hook_fds[i]);
		if (!s->hook_links[i])
			err = -errno;
	}
	if (err)
		pr_warn("cannot attach to %s: %s: %s", i ? hook_names[i - 1] : hook_names[0],
			strerror(-err),
			s->cfg.follow_children
				? "children started during the profile are not followed"
				: "a sample taken before its process's exec may be named after "
				  "the program it ran next");
	s->spaces = !err;
}
