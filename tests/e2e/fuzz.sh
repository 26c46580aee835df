#!/usr/bin/env bash
# Fuzzing in the suite: every target replays its seeds and saved regression
# inputs, then fuzzes for a short fixed time (CPROF_FUZZ_SECONDS, default 15).
# Longer runs: tests/fuzz/run -t SECONDS.
source "$(dirname "$0")/../lib.sh"

cd "$ROOT" || exit 1
secs=${CPROF_FUZZ_SECONDS:-15}
while read -r line; do
	t=${line%%:*}
	case "$line" in
	*": OK"*) ok "replay_${t#fuzz_}" ;;
	*) not_ok "replay_${t#fuzz_}" "${line#*: }" ;;
	esac
done < <(tests/fuzz/run --replay 2>&1)
while read -r line; do
	t=${line%%:*}
	case "$line" in
	*": OK"*) ok "fuzz_${t#fuzz_}_${secs}s"; echo "$line" >&2 ;;
	*) not_ok "fuzz_${t#fuzz_}_${secs}s" "${line#*: }" ;;
	esac
done < <(tests/fuzz/run -t "$secs" 2>&1)
finish
