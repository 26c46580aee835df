/* SPDX-License-Identifier: MIT */
/*
 * The one integer hash shared by cprof's tables. Keys are addresses, PIDs
 * and string IDs, far from uniform, so a full avalanche matters more than speed.
 */
#ifndef CPROF_HASH_H
#define CPROF_HASH_H

#include <stdint.h>

#include "mix64.h"

/* splitmix64's finalizer, as the BPF side mixes. */
static inline uint64_t hash_u64(uint64_t k)
{
	return cprof_mix64(k);
}

#endif
