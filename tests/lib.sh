# Shared helpers for tests/e2e/*.sh: the ok/not ok/skip line protocol,
# root/BPF checks, and a scratch directory removed on exit.
# shellcheck shell=bash
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CPROF=${CPROF:-$ROOT/cprof}
FIX=$ROOT/.output/fixtures
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cprof-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_failures=0

ok() { echo "ok $1"; }
not_ok() { echo "not ok $1 - $2"; _failures=$((_failures + 1)); }
skip() { echo "skip $1 - $2"; }
# check NAME CONDITION-COMMAND... : ok if the command succeeds.
check() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}
# Returns non-zero (and says why on stderr) when BPF profiling cannot run here.
can_bpf() {
	if [ "$(id -u)" != 0 ]; then
		echo "needs root" >&2
		return 1
	fi
	return 0
}
finish() { [ "$_failures" -eq 0 ]; }

# Go's pprof reader wants a writable home and cache.
export HOME=${HOME:-$TMP}
export PPROF_TMPDIR=$TMP/pprof GOCACHE=$TMP/gocache GOFLAGS=-mod=mod
mkdir -p "$PPROF_TMPDIR"

# pprof_top FILE: "flat% name" lines from `go tool pprof -top`.
pprof_top() {
	go tool pprof -top -nodecount=1000 "$1" 2>/dev/null |
		awk '$2 ~ /%$/ && NF >= 6 { sub(/%$/, "", $2); name=$6; for (i = 7; i <= NF; i++) name = name " " $i; print $2, name }'
}
# pprof_flat FILE FUNCTION: the function's flat share in percent (0 if absent).
pprof_flat() {
	pprof_top "$1" | awk -v f="$2" '$2 == f { print $1; found=1 } END { if (!found) print 0 }'
}
# folded_share FILE SUFFIX: percent of samples whose folded stack ends with SUFFIX.
folded_share() {
	awk -v s="$2" '{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line);
		if (substr(line, length(line) - length(s) + 1) == s) hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$1"
}
# within VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE (decimals allowed).
within() {
	awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'
}
