#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Checks what a guest of qemu/run sent over its serial console (the protocol
# of qemu/init.sh):
#
#   qemu/check.sh CONSOLE_LOG MODE DIR [AS]
#
# MODE is the guest's (btf, no-btf or memlock); the decoded files go to DIR.
# AS, a release (4.18), when the guest also ran cprof as on it
# (cprof.as=AS): that profile must pass the main profile's checks too, with
# the fallbacks named once, and the memlock refusal so must name the limit.
# Prints what passed ("N samples; nofp: ...; exec: ...; copies: ...;
# dlopen: ...; system: ...") and exits 0, or prints the reason of the
# failure and exits 1. A guest passes when everything
# arrived intact, the kernel logged no WARN/BUG/oops, cprof exited 0, the
# profile holds the fixtures' known stacks (main;work;hot_a and
# main;work;hot_b, and nofp's main;work;mid;hot_a/b, check_nofp) and kernel frames named from kallsyms (vfs_read under
# syscall_heavy's read(2)), in no-btf mode the kernel's BTF really was out of
# reach, and the exec, copies, dlopen and whole-system profiles pass
# (check_exec, check_dlopen, check_system). Every profile holds a count
# its duration, rate and CPUs can give, as its summary says, with no drain
# error logged (check_counts), and hot_a and hot_b lead the main one
# (check_top). In
# memlock mode cprof must instead fail with the one-line message that names
# the limit, said once.
set -euo pipefail

# Kernel log lines that mean something went wrong in the kernel, whatever
# the test's own result (WARN, BUG, oops, panic, lockups, sanitizers).
SPLATS='(WARNING:|BUG:|Oops|Kernel panic|general protection fault|Unable to handle kernel|Internal error:|Call [Tt]race:|UBSAN:|KASAN:|refcount_t:|blocked for more than|soft lockup|hard LOCKUP|rcu_.*stall)'

fail() {
	echo "$*"
	exit 1
}

# info KEY: the value of "@@cprof info KEY VALUE".
info() { awk -v k="$1" '$1 == "@@cprof" && $2 == "info" && $3 == k { $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' "$LOG"; }

# decode: every "@@cprof begin NAME SHA256" section to DIR/NAME; fails on a
# section cut short or not matching its checksum.
decode() {
	local name sum
	while read -r name sum; do
		awk -v n="$name" '$1 == "@@cprof" && $2 == "end" && $3 == n { on = 0 }
			on { print } $1 == "@@cprof" && $2 == "begin" && $3 == n { on = 1 }' "$LOG" |
			base64 -d >"$DIR/$name" 2>/dev/null || fail "$name arrived corrupt (not base64)"
		[[ $(sha256sum <"$DIR/$name" | cut -d' ' -f1) == "$sum" ]] ||
			fail "$name arrived corrupt (sha256 mismatch)"
	done < <(awk '$1 == "@@cprof" && $2 == "begin" { print $3, $4 }' "$LOG")
}

# The last kernel message worth quoting when a guest stopped early.
last_words() {
	grep -E "$SPLATS" "$LOG" | tail -n1 | sed 's/^\[[ 0-9.]*\] //' | cut -c1-100
}

# folded PROFILE: its stacks as "comm;root;...;leaf COUNT" lines, from Go's
# pprof: the process (the comm label) first, as in cprof's folded output.
folded() {
	go tool pprof -traces -sample_index=samples "$1" 2>"$1.pprof.err" | awk '
		function flush(  s, i) {
			if (n) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; print s, count }
			n = 0; intrace = 1; comm = "?"
		}
		/^-+\+-+$/ { flush(); next }
		!intrace { next }
		n == 0 && $1 == "comm:" { comm = $2; next }
		n == 0 && /^ *[0-9]+ +[^ ]/ { count = $1; sub(/^ *[0-9]+ +/, ""); f[++n] = $0; next }
		n > 0 { sub(/^ +/, ""); f[++n] = $0 }
		END { flush() }' >"$1.folded"
	[[ -s $1.folded ]] || fail "go tool pprof cannot read $(basename "$1"): $(head -n1 "$1.pprof.err")"
}

# heaviest FOLDED REGEX: the two heaviest lines matching REGEX, cut short, for
# the reason of a failure.
heaviest() {
	grep -E -- "$2" "$1" | sort -t' ' -k2 -rn | head -n2 |
		awk '{ n = $NF; sub(/ [0-9]+$/, ""); printf "[%s %d] ", substr($0, 1, 160), n }'
}

# case_ran NAME: the guest ran the case NAME (exec, dlopen), cprof exited 0,
# and its profile arrived; then folds it into DIR/NAME.folded.
case_ran() {
	local rc
	rc=$(info "rc-$1")
	[[ -n $rc ]] || fail "$1: the guest did not run it (no rc-$1)"
	[[ $rc == 0 ]] ||
		fail "$1: cprof exited $rc: $(grep -m1 '^cprof: ' "$DIR/$1-log" 2>/dev/null | cut -c1-120)"
	[[ -f $DIR/$1 ]] || fail "$1: no profile arrived"
	folded "$DIR/$1"
}

# The exec case: brief, 40 ms of CPU at a time, run 6 times from the shell
# and 6 times through env. Every sample with brief's frames (work, brief_a,
# brief_b) must be filed under the process brief, none under sh or env (where
# a map read before the exec, or not followed through it, files them), both
# known stacks must be whole, and brief's code must hold at least half of
# brief's samples and of the [unknown] ones elsewhere (70-90% when it passes),
# so that samples filed elsewhere without brief's frames fail too. Not a share
# of the whole profile: under TCG a loaded host makes sh's forks and execs
# take a larger share, which says nothing of where brief's samples went.
# check_exec CASE: the exec case, or copies, the same walked in user space
# from the stack copies of perf samples (--stack-copies). Sets RESULT.
check_exec() {
	local c=$1
	local total under elsewhere whole_a whole_b lost where
	case_ran "$c"
	read -r total under elsewhere whole_a whole_b lost <<<"$(awk '
		{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line); split(line, f, ";") }
		f[1] == "brief" { mine += n }
		f[1] != "brief" && line ~ /(^|;)\[unknown\](;|$)/ { lost += n }
		line !~ /;(work|brief_a|brief_b)(;|$)/ { next }
		f[1] != "brief" { other += n; next }
		{ brief += n }
		line ~ /;main;work;brief_a(;|$)/ { a += n }
		line ~ /;main;work;brief_b(;|$)/ { b += n }
		END { print mine + lost + 0, brief + 0, other + 0, a + 0, b + 0, lost + 0 }' "$DIR/$c.folded")"
	if [[ $elsewhere -ne 0 ]]; then
		where=$(awk '$0 ~ /;(work|brief_a|brief_b)(;| )/ && $0 !~ /^brief;/ { split($1, f, ";")
			c[f[1]] += $NF } END { for (p in c) printf "%s %d ", p, c[p] }' "$DIR/$c.folded")
		fail "$c: $elsewhere samples with brief's frames not under brief (${where% })"
	fi
	[[ $whole_a -gt 0 && $whole_b -gt 0 ]] ||
		fail "$c: no whole stack main;work;brief_a ($whole_a) or main;work;brief_b ($whole_b)" \
			"under brief: $(heaviest "$DIR/$c.folded" '^brief;.*brief_[ab]( |;)')"
	[[ $((under * 2)) -ge $total ]] ||
		fail "$c: $under of the $total samples of brief or [unknown] elsewhere ($lost) in" \
			"brief's code, want half; by process:" \
			"$(awk '{ split($1, f, ";"); c[f[1]] += $NF } END { for (p in c) printf "%s %d ", p, c[p] }' \
				"$DIR/$c.folded")"
	RESULT="brief $under of $total under brief, 0 elsewhere"
}

# The dlopen case: dlopen_call loads /lib/libplugin.so and calls it at once,
# 5 times 40 ms. The samples in the library's code are those whose frame
# under run_plugin is plugin_work, unnamed ([unknown]) or libplugin.so+0x...,
# or with any libplugin.so+0x frame: 95% of them must name plugin_work (a
# library whose mapping was not followed has none named), with the whole
# stack main;run_plugin;plugin_work;plugin_spin. musl's own frames (the
# loader, dlopen) are not counted: Debian's libc.so has no frame pointers.
check_dlopen() {
	local in_lib named
	case_ran dlopen
	read -r in_lib named <<<"$(awk '
		{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";") }
		f[1] != "dlopen_call" { next }
		{ for (j = 2; j < k && f[j] != "run_plugin"; j++) ; c = j < k ? f[j + 1] : "" }
		c == "plugin_work" { in_lib += n; named += n; next }
		c == "[unknown]" || c ~ /^libplugin\.so\+0x/ || line ~ /;libplugin\.so\+0x/ { in_lib += n }
		END { print in_lib + 0, named + 0 }' "$DIR/dlopen.folded")"
	[[ $in_lib -gt 0 && $((named * 100)) -ge $((in_lib * 95)) ]] ||
		fail "dlopen: $named of $in_lib samples in libplugin.so name plugin_work (want 95%):" \
			"$(heaviest "$DIR/dlopen.folded" ';run_plugin;(\[unknown\]|libplugin)|;libplugin\.so\+0x')"
	grep -qE '^dlopen_call;(.*;)?main;run_plugin;plugin_work;plugin_spin( |;)' "$DIR/dlopen.folded" ||
		fail "dlopen: no stack main;run_plugin;plugin_work;plugin_spin under dlopen_call:" \
			"$(heaviest "$DIR/dlopen.folded" '^dlopen_call;.*plugin_spin( |;)')"
	DLOPEN_RESULT="$named of $in_lib named"
}

# nofp: main -> work -> mid -> hot_a / hot_b, -O2 without frame pointers,
# static against musl. Its samples in hot_a or hot_b must never show a
# wrong caller (a walk by frame pointers loses mid: rbp is a plain register
# there); 80% or more must hold the whole chain main;work;mid above the
# leaf, both leaves seen so. The rest may end in a truncation marker with
# the end of that chain below it: a guest this slow (TCG) can be over a
# second late applying a new process's mappings, and a walk that found no
# mapping then stops and says so.
# check_nofp [FOLDED]: nofp's stacks in the main profile, or in FOLDED. Sets NOFP_RESULT.
check_nofp() {
	local leaf whole cut in=${1:-$DIR/profile.folded}
	read -r leaf whole cut <<<"$(awk '$0 ~ /^nofp;/ {
			n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
			if (line !~ /;hot_[ab]$/) next
			leaf += n
			if (line ~ /;main;work;mid;hot_[ab]$/) whole += n
			else if (line ~ /^nofp;\[truncated: [^]]*\](;(((libc_start_main_stage2;)?main;)?work;)?mid)?;hot_[ab]$/) cut += n
		} END { print leaf + 0, whole + 0, cut + 0 }' "$in")"
	[[ $leaf -gt 0 ]] || fail "nofp: no sample in hot_a or hot_b in ${in##*/}"
	[[ $((whole + cut)) -eq $leaf && $((whole * 100)) -ge $((leaf * 80)) ]] ||
		fail "nofp: of the $leaf samples in hot_a or hot_b in ${in##*/}, $whole under" \
			"main;work;mid, $cut truncated, $((leaf - whole - cut)) wrong:" \
			"$(heaviest "$in" '^nofp;.*hot_[ab] [0-9]+$')"
	if ! grep -qE '^nofp;.*;main;work;mid;hot_a ' "$in" ||
		! grep -qE '^nofp;.*;main;work;mid;hot_b ' "$in"; then
		fail "nofp: no whole stack main;work;mid;hot_a or ...;hot_b in ${in##*/}"
	fi
	NOFP_RESULT="$whole of $leaf whole, $cut truncated"
}

# The whole-system case: nofp's stacks whole as in the main profile, the
# in-kernel walk of --max-stack 1024 taken by the verifier, and the first
# sample taken before the BPF program (the head start), as cprof -v says,
# unless it says why it started without one. Sets SYSTEM_RESULT.
check_system() {
	local first
	case_ran system
	check_nofp "$DIR/system.folded"
	! grep -q 'the kernel refused the in-kernel walk' "$DIR/system-log" ||
		fail "system: --max-stack 1024: $(grep -m1 -o 'the kernel refused the in-kernel walk.*' "$DIR/system-log" | cut -c1-120)"
	first=$(grep -oE 'the first sample was taken at CLOCK_MONOTONIC [0-9]+ ns, [0-9.]+ ms' \
		"$DIR/system-log" | grep -oE '[0-9.]+ ms$' || true)
	if [[ -z $first ]]; then
		grep -q 'sampling starts with the BPF program' "$DIR/system-log" ||
			fail "system: no head start, and no reason given: $(grep -m1 '^cprof: ' "$DIR/system-log" | cut -c1-120)"
		first="none ($(grep -o 'cannot open the sampling events early: .*' "$DIR/system-log" | cut -c1-60))"
	fi
	SYSTEM_RESULT="nofp $NOFP_RESULT; head start: first sample $first after opening"
}

# check_counts LOG FOLDED MIN: the profile FOLDED of the run LOG holds the
# samples its summary line says ("cprof: N samples in T s at HZ Hz on C
# CPUs"), no more than HZ a second on each CPU (5% and 50 samples of slack;
# a count no timer can give is garbage, as a drain that counted a failed
# call made it on kernels before 5.6), at least MIN, and LOG says no drain
# failed and no mismatch with the BPF side's count. Sets COUNT.
check_counts() {
	local log=$1 folded=$2 min=$3 name total said secs hz cpus max
	name=$(basename "$log")
	! grep -qE 'draining the BPF maps failed|MISMATCH' "$log" ||
		fail "$name: $(grep -m1 -E 'draining the BPF maps failed|MISMATCH' "$log" | cut -c1-120)"
	total=$(awk '{ n += $NF } END { printf "%.0f\n", n }' "$folded")
	read -r said secs hz cpus <<<"$(awk '/^cprof: [0-9]+ samples? in [0-9.]+ s at [0-9]+ Hz on/ {
		print $2, $5, $8, $11 }' "$log")"
	[[ -n $said ]] || fail "$name: no summary line (cprof: N samples in T s ...)"
	[[ $said == "$total" ]] || fail "$name: the profile holds $total samples, the summary says $said"
	max=$(awk -v s="$secs" -v c="$cpus" -v h="$hz" 'BEGIN { printf "%d", h * s * c * 1.05 + 50 }')
	awk -v t="$total" -v lo="$min" -v hi="$max" 'BEGIN { exit !(t >= lo && t <= hi) }' ||
		fail "$name: $total samples in $secs s on $cpus CPUs at $hz Hz: want $min to $max"
	COUNT=$total
}

# check_top [FOLDED]: the fixtures' leaves lead the main profile (or FOLDED). Of the samples of
# known_tree and nofp (two of its three busy processes: a quarter of it at
# least; syscall_heavy's are the kernel's), hot_a and hot_b, in that order,
# are the heaviest leaves and hold half (a TCG guest
# spends much in interrupts taken in them); known_tree splits 70/30 between them
# (55-85% for hot_a: a TCG guest is noisy).
check_top() {
	local all mine top ab a b in=${1:-$DIR/profile.folded}
	read -r all mine ab <<<"$(awk '{ n = $NF; all += n } /^(known_tree|nofp);/ { mine += n }
		/^(known_tree|nofp);.*;hot_[ab] [0-9]+$/ { ab += n } END { print all + 0, mine + 0, ab + 0 }' \
		"$in")"
	[[ $((mine * 4)) -ge $all ]] ||
		fail "known_tree and nofp hold $mine of $all samples in ${in##*/}, want a quarter"
	top=$(awk '/^(known_tree|nofp);/ { n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
		c[f[k]] += n } END { for (l in c) print c[l], l }' "$in" |
		sort -rn | head -n2 | awk '{ printf "%s ", $2 }')
	[[ $top == "hot_a hot_b " && $((ab * 2)) -ge $mine ]] ||
		fail "known_tree's and nofp's heaviest leaves in ${in##*/} are ${top% } ($ab of $mine samples in" \
			"hot_a or hot_b, want hot_a and hot_b, half): $(heaviest "$in" '^(known_tree|nofp);')"
	read -r a b <<<"$(awk '/^known_tree;.*;work;hot_a [0-9]+$/ { a += $NF }
		/^known_tree;.*;work;hot_b [0-9]+$/ { b += $NF } END { print a + 0, b + 0 }' "$in")"
	[[ $((a + b)) -gt 0 && $((a * 100)) -ge $(((a + b) * 55)) && $((a * 100)) -le $(((a + b) * 85)) ]] ||
		fail "known_tree in ${in##*/}: hot_a $a, hot_b $b samples, want 70/30"
}

# check_fixtures FOLDED LOG: the profile of known_tree, nofp and
# syscall_heavy: their stacks, kernel frames named, a plausible count (at
# least a tenth of what one busy process gives at -F 499: a slow TCG guest),
# the leaves and split of check_top, nofp's stacks whole. Sets COUNT and
# NOFP_RESULT.
check_fixtures() {
	local in=$1 log=$2
	grep -qE ';main;work;hot_a( |;)' "$in" || fail "no main;work;hot_a stack in ${in##*/}"
	grep -qE ';main;work;hot_b( |;)' "$in" || fail "no main;work;hot_b stack in ${in##*/}"
	grep -qE ';(vfs_read|ksys_read);' "$in" ||
		fail "no kernel frame vfs_read or ksys_read under syscall_heavy's reads in ${in##*/}"
	! grep -qE ';\[kernel\](;| )' "$in" || fail "kernel frames without a name ([kernel]) in ${in##*/}"
	check_counts "$log" "$in" "$(awk '/^cprof: [0-9]+ samples? in/ { printf "%d", $5 * 499 / 10 }' "$log")"
	check_top "$in"
	check_nofp "$in"
}

# check_memlock NAME LOG RC: cprof without CAP_SYS_RESOURCE under a 64 KiB
# RLIMIT_MEMLOCK exited 1 (RC), its log naming the limit, once.
check_memlock() {
	local msg n
	msg=$(grep -m1 '^cprof: ' "$2" || true)
	[[ $3 == 1 && $msg == *"RLIMIT_MEMLOCK, which is 64 KiB"* ]] ||
		fail "$1: cprof without CAP_SYS_RESOURCE exited $3: ${msg:-no message}"
	n=$(grep -c 'RLIMIT_MEMLOCK, which is' "$2" || true)
	[[ $n -eq 1 ]] || fail "$1: the refusal naming RLIMIT_MEMLOCK said $n times, want once"
}

# before RELEASE MAJOR.MINOR: RELEASE is older than MAJOR.MINOR.
before() {
	awk -v v="$1" -v w="$2" 'BEGIN { split(v, a, "."); split(w, b, ".")
		exit !(a[1] * 1000 + a[2] < b[1] * 1000 + b[2]) }'
}

# check_as RELEASE: the profile as on RELEASE (CPROF_KERNEL_AS) passes
# check_fixtures and names its fallbacks in one line: before 5.6 maps
# drained key by key (no batched operations), before 5.5 every user stack
# walked from copies; and the memlock refusal so names the limit, once.
# Sets AS_RESULT.
check_as() {
	local v=$1 n fallbacks
	case_ran as
	check_fixtures "$DIR/as.folded" "$DIR/as-log"
	n=$(grep -c "^cprof: kernel fallbacks (as Linux $v, CPROF_KERNEL_AS): " "$DIR/as-log" || true)
	[[ $n -eq 1 ]] || fail "as $v: the fallbacks named $n times, want once"
	fallbacks=$(grep "^cprof: kernel fallbacks (as Linux $v, " "$DIR/as-log")
	! before "$v" 5.6 || [[ $fallbacks == *"no batched map operations"* ]] ||
		fail "as $v: maps not drained key by key: ${fallbacks:0:120}"
	! before "$v" 5.5 || grep -q 'every user stack walked in user space from a copy' "$DIR/as-log" ||
		fail "as $v: user stacks not all walked from copies: ${fallbacks:0:120}"
	[[ -n $(info rc-as-memlock) ]] || fail "as $v: the guest did not run the memlock refusal (no rc-as-memlock)"
	check_memlock "as $v memlock" "$DIR/as-memlock-log" "$(info rc-as-memlock)"
	AS_RESULT="as $v: $COUNT samples, nofp $NOFP_RESULT, memlock refused once"
}

main() {
	[[ $# -eq 3 || $# -eq 4 ]] || fail "usage: qemu/check.sh CONSOLE_LOG MODE DIR [AS]"
	LOG=$1
	local mode=$2 as=${4:-} splat rc btf samples nofp_result exec_result as_result=''
	DIR=$3
	mkdir -p "$DIR"
	# The serial console ends lines with CR LF.
	sed -i 's/\r$//' "$LOG"

	grep -qx '@@cprof done' "$LOG" || fail "guest stopped before the end: $(last_words || echo 'no kernel message')"
	decode
	splat=$(grep -E "$SPLATS" "$DIR/dmesg" | head -n1 | sed 's/^\[[ 0-9.]*\] //' | cut -c1-100 || true)
	[[ -z $splat ]] || fail "kernel splat: $splat"
	rc=$(info rc)
	if [[ $mode == memlock ]]; then
		check_memlock memlock "$DIR/log" "$rc"
		echo "refused: RLIMIT_MEMLOCK named once"
		return
	fi
	[[ $rc == 0 ]] || fail "cprof exited $rc: $(grep -m1 '^cprof: ' "$DIR/log" | cut -c1-120)"
	btf=$(info btf)
	if [[ $mode == no-btf && $btf != 0 && $btf != absent ]]; then
		fail "kernel BTF still readable ($btf bytes) in no-btf mode"
	fi

	[[ -f $DIR/profile ]] || fail "no profile arrived"
	folded "$DIR/profile"
	check_fixtures "$DIR/profile.folded" "$DIR/log"
	samples=$COUNT
	nofp_result=$NOFP_RESULT
	check_exec exec
	check_counts "$DIR/exec-log" "$DIR/exec.folded" 1
	exec_result=$RESULT
	check_exec copies
	check_counts "$DIR/copies-log" "$DIR/copies.folded" 1
	check_dlopen
	check_counts "$DIR/dlopen-log" "$DIR/dlopen.folded" 1
	check_system
	check_counts "$DIR/system-log" "$DIR/system.folded" 1
	if [[ -n $as ]]; then
		check_as "$as"
		as_result="; $AS_RESULT"
	fi
	echo "$samples samples; nofp: $nofp_result; exec: $exec_result; copies: $RESULT; dlopen: $DLOPEN_RESULT;" \
		"system: $SYSTEM_RESULT$as_result"
}

main "$@"
