/* SPDX-License-Identifier: MIT */
/*
 * One PERF_COUNT_SW_CPU_CLOCK event per online CPU, sampling at a fixed
 * frequency, each with the BPF program attached; and tracepoint events.
 * Software cpu-clock works on VMs and boards without a PMU, and ticks whether
 * the CPU runs user or kernel code.
 */
#ifndef CPROF_PERF_ATTACH_H
#define CPROF_PERF_ATTACH_H

#include <stdbool.h>

struct bpf_link;
struct bpf_program;

struct bpf_program;
struct perf_attach;
struct perf_event_attr;

/*
 * Opens the events, one per online CPU. Enabled, they tick from now on but
 * record nothing until a program is attached; disabled, their timers start
 * when a program is attached. On failure returns a negative errno and,
 * when the cause is known (permissions, paranoid level, no cpu-clock), a
 * one-line explanation has already been logged.
 */
int perf_attach__open(unsigned int hz, bool enabled, struct perf_attach **out);
/*
 * The attr of sampling events whose samples carry the user registers and
 * CPROF_COPY_STACK bytes of user stack, and the kernel's callchain, timed
 * on CLOCK_MONOTONIC (see sample/perf_sample.h): for a ring of their own,
 * to which the program hands a sample by returning 1. Opened disabled.
 */
void perf_attach__copy_attr(unsigned int hz, struct perf_event_attr *attr);
/*
 * Takes copies of n events opened elsewhere (with perf_attach__copy_attr,
 * by the owner of their rings), on the CPUs cpus[] (NULL: unknown), and
 * disables them until attached unless running. While their owner holds
 * them, closing one here (handover, free) disables it too: without the
 * program it would go on writing every tick to its ring.
 */
int perf_attach__adopt(unsigned int hz, const int *fds, const int *cpus, int n, bool running,
		       struct perf_attach **out);
/* Attaches prog to every event: sampling begins. Logs what failed. */
int perf_attach__attach(struct perf_attach *pa, struct bpf_program *prog);
/*
 * Moves sampling from the events of `from` to those of `to` (opened
 * disabled), CPU by CPU: prog is attached to the new event, then the old one
 * is closed, so every tick runs one of the two programs and none runs both.
 * A CPU's sampling phase restarts there. Leaves `from` without events.
 */
int perf_attach__handover(struct perf_attach *from, struct perf_attach *to,
			  struct bpf_program *prog);
/*
 * Opens the tracepoint CATEGORY/NAME of tracefs as a perf event, for a
 * program to be attached to it (perf_attach__link). Returns
 * the descriptor or a negative errno; nothing is logged.
 */
int perf_attach__tracepoint(const char *tracefs, const char *category, const char *name);
/*
 * bpf_program__attach_perf_event; by the ioctl of kernels before 5.15
 * (PERF_EVENT_IOC_SET_BPF, no BPF link) when emulating one, where libbpf's
 * own probe, which sees the real kernel, would make a link. NULL and errno
 * set on failure.
 */
struct bpf_link *perf_attach__link(struct bpf_program *prog, int fd);
/* Number of CPUs that are being sampled. */
int perf_attach__cpu_count(const struct perf_attach *pa);
void perf_attach__free(struct perf_attach *pa);

/*
 * The online CPUs, from /sys/devices/system/cpu/online, in a malloc'd array
 * the caller frees. Returns their number or a negative errno (logged).
 */
int perf_attach__online_cpus(int **cpus);
/* Parses a CPU list such as "0-3,5,7-8" into a bitmap of nr bytes (1 per CPU). */
int perf_attach__parse_cpulist(const char *s, unsigned char *mask, int nr);

#endif
