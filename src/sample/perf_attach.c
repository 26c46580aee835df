// SPDX-License-Identifier: MIT
/*
 * Opens the per-CPU sampling events and attaches the BPF program to each.
 * The events are opened first, while the program is still being loaded:
 * a cpu-clock event's timer starts when it is opened, so by the time the
 * program is attached its next tick is due within a period, not a whole
 * period after attaching (1 ms at 999 Hz, 10 ms at 99 Hz). Until then a tick
 * has no program to run and records nothing.
 * Errors are translated into what a user can act on: perf_event_open's
 * EACCES/EPERM usually mean missing CAP_PERFMON or a paranoid sysctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/kernel_caps.h"
#include "sample/perf_attach.h"
#include "sample/perf_sample.h"
#include "sampler_abi.h"

#define LOG_MODULE "perf"
#include "lib/log.h"

#define MAX_CPUS 4096

struct perf_attach {
	unsigned int hz;
	int ncpus;
	int *fds;  /* events not attached yet; a link owns its event */
	int *cpus; /* the CPU of each event */
	struct bpf_link **links;
	int *owner_fds; /* adopted events: a copy of their owner's descriptors, or NULL */
};

static int read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = -errno;
	close(fd);
	if (n < 0)
		return err;
	buf[n] = '\0';
	return 0;
}

int perf_attach__parse_cpulist(const char *s, unsigned char *mask, int nr)
{
	const char *p = s;
	char *end;
	long a, b;

	memset(mask, 0, nr);
	while (*p && *p != '\n') {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno || a < 0)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a)
				return -EINVAL;
			p = end;
		}
		if (b >= nr)
			return -ERANGE;
		for (; a <= b; a++)
			mask[a] = 1;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

static void explain_open_error(int err)
{
	char paranoid[32] = "?";

	read_small_file("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid));
	paranoid[strcspn(paranoid, "\n")] = '\0';
	switch (err) {
	case -EACCES:
	case -EPERM:
		pr_err("cannot open cpu-clock perf events: %s; run as root or with "
		       "CAP_PERFMON+CAP_BPF (kernel.perf_event_paranoid=%s)",
		       strerror(-err), paranoid);
		break;
	case -ENOENT:
	case -EOPNOTSUPP:
	case -ENODEV:
		pr_err("cannot open cpu-clock perf events: %s; this kernel does not support "
		       "software sampling events (CONFIG_PERF_EVENTS)",
		       strerror(-err));
		break;
	case -ENOSYS:
		pr_err("perf_event_open is not available in this kernel (CONFIG_PERF_EVENTS=n)");
		break;
	case -EINVAL:
		pr_err("cannot open cpu-clock perf events: %s; the frequency may exceed "
		       "kernel.perf_event_max_sample_rate",
		       strerror(-err));
		break;
	default:
		pr_err("cannot open cpu-clock perf events: %s", strerror(-err));
	}
}

int perf_attach__online_cpus(int **cpus)
{
	unsigned char *online = NULL;
	char buf[4096];
	int cpu, err, n = 0;

	*cpus = NULL;
	err = read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		return err;
	}
	/* On the heap: callers may open events on several threads at once. */
	online = malloc(MAX_CPUS);
	if (!online)
		return -ENOMEM;
	err = perf_attach__parse_cpulist(buf, online, MAX_CPUS);
	if (err) {
		pr_err("cannot parse the online CPU list '%.40s'", buf);
		goto cleanup;
	}
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		n += online[cpu];
	*cpus = calloc(n ? n : 1, sizeof(**cpus));
	if (!*cpus) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = 0;
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (online[cpu])
			(*cpus)[n++] = cpu;
	err = n;
cleanup:
	free(online);
	return err;
}

static struct perf_attach *attach_new(unsigned int hz, int n)
{
	struct perf_attach *pa = calloc(1, sizeof(*pa));

	if (!pa)
		return NULL;
	pa->hz = hz;
	pa->fds = calloc(n ? n : 1, sizeof(*pa->fds));
	pa->cpus = calloc(n ? n : 1, sizeof(*pa->cpus));
	pa->links = calloc(n ? n : 1, sizeof(*pa->links));
	if (!pa->fds || !pa->cpus || !pa->links) {
		perf_attach__free(pa);
		return NULL;
	}
	return pa;
}

int perf_attach__open(unsigned int hz, bool enabled, struct perf_attach **out)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = hz,
		.freq = 1,
		.disabled = !enabled,
	};
	struct perf_attach *pa = NULL;
	int *online = NULL;
	int i, fd, err, n, nonline;

	*out = NULL;
	nonline = perf_attach__online_cpus(&online);
	if (nonline < 0)
		return nonline;
	pa = attach_new(hz, nonline);
	if (!pa) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = 0;
	for (i = 0; i < nonline; i++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, online[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			/* A CPU that went offline since we read the list is not an error. */
			if (err == -ENODEV)
				continue;
			explain_open_error(err);
			goto cleanup;
		}
		pa->fds[n] = fd;
		pa->cpus[n] = online[i];
		n++;
		pa->ncpus = n;
	}
	if (n == 0) {
		pr_err("no online CPU could be sampled");
		err = -ENODEV;
		goto cleanup;
	}
	free(online);
	*out = pa;
	return 0;
cleanup:
	free(online);
	perf_attach__free(pa);
	return err;
}

void perf_attach__copy_attr(unsigned int hz, struct perf_event_attr *attr)
{
	struct perf_sample_layout l;

	perf_sample__layout(&l);
	*attr = (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(*attr),
		.sample_freq = hz,
		.freq = 1,
		.disabled = 1,
		.sample_type = l.sample_type,
		.sample_regs_user = l.regs_mask,
		.sample_stack_user = CPROF_COPY_STACK,
		.exclude_callchain_user = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* Woken at a quarter of the ring, not per sample of 16 KiB. */
		.watermark = 1,
	};
}

int perf_attach__adopt(unsigned int hz, const int *fds, const int *cpus, int n, bool running,
		       struct perf_attach **out)
{
	struct perf_attach *pa = attach_new(hz, n);
	int *owners = calloc(n ? n : 1, sizeof(*owners));
	int i, err;

	*out = NULL;
	if (!pa || !owners) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		pa->cpus[i] = cpus ? cpus[i] : -1;
		owners[i] = fds[i];
		pa->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (pa->fds[i] < 0) {
			err = -errno;
			goto cleanup;
		}
		pa->ncpus = i + 1;
		if (!running && ioctl(pa->fds[i], PERF_EVENT_IOC_DISABLE, 0)) {
			err = -errno;
			goto cleanup;
		}
	}
	/* Only now: a failed adoption leaves the owner's events as they were. */
	pa->owner_fds = owners;
	*out = pa;
	return 0;
cleanup:
	pr_err("cannot take over the sampling events: %s", strerror(-err));
	free(owners);
	perf_attach__free(pa);
	return err;
}

/* Closing returns once the event's timer callback, and so its program, has finished. */
static void close_event(struct perf_attach *pa, int i)
{
	if (pa->owner_fds && pa->owner_fds[i] >= 0)
		ioctl(pa->owner_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	/* A perf_event link owns its event fd: destroying the link closes it. */
	bpf_link__destroy(pa->links[i]);
	pa->links[i] = NULL;
	if (pa->fds[i] >= 0)
		close(pa->fds[i]);
	pa->fds[i] = -1;
}

struct bpf_link *perf_attach__link(struct bpf_program *prog, int fd)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts,
		    .force_ioctl_attach = !kernel_caps__has(KCAP_PERF_LINK));

	return bpf_program__attach_perf_event_opts(prog, fd, &opts);
}

/* Attaches prog to event i, which is enabled then if it was not. */
static int attach_event(struct perf_attach *pa, int i, struct bpf_program *prog)
{
	int err;

	pa->links[i] = perf_attach__link(prog, pa->fds[i]);
	if (!pa->links[i]) {
		err = -errno;
		pr_err("cannot attach the BPF program to cpu-clock event %d (CPU %d): %s", i,
		       pa->cpus[i], strerror(-err));
		return err;
	}
	pa->fds[i] = -1; /* the link owns it now */
	return 0;
}

int perf_attach__attach(struct perf_attach *pa, struct bpf_program *prog)
{
	int i, err;

	for (i = 0; i < pa->ncpus; i++) {
		err = attach_event(pa, i, prog);
		if (err)
			return err;
	}
	pr_debug("sampling %d CPUs at %u Hz", pa->ncpus, pa->hz);
	return 0;
}

int perf_attach__handover(struct perf_attach *from, struct perf_attach *to,
			  struct bpf_program *prog)
{
	int i, j, err;

	for (i = 0; i < to->ncpus; i++) {
		/* The new event's first tick is a period away, the old one's sooner. */
		err = attach_event(to, i, prog);
		if (err)
			return err;
		for (j = 0; j < from->ncpus; j++)
			if (from->cpus[j] == to->cpus[i])
				close_event(from, j);
	}
	for (j = 0; j < from->ncpus; j++)
		close_event(from, j);
	return 0;
}

int perf_attach__tracepoint(const char *tracefs, const char *category, const char *name)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
	};
	char path[256], buf[32];
	int fd, err;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, category, name);
	err = read_small_file(path, buf, sizeof(buf));
	if (err)
		return err;
	attr.config = strtoull(buf, NULL, 10);
	/* Any CPU: a program attached to a tracepoint runs wherever it fires. */
	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int perf_attach__cpu_count(const struct perf_attach *pa)
{
	return pa ? pa->ncpus : 0;
}

void perf_attach__free(struct perf_attach *pa)
{
	int i;

	if (!pa)
		return;
	for (i = 0; i < pa->ncpus; i++)
		close_event(pa, i);
	free(pa->fds);
	free(pa->cpus);
	free(pa->links);
	free(pa->owner_fds);
	free(pa);
}
