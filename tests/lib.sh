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
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
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
