/* SPDX-License-Identifier: MIT */
/*
 * The one integer hash shared by cprof's tables. Keys are addresses, PIDs
 * and string IDs, far from uniform, so a full avalanche matters more than speed.
 */
#ifndef CPROF_HASH_H
#define CPROF_HASH_H

#include <stdint.h>

/* splitmix64's finalizer. */
static inline uint64_t hash_u64(uint64_t k)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return k;
}

#endif
