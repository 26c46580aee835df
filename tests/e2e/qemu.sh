#!/usr/bin/env bash
# The kernel matrix (qemu/run) as part of the suite: every kernel of
# qemu/kernels booted in QEMU, x86_64 and arm64, cprof profiling the fixtures
# inside, the profile checked here. One line per kernel, architecture and mode.
# Needs QEMU (./build.sh installs it) and, the first time, Debian's archive for
# the kernels; no root.
source "$(dirname "$0")/../lib.sh"

for q in qemu-system-x86_64 qemu-system-aarch64; do
	if ! command -v "$q" >/dev/null; then
		skip qemu_matrix "$q not installed (./build.sh installs qemu-system-x86 and qemu-system-arm)"
		exit 0
	fi
done

"$ROOT/qemu/run" >"$TMP/matrix" 2>"$TMP/matrix.err"
rc=$?
# "VERSION ARCH[ MODE]: PASS (...)" -> "ok qemu_VERSION_ARCH[_MODE] (...)"
while IFS= read -r line; do
	name=qemu_$(tr ' ' _ <<<"${line%%: *}")
	case $line in
	*": PASS ("*) ok "$name (${line#*: PASS (}" ;;
	*": FAIL ("*) not_ok "$name" "${line#*: FAIL (}" ;;
	*) echo "$line" >&2 ;; # the total
	esac
done <"$TMP/matrix"
cat "$TMP/matrix.err" >&2
if [ "$rc" -eq 2 ]; then
	not_ok qemu_matrix "qemu/run could not run: $(grep '^qemu/' "$TMP/matrix.err" | tail -n1)"
fi
exit "$rc"
