#!/usr/bin/env bash
# Kernel frames: a syscall-heavy fixture (read(2) of /dev/zero) must show
# kernel stacks on top of its user stack, named from /proc/kallsyms.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip kernel "$why"
	exit 0
fi

"$CPROF" -F 499 --format folded -o "$TMP/k.folded" -- "$FIX/syscall_heavy" 2 >/dev/null 2>"$TMP/k.err"
check syscall_exit_zero [ $? -eq 0 ]
# User part root..leaf, then kernel part root..leaf (marked _[k] in folded output).
kshare=$(folded_share "$TMP/k.folded" "_[k]")
check mostly_kernel_time within "$kshare" 100 40
# (do_reads itself may be missing: libc's read() sets up no frame pointer, so
# a frame-pointer walk from inside it skips its caller - see README, Limits.)
check user_then_kernel_stack grep -qE ';main;([^;]*;)*entry_SYSCALL[^;]*_\[k\];' "$TMP/k.folded"
check vfs_read_in_kernel_stack grep -qE ';(vfs_read|ksys_read)_\[k\]' "$TMP/k.folded"

# Every kernel frame name must be a real kallsyms text symbol.
grep -oE '[^;]+_\[k\]' "$TMP/k.folded" | sed 's/_\[k\]$//' | sort -u >"$TMP/knames"
awk '$2 ~ /^[tTwW]$/ { print $3 }' /proc/kallsyms | sort -u >"$TMP/kallsyms"
missing=$(comm -23 "$TMP/knames" "$TMP/kallsyms" | grep -v '^\[kernel\]$' | head -5)
if [ -s "$TMP/knames" ] && [ -z "$missing" ]; then ok kernel_names_from_kallsyms; else
	not_ok kernel_names_from_kallsyms "not in kallsyms: ${missing:-(no kernel frames)}"; fi

"$CPROF" -F 499 -o "$TMP/k.pb.gz" -- "$FIX/syscall_heavy" 1 >/dev/null 2>&1
go tool pprof -raw "$TMP/k.pb.gz" >"$TMP/k.raw" 2>&1
check kernel_mapping grep -q '\[kernel.kallsyms\]' "$TMP/k.raw"
finish
