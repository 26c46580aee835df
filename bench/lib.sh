# SPDX-License-Identifier: MIT
#
# Helpers shared by bench/run and bench/stacks: messages, Debian packages,
# BPF run-time statistics, machine load, generated text and markdown cells.
# A script sets W (its scratch directory) before calling install_missing.
# shellcheck shell=bash

STATS_SYSCTL=      # kernel.bpf_stats_enabled before we changed it

say() { printf 'bench: %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

# wait_bounded PID SECONDS WHAT: waits for the child PID; past SECONDS, says
# where its threads wait and kills it, so that a hung tool costs one figure,
# not the whole run. Returns PID's status (137 once killed).
wait_bounded() {
	local pid=$1 limit=$2 what=$3 dog rc=0
	# Already reaped by the shell (its status kept): a fork first would lose it.
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		return
	fi
	(
		# A trap runs during `wait`, not during a command: the sleep is waited for.
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$limit" &
		s=$!
		wait "$s"
		kill -0 "$pid" 2>/dev/null || exit 0
		say "$what still running after $limit s, killed; its threads wait in:" \
			"$(ps -L -p "$pid" -o stat=,wchan:32= 2>/dev/null | tr -s ' \n' ' ')"
		kill -KILL "$pid" 2>/dev/null
	) &
	dog=$!
	wait "$pid" || rc=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null || true
	return "$rc"
}

installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# install_missing PACKAGE...: apt-get installs those not installed yet; the
# log stays in $W/apt.log and its tail is printed if that fails.
install_missing() {
	local missing=() p
	for p in "$@"; do
		installed "$p" || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
		>"$W/apt.log" 2>&1; then
		tail -n 20 "$W/apt.log" >&2
		die "installing ${missing[*]} failed"
	fi
}

# run_time_ns only counts while kernel.bpf_stats_enabled=1; the value found
# is put back by restore_bpf_stats (also on exit, from the cleanup trap).
enable_bpf_stats() {
	[[ -z $STATS_SYSCTL ]] && STATS_SYSCTL=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
}

restore_bpf_stats() {
	if [[ -n $STATS_SYSCTL ]]; then
		sysctl -qw kernel.bpf_stats_enabled="$STATS_SYSCTL" || true
		STATS_SYSCTL=
	fi
}

# Percent of CPU time used by everything on the machine over one second.
cpu_busy_pct() {
	local a b
	a=$(head -n 1 /proc/stat)
	sleep 1
	b=$(head -n 1 /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN {
		n = split(a, x); split(b, y)
		for (i = 2; i <= n; i++) { d = y[i] - x[i]; t += d; if (i == 5 || i == 6) idle += d }
		printf "%.0f", t ? 100 * (t - idle) / t : 0 }'
}

# gen_lines N: deterministic text (N lines; 0: endless), numbers and words,
# compressible like a log.
gen_lines() {
	awk -v n="$1" 'BEGIN {
		srand(42)
		k = split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu", w, " ")
		for (i = 0; n == 0 || i < n; i++)
			printf "%08d %s %s %.6f\n", i, w[int(rand() * k) + 1], w[int(rand() * k) + 1], rand() * 1000
	}'
}

# fmt VALUE DECIMALS [SCALE]: VALUE*SCALE, or "n/a".
fmt() {
	[[ -n $1 ]] || { echo "n/a"; return; }
	awk -v v="$1" -v d="$2" -v s="${3:-1}" 'BEGIN { printf "%.*f", d, v * s }'
}

# ratio A B: A/B to two decimals, or "n/a".
ratio() {
	[[ -n $1 && -n $2 ]] || { echo "n/a"; return; }
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'
}

# row CELL...: one markdown table row.
row() {
	local line="|" cell
	for cell in "$@"; do
		line+=" $cell |"
	done
	echo "$line"
}
