#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Checks what a guest of qemu/run sent over its serial console (the protocol
# of qemu/init.sh):
#
#   qemu/check.sh CONSOLE_LOG MODE DIR
#
# MODE is the guest's (btf, no-btf or memlock); the decoded files go to DIR.
# Prints what passed ("N samples") and exits 0, or prints the reason of the
# failure and exits 1. A guest passes when everything arrived intact, the
# kernel logged no WARN/BUG/oops, cprof exited 0, the profile holds the
# fixtures' known stacks (main;work;hot_a and main;work;hot_b) and kernel
# frames named from kallsyms (vfs_read under syscall_heavy's read(2)), and,
# in no-btf mode, the kernel's BTF really was out of reach. In memlock mode
# cprof must instead fail with the one-line message that names the limit.
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

# folded: the profile's stacks as "root;...;leaf COUNT" lines, from Go's pprof.
folded() {
	go tool pprof -traces -sample_index=samples "$DIR/profile" 2>"$DIR/pprof.err" | awk '
		function flush(  s, i) {
			if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; print s, count }
			n = 0; intrace = 1
		}
		/^-+\+-+$/ { flush(); next }
		!intrace { next }
		n == 0 && /^ *[0-9]+ +[^ ]/ { count = $1; sub(/^ *[0-9]+ +/, ""); f[++n] = $0; next }
		n > 0 { sub(/^ +/, ""); f[++n] = $0 }
		END { flush() }'
}

main() {
	[[ $# -eq 3 ]] || fail "usage: qemu/check.sh CONSOLE_LOG MODE DIR"
	LOG=$1
	local mode=$2 splat rc btf samples
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
		local msg
		msg=$(grep -m1 '^cprof: ' "$DIR/log" || true)
		[[ $rc == 1 && $msg == *"RLIMIT_MEMLOCK, which is 64 KiB"* ]] ||
			fail "cprof without CAP_SYS_RESOURCE exited $rc: ${msg:-no message}"
		echo "refused: RLIMIT_MEMLOCK named"
		return
	fi
	[[ $rc == 0 ]] || fail "cprof exited $rc: $(grep -m1 '^cprof: ' "$DIR/log" | cut -c1-120)"
	btf=$(info btf)
	if [[ $mode == no-btf && $btf != 0 && $btf != absent ]]; then
		fail "kernel BTF still readable ($btf bytes) in no-btf mode"
	fi

	folded >"$DIR/folded" || fail "go tool pprof cannot read the profile: $(head -n1 "$DIR/pprof.err")"
	grep -qE '(^|;)main;work;hot_a( |;)' "$DIR/folded" || fail "no main;work;hot_a stack in the profile"
	grep -qE '(^|;)main;work;hot_b( |;)' "$DIR/folded" || fail "no main;work;hot_b stack in the profile"
	grep -qE ';(vfs_read|ksys_read);' "$DIR/folded" ||
		fail "no kernel frame vfs_read or ksys_read under syscall_heavy's reads"
	! grep -qE '(^|;)\[kernel\](;| )' "$DIR/folded" || fail "kernel frames without a name ([kernel])"
	samples=$(awk '{ n += $NF } END { print n + 0 }' "$DIR/folded")
	echo "$samples samples"
}

main "$@"
