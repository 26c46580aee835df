/* SPDX-License-Identifier: MIT */
/*
 * Whether this kernel lets a perf_event program use hash maps whose entries
 * are allocated as they are added (BPF_F_NO_PREALLOC; Linux 6.1 and later,
 * not PREEMPT_RT builds). Such a map costs nothing to create: a preallocated
 * one has every entry allocated, zeroed, charged and chained into a free
 * list first, which was most of cprof's startup and a third of the CPU of a
 * short profile. Asked of the kernel itself, once, by loading a tiny program
 * that uses one: a version number says nothing of backports or RT builds.
 */
#ifndef CPROF_LAZY_MAPS_H
#define CPROF_LAZY_MAPS_H

#include <stdbool.h>

struct bpf_map;

/* The kernel's answer, asked once per process (thread-safe). */
bool lazy_maps__supported(void);
/* Makes m, a hash map not yet created, allocate its entries as they come. */
int lazy_maps__apply(struct bpf_map *m);

#endif
