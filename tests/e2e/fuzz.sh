#!/usr/bin/env bash
# Fuzzing in the suite: every target replays its seeds and saved regression
# inputs, then fuzzes a fixed number of inputs (CPROF_FUZZ_RUNS, default
# 150000, about 3-10 s each) from a fixed random seed, so that a given tree
# always meets the same inputs: a failure here is this tree's, not luck's.
# Open-ended runs that look for new bugs: tests/fuzz/run -t SECONDS.
source "$(dirname "$0")/../lib.sh"

cd "$ROOT" || exit 1
runs=${CPROF_FUZZ_RUNS:-150000}
targets=()
for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done

# report PREFIX OUTPUT-FILE: one ok/not ok per target from the runner's lines.
report() {
	local prefix=$1 out=$2 t line
	for t in "${targets[@]}"; do
		line=$(grep "^$t: " "$out")
		case "$line" in
		"$t: OK"*) ok "${prefix}_${t#fuzz_}"; echo "$line" >&2 ;;
		"") not_ok "${prefix}_${t#fuzz_}" "no result: $(tail -n 3 "$out" | tr '\n' ' ')" ;;
		*) not_ok "${prefix}_${t#fuzz_}" "${line#*: }" ;;
		esac
	done
}

tests/fuzz/run --replay >"$TMP/replay.out" 2>&1
report replay "$TMP/replay.out"
tests/fuzz/run --runs "$runs" >"$TMP/fuzz.out" 2>&1
report "fuzz_${runs}_inputs" "$TMP/fuzz.out"
finish
