#!/usr/bin/env bash
# Issue 3, case 3: frames in the vDSO, named from cprof's own copy of the
# image (every 64-bit process of a kernel has the same one). What holds on
# every kernel:
#  - a frame in an exported function is named: the fixture spends half its
#    time in clock_gettime(CLOCK_MONOTONIC_COARSE), inside the entry point;
#  - a frame in a local function (6.18 on x86_64 reads the clock in one
#    below the first exported symbol) is named from the kernel's debug file
#    of the image when there is one, else shown at its function's start,
#    [vdso]+0xSTART, which must be the start of an FDE of the image as
#    binutils reads it, and the summary counts it.
# The image is taken from this shell's memory, the debug file made from it.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_vdso "$why"
	exit 0
fi
case $(uname -m) in
aarch64) vfn=__kernel_clock_gettime ;;
*) vfn=__vdso_clock_gettime ;;
esac

# --- the image, and its functions as binutils sees them -------------------------------
read -r range _ < <(grep '\[vdso\]$' "/proc/$$/maps")
vstart=$((16#${range%-*})) vend=$((16#${range#*-}))
dd if="/proc/$$/mem" of="$TMP/vdso.so" bs=4096 iflag=skip_bytes,count_bytes skip="$vstart" \
	count=$((vend - vstart)) 2>/dev/null
check vdso_image_read readelf -h "$TMP/vdso.so"
# FDE starts, as addresses and as offsets in the image (the first PT_LOAD maps them).
{
	readelf -lW "$TMP/vdso.so" | awk '$1 == "LOAD" { print "LOAD", $2, $3; exit }'
	readelf -W -wN --debug-dump=frames "$TMP/vdso.so" | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\..*/FDE \1/p'
} | awk "$HEX_AWK"'$1 == "LOAD" { off = hex($2); va = hex($3) }
	$1 == "FDE" { printf "%x %x\n", hex($2), hex($2) - va + off }' >"$TMP/fdes"
check vdso_image_has_fdes test -s "$TMP/fdes"

# grouped_offsets FOLDED: the offsets of its [vdso]+0xOFF frames, one a line.
grouped_offsets() {
	grep -o '\[vdso\]+0x[0-9a-f]*' "$1" | sed 's/.*+0x//' | sort -u
}
# at_fde_starts FOLDED: every [vdso]+0xOFF frame is at the start of an FDE.
at_fde_starts() {
	local off bad=0
	for off in $(grouped_offsets "$1"); do
		if ! awk -v o="$off" '$2 == o { found = 1 } END { exit !found }' "$TMP/fdes"; then
			echo "[vdso]+0x$off is not the start of an FDE" >&2
			bad=1
		fi
	done
	return "$bad"
}
# counted FOLDED SUMMARY: the summary counts frames shown at their function's
# start when the profile has vDSO ones, and never when no frame at all is
# shown as FILE+0xOFFSET (other files' unnamed code counts too).
counted() {
	if [ -n "$(grouped_offsets "$1")" ]; then
		grep -qE "^cprof: [1-9][0-9]* of [0-9]+ samples? \([0-9.]+%\) ha(s|ve) a user frame named by its function's start" "$2"
	elif ! grep -qE '\+0x[0-9a-f]+' "$1"; then
		! grep -q "named by its function's start" "$2"
	fi
}
# leaf_prefix_share FOLDED PREFIX: percent of samples whose leaf starts with PREFIX.
leaf_prefix_share() {
	awk -v p="$2" '{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";"); if (index(f[k], p) == 1) hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$1"
}

# --- without a debug file of the vDSO ------------------------------------------------
mkdir -p "$TMP/empty"
"$CPROF" -F 499 --debug-dir "$TMP/empty" --format folded -o "$TMP/v.folded" -- \
	"$FIX/vdso_clock" 1 2>"$TMP/v.err"
check vdso_exit_zero [ $? -eq 0 ]
# Half the run in the entry point itself; most of the other half on kernels
# that read the clock there too.
share=$(folded_share "$TMP/v.folded" ";$vfn")
check vdso_exported_named within "$share" 60 40
check vdso_in_summary grep -qE "^ +[0-9.]+% +[0-9.]+% +[0-9]+ +$vfn \(\[vdso\]\)\$" "$TMP/v.err"
check vdso_unexported_at_function_start at_fde_starts "$TMP/v.folded"
check vdso_function_starts_counted counted "$TMP/v.folded" "$TMP/v.err"
grouped=$(leaf_prefix_share "$TMP/v.folded" "[vdso]+0x")
echo "vdso_clock: leaf $vfn $share%, leaf at a local function's start $grouped%" >&2

"$CPROF" -F 499 -o "$TMP/v.pb.gz" -- "$FIX/vdso_clock" 1 2>/dev/null
go tool pprof -symbolize=none -raw "$TMP/v.pb.gz" >"$TMP/v.raw" 2>&1
# The mapping is [vdso] with the image's build ID, and has functions.
check vdso_mapping grep -qE '^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 \[vdso\] [0-9a-f]{40} \[FN\]$' "$TMP/v.raw"
check vdso_comment grep -qE '^Comment: cprof: symbols: .*; frames named by function start \(no symbol\) [0-9]+' "$TMP/v.raw"

# --- with one, found by build ID --------------------------------------------------------
# The image plus a local symbol at each FDE start that no exported symbol has.
text=$(readelf -SW "$TMP/vdso.so" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 2) }')
nm -D --defined-only "$TMP/vdso.so" | awk "$HEX_AWK"'{ printf "%x\n", hex($1) }' >"$TMP/exported"
args=()
while read -r va _; do
	grep -qx "$va" "$TMP/exported" && continue
	[ $((16#$va)) -ge $((16#$text)) ] || continue
	args+=(--add-symbol "cprof_vdso_local_$va=.text:0x$(printf %x $((16#$va - 16#$text))),function,local")
done <"$TMP/fdes"
if [ ${#args[@]} -eq 0 ]; then
	skip vdso_debug_file "every function of this vDSO is exported"
else
	bid=$(readelf -n "$TMP/vdso.so" | awk '/Build ID:/ { print $3 }')
	mkdir -p "$TMP/dd/.build-id/${bid:0:2}"
	objcopy "${args[@]}" "$TMP/vdso.so" "$TMP/dd/.build-id/${bid:0:2}/${bid:2}.debug"
	"$CPROF" -F 499 --debug-dir "$TMP/dd" --format folded -o "$TMP/d.folded" -- \
		"$FIX/vdso_clock" 1 2>"$TMP/d.err"
	check vdso_debug_file_leaves_none_unnamed bash -c "! grep -q '\[vdso\]+0x' '$TMP/d.folded'"
	check vdso_debug_file_not_counted_as_start counted "$TMP/d.folded" "$TMP/d.err"
	# Where the first run had the local function's start, this one has its name.
	if awk -v g="$grouped" 'BEGIN { exit !(g >= 10) }'; then
		check vdso_debug_file_names_local within "$(leaf_prefix_share "$TMP/d.folded" cprof_vdso_local_)" "$grouped" 25
	else
		skip vdso_debug_file_names_local "the local functions had $grouped% of the leaves"
	fi
fi
finish
