/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * splitmix64's finalizer, cprof's one 64-bit mix: the BPF program finishes
 * walked stacks' hashes with it (unwind_abi.h), user space's tables hash
 * their keys with it (src/lib/hash.h).
 */
#ifndef CPROF_BPF_MIX64_H
#define CPROF_BPF_MIX64_H

#include <linux/types.h>

static inline __u64 cprof_mix64(__u64 k)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebull;
	k ^= k >> 31;
	return k;
}

#endif
