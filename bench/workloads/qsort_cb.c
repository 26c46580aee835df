// SPDX-License-Identifier: MIT
//
// A workload of bench/stacks: most of its time is glibc's qsort calling back
// into this program's comparison function, so a correct stack goes
// main -> sort_round -> qsort -> (glibc's merge sort, recursive) -> by_key.
// Built by bench/stacks with Debian's `gcc -O2` and nothing else: no frame
// pointers, like the distribution's code, so a frame-pointer walk skips
// callers that a DWARF unwinder finds.
//
//   qsort_cb ROUNDS N   sorts N records ROUNDS times; prints a checksum
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct rec {
	uint32_t key;
	uint32_t seq;
	char pad[8];
};

static uint64_t lcg_state = 42;

static uint32_t lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(lcg_state >> 33);
}

// Ties broken on seq, so the order (and the checksum) does not depend on
// which sort glibc picks.
static int by_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

// Not inlined into main, so a correct stack has a frame of this program
// between main and qsort.
__attribute__((noinline)) static uint64_t sort_round(struct rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r[i].key = lcg() % 100000;
		r[i].seq = (uint32_t)i;
	}
	qsort(r, n, sizeof(*r), by_key);
	return r[0].key + r[n / 2].key + r[n - 1].key;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 200000;
	struct rec *r;
	uint64_t sum = 0;

	if (rounds < 1 || n < 1) {
		fprintf(stderr, "usage: qsort_cb ROUNDS N\n");
		return 2;
	}
	r = malloc((size_t)n * sizeof(*r));
	if (!r) {
		perror("malloc");
		return 1;
	}
	for (long i = 0; i < rounds; i++)
		sum += sort_round(r, (size_t)n);
	printf("%llu\n", (unsigned long long)sum);
	free(r);
	return 0;
}
