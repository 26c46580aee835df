#!/usr/bin/env bash
# Issue 3, case 3: frames in the vDSO are named from the vDSO image (cprof
# reads its own, the same image as every 64-bit process's), not left as
# [vdso]+0xOFFSET. The fixture spends its time in clock_gettime, which glibc
# runs in the vDSO.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_vdso "$why"
	exit 0
fi
"$CPROF" -F 499 --format folded -o "$TMP/v.folded" -- "$FIX/vdso_clock" 1 2>"$TMP/v.err"
check vdso_exit_zero [ $? -eq 0 ]
# The vDSO's entry point for clock_gettime.
case $(uname -m) in
aarch64) vfn=__kernel_clock_gettime ;;
*) vfn=__vdso_clock_gettime ;;
esac
share=$(folded_share "$TMP/v.folded" ";$vfn")
check vdso_leaf_named within "$share" 100 50
check vdso_not_left_unnamed bash -c "! grep -q '\[vdso\]+0x' '$TMP/v.folded'"
check vdso_in_summary grep -qE "^ +[0-9.]+% +[0-9.]+% +[0-9]+ +$vfn \(\[vdso\]\)\$" "$TMP/v.err"

"$CPROF" -F 499 -o "$TMP/v.pb.gz" -- "$FIX/vdso_clock" 1 2>/dev/null
go tool pprof -symbolize=none -raw "$TMP/v.pb.gz" >"$TMP/v.raw" 2>&1
# The mapping is [vdso] with the image's build ID, and has functions.
check vdso_mapping grep -qE '^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 \[vdso\] [0-9a-f]{40} \[FN\]$' "$TMP/v.raw"
finish
