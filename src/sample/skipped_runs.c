// SPDX-License-Identifier: MIT
/*
 * How many runs of a BPF program the kernel skipped, for the summary's
 * count of samples and hook runs that never happened.
 */
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/skipped_runs.h"

/*
 * Runs of a program the kernel skipped: it runs no BPF program on a CPU
 * where one already runs, or where a bpf() call on a map is under way, and
 * counts that (bpf_prog_info.recursion_misses, 5.12+; tracepoint programs
 * from about 6.7, perf_event ones not everywhere). 0 if unknown.
 */
uint64_t skipped_runs__prog(int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (prog_fd < 0 || bpf_prog_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

/* The same for the program behind a link. */
uint64_t skipped_runs__link(struct bpf_link *link)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	uint64_t n;
	int fd;

	memset(&info, 0, sizeof(info));
	if (!link || bpf_link_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return 0;
	fd = bpf_prog_get_fd_by_id(info.prog_id);
	if (fd < 0)
		return 0;
	n = skipped_runs__prog(fd);
	close(fd);
	return n;
}
