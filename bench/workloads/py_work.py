# SPDX-License-Identifier: MIT
#
# A workload of bench/stacks: CPU-bound pure Python, so the interpreter's C
# stack is deep (the eval loop re-entered for every Python call) and spends
# its time in Debian's python3 binary and libc. Fixed work:
#
#   python3 py_work.py ROUNDS   prints a checksum
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def shuffle_sort(n, seed):
    # A linear congruential generator: the same list on every run.
    x, items = seed, []
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        items.append((x % 1000, str(x), i))
    items.sort(key=lambda t: (t[0], t[1]))
    return items[0][2] + items[-1][2]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    total = 0
    for r in range(rounds):
        total += fib(22)
        total += shuffle_sort(60000, r + 1)
    print(total)


main()
