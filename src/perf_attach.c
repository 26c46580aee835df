// SPDX-License-Identifier: MIT
/*
 * Opens the per-CPU sampling events and attaches the BPF program to each.
 * Errors are translated into what a user can act on: perf_event_open's
 * EACCES/EPERM usually mean missing CAP_PERFMON or a paranoid sysctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "perf_attach.h"

#define LOG_MODULE "perf"
#include "log.h"

#define MAX_CPUS 4096

struct perf_attach {
	int ncpus;
	struct bpf_link **links;
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

int perf_attach__open(struct bpf_program *prog, unsigned int hz, struct perf_attach **out)
{
	static unsigned char online[MAX_CPUS];
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = hz,
		.freq = 1,
	};
	struct perf_attach *pa = NULL;
	char buf[4096];
	int cpu, fd, err, n = 0;

	*out = NULL;
	err = read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		return err;
	}
	err = perf_attach__parse_cpulist(buf, online, MAX_CPUS);
	if (err) {
		pr_err("cannot parse the online CPU list '%.40s'", buf);
		return err;
	}
	pa = calloc(1, sizeof(*pa));
	if (!pa)
		return -ENOMEM;
	pa->links = calloc(MAX_CPUS, sizeof(*pa->links));
	if (!pa->links) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!online[cpu])
			continue;
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			/* A CPU that went offline since we read the list is not an error. */
			if (err == -ENODEV)
				continue;
			explain_open_error(err);
			goto cleanup;
		}
		pa->links[n] = bpf_program__attach_perf_event(prog, fd);
		if (!pa->links[n]) {
			err = -errno;
			pr_err("cannot attach the BPF program to the cpu-clock event of CPU %d: %s",
			       cpu, strerror(-err));
			close(fd);
			goto cleanup;
		}
		n++;
		pa->ncpus = n;
	}
	if (n == 0) {
		pr_err("no online CPU could be sampled");
		err = -ENODEV;
		goto cleanup;
	}
	pr_debug("sampling %d CPUs at %u Hz", n, hz);
	*out = pa;
	return 0;
cleanup:
	perf_attach__free(pa);
	return err;
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
	/* A perf_event link owns its event fd: destroying the link closes it. */
	for (i = 0; i < pa->ncpus; i++)
		bpf_link__destroy(pa->links[i]);
	free(pa->links);
	free(pa);
}
