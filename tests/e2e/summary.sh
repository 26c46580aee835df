#!/usr/bin/env bash
# What the summary and the profile comments say, checked on real runs: every
# sample accounted for once, kernel threads named as such, no idle line for
# a command, the samples of cprof's own code before the command's exec left
# out and counted, and the kernel's throttling reported.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip summary "$why"
	exit 0
fi

# comment_numbers FILE.pb.gz: "taken in_profile lost before_exec" from the first comment.
comment_numbers() {
	go tool pprof -raw "$1" 2>/dev/null | sed -n 's/^Comment: cprof: samples taken \([0-9]*\), in profile \([0-9]*\), lost \([0-9]*\);.*; before exec \([0-9]*\);.*/\1 \2 \3 \4/p'
}

# --- every sample taken is in the profile or counted as lost, once -----------
# A map far too small for the run's stacks: collisions, spills, a full counts map.
"$CPROF" -F 999 --map-size 256 -o "$TMP/small.pb.gz" -- "$FIX/many_stacks" 2 15 2>"$TMP/small.err"
read -r taken kept lost before <<<"$(comment_numbers "$TMP/small.pb.gz")"
if [ -n "$taken" ] && [ "$taken" -gt 0 ] && [ "$taken" -eq $((kept + lost)) ]; then
	ok samples_add_up
else
	not_ok samples_add_up "taken '$taken', in profile '$kept', lost '$lost'"
fi
# The perf buffer's own count of lost records is not a reason of its own.
if grep -q "notifications lost" "$TMP/small.err" && grep -q "stacks lost" "$TMP/small.err" &&
	[ "$(sed -n 's/^cprof: \([0-9]*\) new-process.*/\1/p' "$TMP/small.err")" = \
		"$(sed -n 's/^cprof: \([0-9]*\) stacks lost.*/\1/p' "$TMP/small.err")" ]; then
	not_ok one_reason_per_loss "the same count under two reasons: $(grep lost "$TMP/small.err")"
else
	ok one_reason_per_loss
fi

# --- a command's own samples, without other CPUs' idle time -------------------
"$CPROF" -F 999 --format folded -o "$TMP/cmd.folded" -- "$FIX/known_tree" 1 2>"$TMP/cmd.err"
check command_no_idle_line bash -c "! grep -q idle '$TMP/cmd.err'"
# Between fork and exec the child runs cprof's code: not sampled, only counted.
bad=""
for i in $(seq 1 10); do
	"$CPROF" -F 9999 --format folded -o "$TMP/t$i.folded" -- true 2>"$TMP/t$i.err" ||
		bad="$bad run$i(exit $?)"
	grep -qE 'target__|session__|sampler__|execvp' "$TMP/t$i.folded" && bad="$bad run$i($(head -c 200 "$TMP/t$i.folded"))"
done
if [ -z "$bad" ]; then ok command_before_exec_not_sampled; else
	not_ok command_before_exec_not_sampled "$bad"; fi
"$CPROF" -F 999 -o "$TMP/cmd.pb.gz" -- "$FIX/known_tree" 1 2>"$TMP/cmd2.err"
read -r taken kept lost before <<<"$(comment_numbers "$TMP/cmd.pb.gz")"
if [ -n "$before" ] && { [ "$before" -eq 0 ] ||
	grep -q "^cprof: $before samples\? of the command before its exec not kept" "$TMP/cmd2.err"; }; then
	ok command_before_exec_counted
else
	not_ok command_before_exec_counted "comment says '$before': $(grep exec "$TMP/cmd2.err")"
fi

# --- a kernel thread has no user memory; it has not exited ---------------------
"$CPROF" -p 2 -d 0.5 -o "$TMP/k.pb.gz" 2>"$TMP/k.err"
check kernel_thread_exit_zero [ $? -eq 0 ]
check kernel_thread_named grep -q "^cprof: 2 (kthreadd) is a kernel thread: it has no user memory" "$TMP/k.err"
check kernel_thread_not_exited bash -c "! grep -q 'exited before' '$TMP/k.err'"

# --- the kernel lowers its sampling limit during the run -----------------------
sysctl=/proc/sys/kernel/perf_event_max_sample_rate
if old=$(cat "$sysctl" 2>/dev/null) && [ "$old" -ge 999 ] && echo "$old" >"$sysctl" 2>/dev/null; then
	"$CPROF" -F 999 -o /dev/null -- "$FIX/known_tree" 1.5 2>"$TMP/thr.err" &
	p=$!
	sleep 0.5
	echo 400 >"$sysctl"
	wait "$p"
	echo "$old" >"$sysctl"
	check throttle_reported grep -q "^cprof: the kernel throttled sampling: it lowered kernel.perf_event_max_sample_rate to 400 during the run, below the 999 Hz asked" "$TMP/thr.err"
else
	skip throttle_reported "cannot write $sysctl here"
fi
finish
