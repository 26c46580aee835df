#!/usr/bin/env bash
# Issue 3, case 1: stripped binaries are named through their separate debug
# files, found by GNU build ID (DEBUG_DIR/.build-id/xx/rest.debug) or by
# .gnu_debuglink (next to the binary, in .debug/, in DEBUG_DIR/<its dir>/)
# with the link's CRC checked; glibc internals through Debian's libc6-dbg.
# And the fallback that never lies: what nothing names stays module+0xADDRESS,
# at the right offset, and the summary counts it.
# tag: quick
source "$(dirname "$0")/../lib.sh"

"$CPROF" --debug-dir "$TMP/does-not-exist" -d 1 -o "$TMP/x.pb.gz" 2>"$TMP/usage.err"
check debug_dir_missing_is_usage_error [ $? -eq 2 ]
check debug_dir_missing_message grep -q "debug directory '$TMP/does-not-exist': No such file or directory" "$TMP/usage.err"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_debug "$why"
	exit 0
fi
empty=$TMP/no-debug-files
mkdir -p "$empty"

# prof NAME DEBUG_DIR COMMAND...: folded profile $TMP/NAME.folded, summary $TMP/NAME.err.
prof() {
	local name=$1 dd=$2
	shift 2
	"$CPROF" -F 499 --debug-dir "$dd" --format folded -o "$TMP/$name.folded" -- "$@" \
		>/dev/null 2>"$TMP/$name.err"
}
# named TEST NAME: profile NAME's stacks carry the real names, main to leaf.
named() {
	check "$1_names_hot_a" grep -qE ';main;work;hot_a [0-9]+$' "$TMP/$2.folded"
	check "$1_names_hot_b" grep -qE ';main;work;hot_b [0-9]+$' "$TMP/$2.folded"
}

# --- .gnu_debuglink: next to the binary, in .debug/, under DEBUG_DIR/<dir>/ -----------
mkdir -p "$TMP/same" "$TMP/dot/.debug" "$TMP/global" "$TMP/dd$TMP/global"
for d in same dot global; do cp "$FIX/known_tree_stripped" "$TMP/$d/app"; done
cp "$FIX/known_tree_stripped.debug" "$TMP/same/"
cp "$FIX/known_tree_stripped.debug" "$TMP/dot/.debug/"
cp "$FIX/known_tree_stripped.debug" "$TMP/dd$TMP/global/"
prof same "$empty" "$TMP/same/app" 1
named debuglink_same_dir same
prof dot "$empty" "$TMP/dot/app" 1
named debuglink_dot_debug dot
prof global "$TMP/dd" "$TMP/global/app" 1
named debuglink_debug_dir global

# --- GNU build ID under DEBUG_DIR/.build-id/ ------------------------------------------
bid=$(eu-readelf -n "$FIX/known_tree_buildid" | awk '/Build ID:/ { print $3 }')
mkdir -p "$TMP/bid" "$TMP/bdd/.build-id/${bid:0:2}"
cp "$FIX/known_tree_buildid" "$TMP/bid/app"
cp "$FIX/known_tree_stripped.debug" "$TMP/bdd/.build-id/${bid:0:2}/${bid:2}.debug"
prof bid "$TMP/bdd" "$TMP/bid/app" 1
named build_id bid

# --- impostors: same name and build ID but another CRC; another build's file ----------
mkdir -p "$TMP/crc"
cp "$FIX/known_tree_stripped" "$TMP/crc/app"
cp "$FIX/known_tree_stripped.debug" "$TMP/crc/"
printf x >>"$TMP/crc/known_tree_stripped.debug"
prof crc "$empty" "$TMP/crc/app" 1
check crc_mismatch_not_used bash -c "! grep -qE 'hot_a|hot_b|;work;' '$TMP/crc.folded'"
mkdir -p "$TMP/wrong/.build-id/${bid:0:2}" "$TMP/wbin"
cp "$FIX/known_tree_buildid" "$TMP/wbin/app"
objcopy --only-keep-debug "$FIX/known_tree_nopie" "$TMP/wrong/.build-id/${bid:0:2}/${bid:2}.debug"
prof wrong "$TMP/wrong" "$TMP/wbin/app" 1
check other_build_at_build_id_path_not_used bash -c "! grep -qE 'hot_a|hot_b|;work;' '$TMP/wrong.folded'"

# --- the fallback: module+0xADDRESS at the sampled code's real address --------------
# Without a usable debug file (the CRC run), 70% of the samples are in hot_a
# and 30% in hot_b: their leaves must be app+0xADDR inside those functions'
# addresses in the file, never a neighbour's name.
check_fallback_split fallback_offsets_are_the_sampled_code "$TMP/crc.folded" app
# A non-PIE program's addresses are not its file offsets (0x401000 against
# 0x1000): the fallback gives the address, which addr2line and objdump take
# (e9effb9 gave the offset).
mkdir -p "$TMP/nopie"
cp "$FIX/known_tree_nopie" "$TMP/nopie/app_nopie"
strip "$TMP/nopie/app_nopie"
prof nopie "$empty" "$TMP/nopie/app_nopie" 1
check_fallback_split fallback_addresses_of_non_pie "$TMP/nopie.folded" app_nopie \
	"$FIX/known_tree_nopie"
check fallback_counted_in_summary grep -qE "[1-9][0-9]* of [0-9]+ samples? \([0-9.]+%\) ha(s|ve) a user frame (with no name at all; distinct frames without one, shown as module\+offset: user [1-9][0-9]* of [0-9]+|named by its function's start)" "$TMP/crc.err"
# Issue 38, item 8: code of stripped files named by its function's start
# (.eh_frame) is said apart from code with no name at all: no alarm that
# every sample has a frame no symbol names. (The stripped libc here, or the
# copy whose debug file fails its CRC.)
check stripped_function_starts_said_apart grep -qE "^cprof: [1-9][0-9]* of [0-9]+ samples? \([0-9.]+%\) ha(s|ve) a user frame named by its function's start, not by a symbol" "$TMP/crc.err"
share=$(sed -nE 's/^cprof: [0-9]+ of [0-9]+ samples? \(([0-9.]+)%\) ha(s|ve) a user frame (with no name at all|no symbol names).*/\1/p' "$TMP/crc.err")
check stripped_no_false_alarm within "${share:-0}" 0 10
"$CPROF" -F 499 --debug-dir "$empty" -o "$TMP/crc.pb.gz" -- "$TMP/crc/app" 1 2>/dev/null
go tool pprof -symbolize=none -raw "$TMP/crc.pb.gz" >"$TMP/crc.raw" 2>&1
check fallback_keeps_its_mapping grep -qE "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $TMP/crc/app $bid *\$" "$TMP/crc.raw"
check fallback_frames_in_profile grep -qE 'M=[0-9]+ app\+0x[0-9a-f]+ ' "$TMP/crc.raw"

# --- Debian's libc6-dbg ---------------------------------------------------------------
# msort_with_tmp is static in glibc 2.36's msort.c: only the debug file names
# it (GCC's clone suffix included). read is exported: named either way.
libc=$(ldd "$FIX/libc_qsort" | awk '/libc\.so/ { print $3 }')
libc_bid=$(eu-readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
if [ -n "$libc_bid" ] && [ -f "/usr/lib/debug/.build-id/${libc_bid:0:2}/${libc_bid:2}.debug" ]; then
	prof qsort_dbg /usr/lib/debug "$FIX/libc_qsort" 1
	check libc6_dbg_names_msort_with_tmp grep -qE ';msort_with_tmp(\.part\.[0-9]+)?;compare_ints [0-9]+$' "$TMP/qsort_dbg.folded"
	prof reads_dbg /usr/lib/debug "$FIX/syscall_heavy" 1
	check libc6_dbg_names_libc_start_call_main grep -qE '^syscall_heavy;(_start;__libc_start_main;)?__libc_start_call_main;main;' "$TMP/reads_dbg.folded"
else
	skip libc6_dbg_names_msort_with_tmp "no debug file for $libc (install libc6-dbg)"
fi
prof qsort_nodbg "$empty" "$FIX/libc_qsort" 1
check no_libc6_dbg_internal_is_module_offset grep -qE ';libc\.so\.6\+0x[0-9a-f]+;compare_ints [0-9]+$' "$TMP/qsort_nodbg.folded"
check no_libc6_dbg_no_internal_name bash -c "! grep -q msort_with_tmp '$TMP/qsort_nodbg.folded'"
prof reads_nodbg "$empty" "$FIX/syscall_heavy" 1
check no_libc6_dbg_exported_still_named grep -qE '^syscall_heavy;(_start;__libc_start_main;)?libc\.so\.6\+0x[0-9a-f]+;main;(do_reads;)?read[; ]' "$TMP/reads_nodbg.folded"
finish
