#!/usr/bin/env bash
# Profiles that survive everything: signals at any moment, targets that exit,
# exec or fork storms, many distinct stacks, unwritable output, and corrupt
# files in a mapping. Each case asserts a valid profile and the accounting.
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip faults "$why"
	exit 0
fi

# comment_field FILE.pb.gz REGEX: the first number after REGEX in the profile's comments.
comment_field() {
	go tool pprof -raw "$1" 2>/dev/null | grep '^Comment:' | sed -n "s/.*$2 \([0-9][0-9]*\).*/\1/p" | head -1
}

# --- SIGINT/SIGTERM at random moments: a valid profile every time ----------------
# 200 moments from before cprof's main (the signal is held until main unblocks
# it: fixtures/src/signal_at.c) through setup and sampling (odd runs: -d 5, so
# only the signal ends them, and cprof must say so), and around the last drain
# and the final write (even runs: -d 0.2, the signal 150-400 ms in). Every run
# exits 0 with a valid profile and no temporary file left behind.
"$FIX/known_tree" 900 &
bg=$!
bad="" seed=$((RANDOM * 32768 + RANDOM))
RANDOM=$seed
for i in $(seq 1 200); do
	if [ $((i % 2)) = 1 ]; then
		sig=2 d=5 us=$(((RANDOM * 32768 + RANDOM) % 400000))
	else
		sig=15 d=0.2 us=$((150000 + (RANDOM * 32768 + RANDOM) % 250000))
	fi
	"$FIX/signal_at" "$sig" "$us" "$CPROF" -p "$bg" -d "$d" -F 499 -o "$TMP/r$i.pb.gz" \
		2>"$TMP/r$i.err"
	rc=$?
	what="signal $sig after ${us} us, -d $d"
	if [ "$rc" -ne 0 ] || ! go tool pprof -raw "$TMP/r$i.pb.gz" >/dev/null 2>&1; then
		bad="$bad run$i($what, rc=$rc: $(tail -1 "$TMP/r$i.err"))"
	elif [ "$d" = 5 ] && ! grep -q "^cprof: SIGINT after .*: keeping what was sampled" "$TMP/r$i.err"; then
		bad="$bad run$i($what: not stopped by the signal)"
	elif ls "$TMP"/.r$i.pb.gz.cprof-* >/dev/null 2>&1; then
		bad="$bad run$i($what: a temporary file was left)"
	fi
	rm -f "$TMP/r$i.pb.gz" "$TMP/r$i.err"
	[ ${#bad} -gt 1000 ] && break
done
if [ -z "$bad" ]; then ok signal_at_random_moment_valid_profile; else
	not_ok signal_at_random_moment_valid_profile "seed $seed:$bad"; fi

# --- a second signal aborts at once ---------------------------------------------------
"$CPROF" -p "$bg" -d 30 -o "$TMP/twice.pb.gz" 2>"$TMP/twice.err" &
p=$!
sleep 1
start=$(date +%s%N)
# Two different signals, so that the kernel cannot merge them into one pending signal.
kill -INT "$p"
kill -TERM "$p"
wait "$p"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ "$rc" -eq 130 ] && [ "$ms" -lt 2000 ] && grep -q "interrupted again" "$TMP/twice.err"; then
	ok second_signal_aborts
else
	not_ok second_signal_aborts "rc=$rc after ${ms} ms: $(tail -2 "$TMP/twice.err")"
fi
check second_signal_leaves_no_file bash -c "! ls -A '$TMP' | grep -q 'twice.pb.gz'"
kill "$bg" 2>/dev/null
wait "$bg" 2>/dev/null

# --- the target exits during the profile ------------------------------------------------
"$FIX/known_tree" 1 &
bg=$!
start=$(date +%s%N)
"$CPROF" -p "$bg" -d 20 -F 499 -o "$TMP/exit.pb.gz" 2>"$TMP/exit.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
wait "$bg"
check target_exit_ends_profile [ "$rc" -eq 0 ] && [ "$ms" -lt 10000 ]
check target_exit_profile_has_samples bash -c "go tool pprof -top '$TMP/exit.pb.gz' 2>/dev/null | grep -q ' hot_a$'"

# --- the target execs another program, and forks children ---------------------------------------
"$CPROF" -F 499 --format folded -o "$TMP/exec.folded" -- sh -c \
	"$FIX/known_tree 1 & exec $FIX/known_tree_nopie 1" 2>"$TMP/exec.err"
check exec_and_fork_exit_zero [ $? -eq 0 ]
# (the kernel keeps 15 characters of a process name)
check exec_names_new_program grep -q '^known_tree_nopi;.*;main;work;hot_a ' "$TMP/exec.folded"
check forked_child_named grep -q '^known_tree;.*;main;work;hot_a ' "$TMP/exec.folded"

# --- 1,000 short-lived processes per second for 30 s, whole system ---------------------------
"$CPROF" -a -d 33 -F 199 -o "$TMP/storm.pb.gz" 2>"$TMP/storm.err" &
p=$!
sleep 1
"$FIX/fork_storm" 1000 30 >"$TMP/storm.count" &
storm=$!
max_rss=0
while kill -0 "$p" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
	[ -n "$rss" ] && [ "$rss" -gt "$max_rss" ] && max_rss=$rss
	sleep 1
done
wait "$p"
rc=$?
wait "$storm"
children=$(cat "$TMP/storm.count")
check fork_storm_exit_zero [ "$rc" -eq 0 ]
check fork_storm_profile_valid go tool pprof -raw "$TMP/storm.pb.gz"
released=$(comment_field "$TMP/storm.pb.gz" "released")
# RSS stays bounded: state for dead processes is released as they go.
# (sanitized.sh raises the limit: ASan's quarantine and shadow memory.)
rss_limit=${CPROF_RSS_LIMIT_KB:-131072}
if [ "$max_rss" -gt 0 ] && [ "$max_rss" -lt "$rss_limit" ] && [ "${released:-0}" -gt 100 ]; then
	ok fork_storm_state_released
else
	not_ok fork_storm_state_released "peak RSS ${max_rss} KiB (limit $rss_limit), released ${released:-?} of $children children"
fi
# The kernel's records of the storm: none lost, or the summary says how many.
records_lost=$(comment_field "$TMP/storm.pb.gz" "lost by the kernel (ring full)")
if [ "${records_lost:-x}" = 0 ] ||
	grep -q "^cprof: the kernel lost $records_lost records\? of forks, execs and mmaps" "$TMP/storm.err"; then
	ok fork_storm_records_accounted
else
	not_ok fork_storm_records_accounted "records lost: ${records_lost:-no comment}; summary: $(grep -c 'kernel lost' "$TMP/storm.err") lines"
fi
# Their samples are accounted for: child_work is named, not lost as [unknown].
go tool pprof -traces -tagfocus=comm=fork_storm "$TMP/storm.pb.gz" 2>/dev/null >"$TMP/storm.traces"
named=$(grep -c '^ *child_work$' "$TMP/storm.traces")
unknown=$(grep -c '^ *\[unknown\]$' "$TMP/storm.traces")
if [ "$named" -gt 0 ] && [ "$unknown" -le $((named / 10)) ]; then ok fork_storm_children_named; else
	not_ok fork_storm_children_named "child_work stacks $named, [unknown] frames $unknown"; fi

# stacks_lost PPROF: stacks counted under a placeholder, from the "stacks lost" comment.
stacks_lost() {
	go tool pprof -raw "$1" 2>/dev/null | awk '/^Comment: cprof: stacks lost/ {
		sub(/;.*/, ""); for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { sub(",", "", $i); n += $i } }
		END { print n + 0 }'
}

# --- 10,000 distinct stacks: under 1% lost with default settings --------------------------------
"$CPROF" -F 999 -o "$TMP/stacks.pb.gz" -- "$FIX/many_stacks" 20 15 2>"$TMP/stacks.err"
# One thread, so every pprof sample (a stack with its labels) is a distinct stack.
distinct=$(go tool pprof -raw "$TMP/stacks.pb.gz" 2>/dev/null | grep -cE '^ +[0-9]+ +[0-9]+: ')
taken=$(comment_field "$TMP/stacks.pb.gz" "samples taken")
lost=$(stacks_lost "$TMP/stacks.pb.gz")
full=$(comment_field "$TMP/stacks.pb.gz" "lost")
if [ "$distinct" -ge 10000 ] && [ -n "$taken" ] && [ "$taken" -gt 0 ] &&
	awk -v l="$((lost + full))" -v t="$taken" 'BEGIN { exit !(l / t < 0.01) }'; then
	ok many_stacks_loss_under_1_percent
	echo "many_stacks: $distinct distinct stacks, $taken samples, $lost stacks + $full samples lost" >&2
else
	not_ok many_stacks_loss_under_1_percent "$distinct distinct stacks, $taken samples, $lost stacks + ${full:-?} samples lost"
fi

# --- a stack map 16 times too small: collided stacks are sent whole, not lost ---------------------
# The kernel's stack map (bpf_get_stackid) collides by bucket: with frame
# pointers every user stack goes there. Walked stacks are kept by a 64-bit
# hash instead, and drained before their map fills.
"$CPROF" -F 999 --frame-pointers --map-size 1024 -o "$TMP/small.pb.gz" -- "$FIX/many_stacks" 10 15 \
	2>"$TMP/small.err"
taken=$(comment_field "$TMP/small.pb.gz" "samples taken")
whole=$(go tool pprof -raw "$TMP/small.pb.gz" 2>/dev/null |
	grep -oE 'kept whole past a stack-map collision [0-9]+' | grep -oE '[0-9]+$')
lost=$(stacks_lost "$TMP/small.pb.gz")
# Every sample of the workload's loop, spilled or not, has its whole stack, down to main.
rooted=$(go tool pprof -traces -sample_index=samples "$TMP/small.pb.gz" 2>/dev/null | awk '
	/^-+\+-+$/ { if (n) { t += c; r += m * c } n = m = 0; next }
	/^ *[0-9]+ +[^ ]/ && !n { c = $1; n = 1; m = ($2 == "main"); next }
	n && $1 == "main" { m = 1 }
	END { if (n) { t += c; r += m * c } printf "%d %d", r, t }')
if [ "${whole:-0}" -ge 50 ] && [ -n "$taken" ] && [ "$taken" -gt 0 ] &&
	awk -v l="$lost" -v t="$taken" -v r="${rooted% *}" -v n="${rooted#* }" \
		'BEGIN { exit !(l / t < 0.01 && n > 0 && r / n >= 0.99) }'; then
	ok collided_stacks_kept_whole
	echo "small stack map: $taken samples, $whole kept whole past a collision, $lost stacks lost, $rooted rooted/all" >&2
else
	not_ok collided_stacks_kept_whole "$taken samples, ${whole:-?} kept whole, $lost stacks lost, rooted/all ${rooted:-?}"
fi

# --- every sample accounted for while the map sets flip many times a second ---------------------
# With --map-size 512 a handful of new keys already counts as a filling map,
# so nearly every poll (100 ms) flips the sets and drains the old one
# (src/sample/drain.c) while both CPUs are busy at 999 Hz. A sample recorded into a
# set after its drain began would be missing from the profile, not counted.
ncpu=$(nproc)
"$FIX/known_tree" 5 "$((ncpu > 64 ? 64 : ncpu))" &
bg=$!
sleep 0.2
"$CPROF" -a -F 999 --map-size 512 -d 3 -o "$TMP/flips.pb.gz" 2>"$TMP/flips.err"
wait "$bg"
taken=$(comment_field "$TMP/flips.pb.gz" "samples taken")
kept=$(comment_field "$TMP/flips.pb.gz" "in profile")
full=$(comment_field "$TMP/flips.pb.gz" "lost")
if [ -n "$taken" ] && [ -n "$kept" ] && [ -n "$full" ] && [ "$taken" -gt 1000 ] &&
	[ "$taken" -eq $((kept + full)) ]; then
	ok samples_accounted_across_flips
else
	not_ok samples_accounted_across_flips "taken ${taken:-?}, in profile ${kept:-?}, lost ${full:-?}: $(tail -n 2 "$TMP/flips.err" | tr '\n' ' ')"
fi

# --- output errors: /dev/full keeps the profile elsewhere -----------------------------------
export TMPDIR=$TMP
"$CPROF" -F 199 -o /dev/full -- "$FIX/known_tree" 1 2>"$TMP/full.err"
rc=$?
saved=$(sed -n 's/.*the profile was saved to \(.*\) instead.*/\1/p' "$TMP/full.err")
check dev_full_exit_nonzero [ "$rc" -eq 1 ]
check dev_full_message grep -q "cannot write /dev/full: No space left on device" "$TMP/full.err"
check dev_full_profile_saved_elsewhere go tool pprof -raw "${saved:-/nonexistent}"
unset TMPDIR

# --- a corrupt ELF file in a mapping: module+offset fallback, the run completes -----------------
"$CPROF" -F 499 --format folded -o "$TMP/corrupt.folded" -- "$FIX/corrupt_mapping" "$TMP/corrupt.bin" 1 \
	2>"$TMP/corrupt.err"
check corrupt_mapping_exit_zero [ $? -eq 0 ]
check corrupt_mapping_fallback_name grep -qE ';main;run_corrupt;corrupt\.bin@0x100[0-9a-f] ' "$TMP/corrupt.folded"
finish
