#!/usr/bin/env bash
# Whole-system mode and signals: -a sees every process; SIGINT/SIGTERM stop
# early and still write a valid profile.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip system "$why"
	exit 0
fi

"$FIX/known_tree" 4 &
bg=$!
sleep 0.2
"$CPROF" -a -d 1.5 -F 199 --format folded -o "$TMP/a.folded" 2>"$TMP/a.err"
check all_exit_zero [ $? -eq 0 ]
check all_sees_other_process grep -q '^known_tree;.*;main;work;hot_a ' "$TMP/a.folded"
check all_summary_processes grep -qE 'samples in [0-9.]+ s at 199 Hz on [0-9]+ CPUs?, [0-9]+ process' "$TMP/a.err"

# Default mode is whole-system.
"$CPROF" -d 1 -F 99 -o "$TMP/default.pb.gz" 2>"$TMP/default.err"
check default_is_whole_system go tool pprof -raw "$TMP/default.pb.gz"
# Issue 38, item 11: a whole-system profile names no program as its main
# binary. pprof's "File:" is its first mapping's file: whichever program
# came first ("File: cc1") before; now a mapping of nothing, with no file.
go tool pprof -top "$TMP/default.pb.gz" >"$TMP/default.top" 2>&1
check whole_system_names_no_program bash -c "! grep -q '^File: ' '$TMP/default.top'"
check whole_system_top_has_rows grep -qE '^ +[0-9.]+[mun]?s +[0-9.]+% ' "$TMP/default.top"

for sig in INT TERM; do
	"$CPROF" -a -d 30 -F 199 -o "$TMP/sig.pb.gz" 2>"$TMP/sig.err" &
	p=$!
	sleep 1.5
	start=$(date +%s%N)
	kill -"$sig" "$p"
	wait "$p"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	check "sig${sig}_exit_zero" [ "$rc" -eq 0 ]
	check "sig${sig}_stops_promptly" [ "$ms" -lt 5000 ]
	check "sig${sig}_profile_valid" go tool pprof -raw "$TMP/sig.pb.gz"
done
# With --include-idle, idle CPUs appear as the swapper task, exactly as many
# samples as the BPF side counted as idle (the count is in a profile comment).
"$CPROF" -a -d 1 --include-idle -o "$TMP/idle.pb.gz" 2>/dev/null
go tool pprof -raw "$TMP/idle.pb.gz" >"$TMP/idle.raw" 2>&1
counted=$(sed -n 's/^Comment: cprof: idle samples included: \([0-9]*\)$/\1/p' "$TMP/idle.raw")
kept=$(go tool pprof -traces -tagfocus=comm=swapper "$TMP/idle.pb.gz" 2>/dev/null |
	awk '$1 ~ /^[0-9.]+(ms|s)$/ { n++ } END { print n + 0 }')
if [ -z "$counted" ]; then
	not_ok include_idle_counted "no idle comment in the profile"
elif [ "$counted" -eq 0 ]; then
	skip include_idle_counted "no CPU was idle during the run"
elif [ "$kept" -gt 0 ]; then
	ok include_idle_counted
else
	not_ok include_idle_counted "$counted idle samples counted but no swapper stack in the profile"
fi
wait "$bg"

# Sampling goes on across the first drain, where the events move to the
# program that uses both map sets (src/sample/copy_rings.c). With every CPU busy every
# tick is a sample, idle ones included: the count follows from the rate, and
# no timer gives more (5% and 50 samples of slack): a drain that counted a
# failed batched call, as before 5.6, made it 10^15.
ncpu=$(nproc)
"$FIX/known_tree" 4 "$((ncpu > 64 ? 64 : ncpu))" &
bg=$!
sleep 0.3
"$CPROF" -a --include-idle -d 2.5 -F 199 -o "$TMP/rate.pb.gz" 2>"$TMP/rate.err"
read -r n secs cpus < <(sed -nE \
	's/^cprof: ([0-9]+) samples in ([0-9.]+) s at 199 Hz on ([0-9]+) CPUs?.*/\1 \2 \3/p' \
	"$TMP/rate.err")
if [ -z "${n:-}" ]; then
	not_ok samples_across_first_drain "no summary line: $(tail -n 2 "$TMP/rate.err" | tr '\n' ' ')"
elif awk -v n="$n" -v s="$secs" -v c="$cpus" 'BEGIN { exit !(n >= 0.85 * 199 * c * s &&
	n <= 1.05 * 199 * c * s + 50) }'; then
	ok samples_across_first_drain
else
	not_ok samples_across_first_drain "$n samples in $secs s on $cpus CPUs at 199 Hz"
fi
wait "$bg"
finish
