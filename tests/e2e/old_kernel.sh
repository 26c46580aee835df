#!/usr/bin/env bash
# The old-kernel paths on the host kernel (issue 39): cprof run as on Linux
# 4.18 and 5.4 (CPROF_KERNEL_AS, the table of src/lib/kernel_caps.c): no
# batched map operations, no unwinder object (stacks walked in user space
# from copies), no bpf_loop, no kernel BTF before 5.4. Each profile of
# known_tree (two threads, 70/30 between hot_a and hot_b) must hold a
# plausible count for its duration, rate and CPUs, the count the summary
# says, the fixture's split, no drain error, and one line naming the
# fallbacks. Then the core scripts run as on 4.18: profile.sh, system.sh,
# upload_continuous.sh and mappings.sh's exec and dlopen cases.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip old_kernel "$why"
	exit 0
fi

HZ=499

# check_as RELEASE: known_tree profiled as on RELEASE.
check_as() {
	local v=$1 n=as_${1/./_} err folded total said secs cpus max a b root
	err=$TMP/$n.err folded=$TMP/$n.folded
	CPROF_KERNEL_AS=$v "$CPROF" -F $HZ --format folded -o "$folded" -- "$FIX/known_tree" 3 2 2>"$err"
	check "${n}_exit_zero" [ $? -eq 0 ]
	total=$(awk '{ n += $NF } END { printf "%.0f\n", n }' "$folded")
	read -r said secs cpus <<<"$(awk '/^cprof: [0-9]+ samples? in [0-9.]+ s at/ {
		print $2, $5, $(NF - 3) }' "$err")"
	if [ "${said:-x}" = "$total" ]; then ok "${n}_count_as_said"; else
		not_ok "${n}_count_as_said" "the folded file holds $total samples, the summary says ${said:-nothing}"; fi
	# At most HZ samples a second on each CPU (5% and 50 samples of slack);
	# at least a tenth of what two busy threads give (a loaded machine).
	max=$(awk -v s="${secs:-0}" -v c="${cpus:-0}" -v h=$HZ 'BEGIN { printf "%d", h * s * c * 1.05 + 50 }')
	if awk -v t="$total" -v lo=$((HZ * 3 / 10)) -v hi="$max" 'BEGIN { exit !(t >= lo && t <= hi) }'; then
		ok "${n}_count_plausible"
	else
		not_ok "${n}_count_plausible" "$total samples in ${secs:-?} s on ${cpus:-?} CPUs at $HZ Hz: want $((HZ * 3 / 10)) to $max"
	fi
	a=$(folded_share "$folded" ";work;hot_a")
	b=$(folded_share "$folded" ";work;hot_b")
	if within "$a" 70 8 && within "$b" 30 8; then ok "${n}_top_frames"; else
		not_ok "${n}_top_frames" "hot_a $a% hot_b $b%, want 70/30 within 8: $(sort -t' ' -k2 -nr "$folded" | head -2 | cut -c1-120)"; fi
	if grep -qE 'draining the BPF maps failed|MISMATCH' "$err"; then
		not_ok "${n}_no_drain_error" "$(grep -m1 -E 'draining|MISMATCH' "$err")"
	else ok "${n}_no_drain_error"; fi
	if [ "$(grep -c "^cprof: kernel fallbacks (as Linux $v, CPROF_KERNEL_AS): .*no batched map operations" "$err")" -eq 1 ]; then
		ok "${n}_fallbacks_named_once"
	else not_ok "${n}_fallbacks_named_once" "$(grep -m1 'fallbacks' "$err" || echo 'no line names the fallbacks')"; fi
	check "${n}_stack_copies" grep -q 'every user stack walked in user space from a copy' "$err"
	# known_tree and glibc have CFI throughout: the walks from copies reach
	# the root (100% here), as the in-kernel walk does. (Static musl stops
	# at libc_start_main_stage2 on every path: its libc.a has no CFI.)
	root=$(sed -nE 's/^cprof: user stacks walked with the CFI tables: [0-9]+ of [0-9]+ samples \(([0-9.]+)%\) reached a thread root.*/\1/p' "$err")
	if awk -v p="${root:-0}" 'BEGIN { exit !(p >= 80) }'; then ok "${n}_walks_reach_root"; else
		not_ok "${n}_walks_reach_root" "$(grep -m1 'walked with the CFI tables' "$err" | cut -c1-200 || echo 'no line on the walks')"; fi
}

check_as 4.18
check_as 5.4

# A release cprof cannot be: refused in one line, nothing run.
CPROF_KERNEL_AS=4.9 "$CPROF" -d 1 -o "$TMP/x.pb.gz" -- true 2>"$TMP/bad.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] && grep -q 'CPROF_KERNEL_AS' "$TMP/bad.err" &&
	[ ! -e "$TMP/x.pb.gz" ]; then
	ok refuses_unknown_release
else not_ok refuses_unknown_release "exit $rc: $(head -c 200 "$TMP/bad.err")"; fi

# as_4_18 PREFIX SCRIPT: an e2e script run as on 4.18, its lines named
# as_4_18_PREFIX... (a script's own skip stays a skip); a script that
# reports nothing fails.
as_4_18() {
	local prefix=$1 status rest lines=0
	while read -r status rest; do
		lines=$((lines + 1))
		case "$status" in
		ok) ok "as_4_18_$prefix$rest" ;;
		not)
			rest=${rest#ok }
			not_ok "as_4_18_$prefix${rest%% - *}" "${rest#* - }"
			;;
		skip) skip "as_4_18_$prefix${rest%% - *}" "${rest#* - }" ;;
		esac
	done < <(CPROF_KERNEL_AS=4.18 bash "$(dirname "$0")/$2" 2>&1 | grep -E '^(ok|not ok|skip) ')
	[ "$lines" -gt 0 ] || not_ok "as_4_18_${prefix}ran" "$2 reported nothing"
}

# The core scripts as on 4.18, where an old kernel's fallbacks change the
# path: profile.sh whole (-p PID, commands, threads, formats); system.sh
# (-a, signals, idle, sampling across the first drain, which drains key by
# key there); upload_continuous.sh (uploads of one-second intervals, each a
# drain, a server outage and the spool); mappings.sh's loop and dlopen
# cases (maps followed through exec, also through env, and dlopen, stacks
# walked from copies).
as_4_18 "" profile.sh
as_4_18 system_ system.sh
as_4_18 upload_ upload_continuous.sh
CPROF_MAPPINGS_CASES="loop dlopen" as_4_18 mappings_ mappings.sh
finish
