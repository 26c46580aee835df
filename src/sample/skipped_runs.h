/* SPDX-License-Identifier: MIT */
/*
 * Runs of a BPF program the kernel skipped: it runs no BPF program on a CPU
 * where one already runs, or where a bpf() call on a map is under way.
 */
#ifndef CPROF_SKIPPED_RUNS_H
#define CPROF_SKIPPED_RUNS_H

#include <stdint.h>

struct bpf_link;

/* Of the program prog_fd (-1: none); 0 if unknown. */
uint64_t skipped_runs__prog(int prog_fd);
/* Of the program behind link (NULL: none); 0 if unknown. */
uint64_t skipped_runs__link(struct bpf_link *link);

#endif
