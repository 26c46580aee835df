// SPDX-License-Identifier: MIT
//
// A workload of bench/stacks: C++ code whose stacks are deep templates,
// std::sort (introsort, recursive) with a lambda and std::map (red-black
// tree inserts and lookups, libstdc++'s _Rb_tree_insert_and_rebalance in
// the shared library). Built by bench/stacks with Debian's `g++ -O2` and
// nothing else: no frame pointers, like the distribution's code.
//
//   cxx_sort_map ROUNDS N   ROUNDS rounds over N elements; prints a checksum
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

static uint64_t lcg_state = 42;

static uint32_t lcg()
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return static_cast<uint32_t>(lcg_state >> 33);
}

// Strings, so the comparisons call into libstdc++ and libc (memcmp).
__attribute__((noinline)) static uint64_t sort_strings(std::vector<std::string> &v)
{
	for (auto &s : v)
		s = "k" + std::to_string(lcg() % 1000000);
	std::sort(v.begin(), v.end(), [](const std::string &a, const std::string &b) {
		return a.size() != b.size() ? a.size() < b.size() : a < b;
	});
	return v.front().size() + v.back().size();
}

__attribute__((noinline)) static uint64_t count_in_map(size_t n)
{
	std::map<uint32_t, uint32_t> m;
	uint64_t hits = 0;

	for (size_t i = 0; i < n; i++)
		m[lcg() % (n * 2)]++;
	for (size_t i = 0; i < n; i++) {
		auto it = m.find(lcg() % (n * 2));
		if (it != m.end())
			hits += it->second;
	}
	return hits + m.size();
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 10;
	long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 200000;
	uint64_t sum = 0;

	if (rounds < 1 || n < 1) {
		std::fprintf(stderr, "usage: cxx_sort_map ROUNDS N\n");
		return 2;
	}
	std::vector<std::string> v(static_cast<size_t>(n));
	for (long i = 0; i < rounds; i++) {
		sum += sort_strings(v);
		sum += count_in_map(static_cast<size_t>(n));
	}
	std::printf("%llu\n", static_cast<unsigned long long>(sum));
	return 0;
}
