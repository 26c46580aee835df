#!/usr/bin/env bash
# --max-stack: how deep a user stack is walked. The fixture deep_recursion
# recurses 20 to 300 deep at random (26 to 306 frames, 64% beyond 127): at
# the default the stacks beyond 127 frames end in a frame that says so and
# the summary counts them; with --max-stack 1024 they reach main and _start,
# walked in the kernel by bpf_loop, by tail calls (CPROF_KERNEL_AS=5.10: no
# bpf_loop), and in user space from stack copies. A stack cut at 200 frames
# keeps exactly 200. Out-of-range values are refused in one line.
# tag: quick
source "$(dirname "$0")/../lib.sh"

FIXTURE=$FIX/deep_recursion
if [ ! -x "$FIXTURE" ]; then
	skip max_stack "$FIXTURE not built (make fixtures)"
	exit 0
fi

# --- the option's bounds --------------------------------------------------------
for v in 0 1025 -5 12x ""; do
	if "$CPROF" --max-stack "$v" -d 1 -o "$TMP/x.pb.gz" 2>"$TMP/bad.err"; then
		not_ok "max_stack_refuses_${v:-empty}" "--max-stack '$v' was accepted"
	elif [ "$(grep -c . "$TMP/bad.err")" -le 2 ] && grep -q "max-stack" "$TMP/bad.err" &&
		{ [ -z "$v" ] || grep -q "1 to 1024" "$TMP/bad.err"; }; then
		ok "max_stack_refuses_${v:-empty}"
	else
		not_ok "max_stack_refuses_${v:-empty}" "$(cat "$TMP/bad.err")"
	fi
done
if "$CPROF" --frame-pointers --max-stack 200 -d 1 -o "$TMP/x.pb.gz" 2>"$TMP/fp.err"; then
	not_ok max_stack_not_with_frame_pointers "accepted: the kernel reads those stacks, 127 at most"
else
	check max_stack_not_with_frame_pointers grep -q "127 frames at most" "$TMP/fp.err"
fi

if ! why=$(can_bpf 2>&1); then
	skip max_stack "$why"
	finish
	exit
fi

# shares FOLDED: "total rooted cut longest longest_cut" for the fixture's
# samples: rooted, the stack starts at _start and goes through main; cut,
# it ends in "deeper than N frames"; the user frames of the longest stack,
# and of the longest cut one (its placeholder frame not counted).
shares() {
	awk '$1 ~ /^deep_recursion;/ {
		n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		# User frames only: kernel frames (NAME_[k]) sit on the leaf end.
		while (k > 1 && f[k] ~ /_\[k\]$/) k--
		if (f[2] == "_start" && f[5] == "main" && f[6] == "deep::run(double)") rooted += n
		if (line ~ /\[truncated: deeper than [0-9]+ frames\]/) {
			deep += n
			if (k - 2 > longest_cut) longest_cut = k - 2
		}
		if (k - 1 > longest) longest = k - 1
	} END { printf "%d %d %d %d %d\n", total, rooted, deep, longest, longest_cut }' "$1"
}

# run NAME ENV-AS ARGS...: profiles the fixture for 2 s at 999 Hz into NAME.folded.
run() {
	local name=$1 as=$2
	shift 2
	CPROF_KERNEL_AS=$as "$CPROF" -F 999 "$@" --format folded -o "$TMP/$name.folded" \
		-- "$FIXTURE" 2 2>"$TMP/$name.err"
}

# --- the default: 127 frames, the rest said ------------------------------------
run default ""
read -r total rooted deep longest _ <<<"$(shares "$TMP/default.folded")"
# 64% of the rounds are deeper than 127 frames; some samples fall in run's own loop.
if [ "$total" -ge 200 ] && [ $((deep * 100)) -ge $((total * 45)) ] && [ "$longest" -le 128 ] &&
	grep -q "truncated: [0-9]* ([0-9.]*%) deeper than 127 frames" "$TMP/default.err"; then
	ok max_stack_default_counts_depth
else
	not_ok max_stack_default_counts_depth "$total samples, $deep deeper than 127, longest $longest: $(grep -i 'truncated' "$TMP/default.err")"
fi

# --- 1024: whole, in each walk --------------------------------------------------
for mode in loop tail_calls copies; do
	case $mode in
	loop) run "$mode" "" --max-stack 1024 ;;
	tail_calls) run "$mode" 5.10 --max-stack 1024 ;;
	copies) run "$mode" "" --max-stack 1024 --stack-copies ;;
	esac
	read -r total rooted deep longest _ <<<"$(shares "$TMP/$mode.folded")"
	# Depth 300: 300 descend frames, leaf, run, main and glibc's three.
	if [ "$total" -ge 200 ] && [ "$deep" -eq 0 ] && [ $((rooted * 100)) -ge $((total * 97)) ] &&
		[ "$longest" -ge 290 ] && ! grep -q "deeper than" "$TMP/$mode.err"; then
		ok "max_stack_1024_whole_$mode"
	else
		not_ok "max_stack_1024_whole_$mode" "$total samples, $rooted rooted, $deep cut, longest $longest: $(grep -iE 'truncated|reached' "$TMP/$mode.err")"
	fi
done

# The profile carries them too: go tool pprof's deepest trace.
CPROF_KERNEL_AS="" "$CPROF" -F 999 --max-stack 1024 -o "$TMP/deep.pb.gz" -- "$FIXTURE" 1 2>"$TMP/deep.err"
deepest=$(go tool pprof -traces "$TMP/deep.pb.gz" 2>/dev/null | awk '/^-----/ { if (n > m) m = n; n = 0; next }
	/^ +[0-9.]+[a-z]* / { n = 0 } NF { n++ } END { print m + 0 }')
if [ "$deepest" -ge 290 ]; then ok max_stack_1024_in_pprof; else
	not_ok max_stack_1024_in_pprof "the deepest trace has $deepest frames: $(head -c 300 "$TMP/deep.err")"; fi

# --- 200: cut at exactly 200, in the kernel and in user space -------------------
for mode in loop copies; do
	extra=()
	[ "$mode" = copies ] && extra=(--stack-copies)
	run "cut_$mode" "" --max-stack 200 "${extra[@]}"
	read -r total rooted deep longest cut <<<"$(shares "$TMP/cut_$mode.folded")"
	# Depths 195 to 300 of 20 to 300: 38% of the rounds.
	if [ "$deep" -gt 0 ] && [ $((deep * 100)) -ge $((total * 20)) ] && [ "$cut" -eq 200 ] &&
		grep -q "deeper than 200 frames" "$TMP/cut_$mode.err"; then
		ok "max_stack_200_cuts_at_200_$mode"
	else
		not_ok "max_stack_200_cuts_at_200_$mode" "$total samples, $deep cut, longest cut $cut: $(grep -i 'truncated' "$TMP/cut_$mode.err")"
	fi
done
finish
