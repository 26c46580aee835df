/* SPDX-License-Identifier: MIT */
/*
 * Creates large maps of an opened BPF object on several threads, before
 * libbpf loads it. The kernel allocates, zeroes and charges every entry of a
 * preallocated hash or stack-trace map when the map is created, which takes
 * milliseconds per map and is most of cprof's startup; libbpf creates maps
 * one after another, this spreads them over the CPUs while the caller does
 * other work. libbpf then adopts the descriptors and creates only the rest.
 */
#ifndef CPROF_PARALLEL_MAPS_H
#define CPROF_PARALLEL_MAPS_H

struct bpf_map;
struct parallel_maps;

/*
 * Starts creating the n maps, largest first, on up to one thread per online
 * CPU but one: the caller's thread helps in parallel_maps__finish. Their
 * sizes and flags must be final. Returns 0 or a negative errno (nothing has
 * been started then).
 */
int parallel_maps__start(struct bpf_map *const *maps, int n, struct parallel_maps **out);
/*
 * Helps create what is left, waits for the threads, and hands every map to
 * libbpf (bpf_map__reuse_fd). Returns 0, or the first creation error as a
 * negative errno, with nothing handed over.
 */
int parallel_maps__finish(struct parallel_maps *pm);
/* Waits for threads still running, closes our descriptors. NULL-safe. */
void parallel_maps__free(struct parallel_maps *pm);

#endif
