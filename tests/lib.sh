# Shared helpers for tests/e2e/*.sh and tests/gates/*.sh: the ok/not ok/skip line protocol,
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
# await_file FILE: waits up to 10 s for FILE to be non-empty (a server's port file).
await_file() {
	for _ in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# Go's pprof reader wants a writable home and cache.
export HOME=${HOME:-$TMP}
# cprof's unwind tables are kept between runs (--cache-dir): each script
# starts with none, and leaves the user's own alone.
export XDG_CACHE_HOME=$TMP/cache
export PPROF_TMPDIR=$TMP/pprof GOCACHE=$TMP/gocache GOFLAGS=-mod=mod
mkdir -p "$PPROF_TMPDIR"

# pprof_top FILE: "flat% name" lines from `go tool pprof -top`.
pprof_top() {
	go tool pprof -top -nodecount=1000 "$1" 2>/dev/null |
		awk '$2 ~ /%$/ && NF >= 6 { sub(/%$/, "", $2); name=$6; for (i = 7; i <= NF; i++) name = name " " $i; print $2, name }'
}
# pprof_flat FILE FUNCTION: the function's flat share in percent (0 if absent);
# FUNCTION is the whole name, spaces and backslashes included.
pprof_flat() {
	pprof_top "$1" | F=$2 awk '{ v = $1; sub(/^[^ ]* /, "") }
		$0 == ENVIRON["F"] { print v; found=1 } END { if (!found) print 0 }'
}
# folded_share FILE SUFFIX: percent of samples whose folded stack ends with SUFFIX.
folded_share() {
	S=$2 awk 'BEGIN { s = ENVIRON["S"] } { n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line);
		if (substr(line, length(line) - length(s) + 1) == s) hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$1"
}
# within VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE (decimals allowed).
within() {
	awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'
}

# For the symbolization tests (tests/e2e/symbolize_*.sh). awk may be mawk,
# which has no strtonum: HEX_AWK parses hex.
HEX_AWK='function hex(s,  i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'
# sym_range BINARY SYMBOL: "START END" (decimal) of SYMBOL's addresses, from
# nm -S; prints nothing if there is no such symbol.
sym_range() {
	nm -S "$1" | awk -v n="$2" "$HEX_AWK"'$4 == n && !done { v = hex($1); printf "%d %d\n", v, v + hex($2); done = 1 }'
}
# sym_file_range BINARY SYMBOL: the same as file offsets, through the PT_LOAD
# that holds it; prints nothing if there is none.
sym_file_range() {
	local r
	r=$({ nm -S "$1" | awk -v n="$2" '$4 == n { print "SYM", $1, $2 }'; readelf -lW "$1"; } |
		awk "$HEX_AWK"'
		$1 == "SYM" && !v { v = hex($2); s = hex($3) }
		$1 == "LOAD" && v && !done { off = hex($2); va = hex($3); sz = hex($6)
			if (v >= va && v < va + sz) { printf "%d %d\n", v - va + off, v - va + off + s; done = 1 } }')
	[ -n "$r" ] && echo "$r"
}
# leaf_share FOLDED PREFIX START END: percent of samples whose leaf frame is
# PREFIX followed by a hex number N with START <= N < END ("app+0x": an
# address, "app@0x": a file offset).
leaf_share() {
	awk -v m="$2" -v lo="$3" -v hi="$4" "$HEX_AWK"'
		{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line)
		  k = split(line, f, ";"); leaf = f[k]
		  if (index(leaf, m) == 1) { off = hex(substr(leaf, length(m) + 1))
			if (off >= lo && off < hi) hit += n } }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$1"
}
# split_70_30 TEST FOLDED PREFIX RANGE_FN BINARY: 70% and 30% of the leaves
# are PREFIX+N inside hot_a's and hot_b's ranges, as RANGE_FN gives them.
split_70_30() {
	local a0 a1 b0 b1 a b
	read -r a0 a1 <<<"$("$4" "$5" hot_a)"
	read -r b0 b1 <<<"$("$4" "$5" hot_b)"
	a=$(leaf_share "$2" "$3" "$a0" "$a1")
	b=$(leaf_share "$2" "$3" "$b0" "$b1")
	if within "$a" 70 8 && within "$b" 30 8; then ok "$1"; else
		not_ok "$1" "hot_a $a%, hot_b $b% of leaves $3... (want 70/30): $(head -2 "$2")"; fi
}
# check_fallback_split TEST FOLDED MODULE [BINARY]: FOLDED profiles a copy of
# BINARY (known_tree by default) named MODULE that cprof could not name; its
# leaves are MODULE+0xADDR at hot_a's and hot_b's addresses, as addr2line
# and objdump take them.
check_fallback_split() {
	split_70_30 "$1" "$2" "$3+0x" sym_range "${4:-$FIX/known_tree}"
}
# check_offset_split TEST FOLDED MODULE: the same for a copy cprof could not
# read at all: MODULE@0xOFFSET, at hot_a's and hot_b's bytes in the file.
check_offset_split() {
	split_70_30 "$1" "$2" "$3@0x" sym_file_range "$FIX/known_tree"
}

# npm_install SRC DIR: the npm packages SRC/package-lock.json pins, installed
# into DIR (never into the source tree) with npm ci, once, and again only when
# the lock file changes; says why on stderr when that fails.
npm_install() {
	local src=$1 dir=$2
	mkdir -p "$dir" || return 1
	if [ -d "$dir/node_modules" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
		return 0
	fi
	cp "$src/package.json" "$src/package-lock.json" "$dir/" || return 1
	if ! (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts) >"$dir/npm.log" 2>&1; then
		echo "npm ci failed: $(grep -m 3 'npm error' "$dir/npm.log" | tr '\n' ' ')" >&2
		rm -rf "$dir/node_modules"
		return 1
	fi
}

# _run_with_code NAME CODE ARGS...: runs cprof into $TMP/out and $TMP/err; says
# "not ok" and fails unless it exits CODE.
_run_with_code() {
	local name=$1 code=$2 rc
	shift 2
	"$CPROF" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = "$code" ] && return 0
	not_ok "$name" "exit $rc, want $code; stderr: $(head -c 300 "$TMP/err")"
	return 1
}
# expect_fail NAME CODE PATTERN ARGS...: cprof ARGS exits with CODE and prints PATTERN
# in a short message.
expect_fail() {
	local name=$1 code=$2 pattern=$3
	shift 3
	_run_with_code "$name" "$code" "$@" || return 0
	if ! grep -q -- "$pattern" "$TMP/err"; then
		not_ok "$name" "stderr lacks '$pattern': $(head -c 300 "$TMP/err")"
	elif [ "$(grep -c 'cprof' "$TMP/err")" -gt 2 ]; then
		not_ok "$name" "more than a short message: $(head -c 300 "$TMP/err")"
	else
		ok "$name"
	fi
}
# expect_line NAME CODE LINE ARGS...: exits CODE and stderr's first line is exactly LINE.
expect_line() {
	local name=$1 code=$2 line=$3
	shift 3
	_run_with_code "$name" "$code" "$@" || return 0
	if [ "$(head -n 1 "$TMP/err")" != "$line" ]; then
		not_ok "$name" "first line '$(head -n 1 "$TMP/err")', want '$line'"
	else
		ok "$name"
	fi
}
