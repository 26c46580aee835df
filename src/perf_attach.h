/* SPDX-License-Identifier: MIT */
/*
 * One PERF_COUNT_SW_CPU_CLOCK event per online CPU, sampling at a fixed
 * frequency, each with the BPF program attached. Software cpu-clock works on
 * VMs and boards without a PMU, and ticks whether the CPU runs user or kernel code.
 */
#ifndef CPROF_PERF_ATTACH_H
#define CPROF_PERF_ATTACH_H

struct bpf_program;
struct perf_attach;

/*
 * Opens and attaches the events. On failure returns a negative errno and,
 * when the cause is known (permissions, paranoid level, no cpu-clock), a
 * one-line explanation has already been logged.
 */
int perf_attach__open(struct bpf_program *prog, unsigned int hz, struct perf_attach **out);
/* Number of CPUs that are being sampled. */
int perf_attach__cpu_count(const struct perf_attach *pa);
void perf_attach__free(struct perf_attach *pa);

/* Parses a CPU list such as "0-3,5,7-8" into a bitmap of nr bytes (1 per CPU). */
int perf_attach__parse_cpulist(const char *s, unsigned char *mask, int nr);

#endif
