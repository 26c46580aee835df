/* SPDX-License-Identifier: MIT */
/*
 * The BPF objects cprof loads (sampler, unwinder, ksym_names), kept gzipped
 * in the binary and inflated once, on first use; their skeletons ask for
 * them by name (bpf/compress_skeleton.awk).
 */
#ifndef CPROF_BPF_BLOB_H
#define CPROF_BPF_BLOB_H

#include <stddef.h>

/*
 * The object's ELF bytes, alive until exit, with *sz their size; NULL with
 * *sz 0 for an unknown name or when they cannot be inflated (no memory):
 * the skeleton's open then fails. Thread-safe.
 */
const void *bpf_blob__bytes(const char *name, size_t *sz);

#endif
