#!/usr/bin/env bash
# Issue 3, case 8: kernel frames. When kallsyms hides its addresses from
# cprof (kernel.kptr_restrict, or kallsyms_show_value() refusing a reader
# without CAP_SYSLOG), cprof says so once and keeps every kernel frame as
# [kernel]; user frames are still named. The host's sysctls are not touched:
# cprof runs without CAP_SYSLOG instead. Module symbols ([module] in
# kallsyms) are checked when the kernel has loadable modules whose code runs
# during the profile. Where the kernel's own lookup names frames (Linux
# 5.14+), its names are kallsyms' own.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_kernel "$why"
	exit 0
fi

# --- hidden addresses -------------------------------------------------------------------
nosyslog=(setpriv --bounding-set -syslog)
if ! "${nosyslog[@]}" true 2>/dev/null; then
	skip kallsyms_hidden "setpriv cannot drop CAP_SYSLOG here"
elif [ "$("${nosyslog[@]}" awk '$1 !~ /^0+$/ { n++ } END { print n + 0 }' /proc/kallsyms)" -ne 0 ]; then
	skip kallsyms_hidden "this kernel shows kallsyms addresses without CAP_SYSLOG (kptr_restrict=0, perf_event_paranoid<=1)"
else
	"${nosyslog[@]}" "$CPROF" -F 499 --format folded -o "$TMP/h.folded" -- "$FIX/syscall_heavy" 1 \
		>/dev/null 2>"$TMP/h.err"
	check hidden_exit_zero [ $? -eq 0 ]
	check hidden_said_once [ "$(grep -c 'kernel addresses are hidden from cprof' "$TMP/h.err")" -eq 1 ]
	names=$(grep -oE '[^;]+_\[k\]' "$TMP/h.folded" | sort -u | tr '\n' ' ')
	check hidden_kernel_frames_kept_as_kernel [ "$names" = "[kernel]_[k] " ]
	check hidden_user_frames_named grep -qE '^syscall_heavy;.*main;(do_reads;)?read;(\[kernel\]_\[k\];)*\[kernel\]_\[k\] [0-9]+$' "$TMP/h.folded"
	check hidden_counted_unknown grep -qE 'distinct frames without one, shown as module\+offset: user [0-9]+ of [0-9]+, kernel ([1-9][0-9]*) of \1$' "$TMP/h.err"
fi

# --- names from the kernel's own lookup -------------------------------------------------
# Where it loads (Linux 5.14+), kernel frames are named by bpf_snprintf's %ps,
# not by reading all of kallsyms: every frame named, each name one kallsyms has.
awk '$2 ~ /^[tT]$/ { print $3 }' /proc/kallsyms | sort -u >"$TMP/textsyms"
"$CPROF" -v -F 999 --format folded -o "$TMP/l.folded" -- "$FIX/syscall_heavy" 1 >/dev/null 2>"$TMP/l.err"
check lookup_exit_zero [ $? -eq 0 ]
if why=$(grep -o "the kernel's own lookup cannot be used here.*" "$TMP/l.err"); then
	skip kernel_lookup_names "$why"
else
	grep -oE '[^;]+_\[k\]' "$TMP/l.folded" | sed 's/_\[k\]$//' | sort -u >"$TMP/lnames"
	check kernel_lookup_names_frames [ -s "$TMP/lnames" ]
	check kernel_lookup_no_kallsyms_read bash -c "! grep -q 'named from /proc/kallsyms' '$TMP/l.err'"
	bad=$(comm -23 "$TMP/lnames" "$TMP/textsyms" | head -5 | tr '\n' ' ')
	if [ -n "$bad" ]; then not_ok kernel_lookup_names_in_kallsyms "not kallsyms text symbols: $bad"
	else ok kernel_lookup_names_in_kallsyms; fi
fi

# --- module symbols ----------------------------------------------------------------------
if [ ! -s /proc/modules ]; then
	skip module_symbols "this kernel has no loadable modules (no /proc/modules entries)"
	finish
	exit
fi
awk '$2 ~ /^[tTwW]$/ && $4 ~ /^\[/ { print $3 }' /proc/kallsyms | sort -u >"$TMP/modsyms"
awk '$2 ~ /^[tTwW]$/ { print $3 }' /proc/kallsyms | sort -u >"$TMP/allsyms"
# Whatever the host does for 3 s, with some disk and network work of our own.
(dd if=/dev/zero of="$TMP/io" bs=1M count=64 conv=fsync status=none; ping -c 3 -i 0.2 127.0.0.1 >/dev/null 2>&1) &
"$CPROF" -a -d 3 -F 999 --format folded -o "$TMP/m.folded" 2>/dev/null
wait
grep -oE '[^;]+_\[k\]' "$TMP/m.folded" | sed 's/_\[k\]$//' | sort -u >"$TMP/knames"
seen=$(comm -12 "$TMP/knames" "$TMP/modsyms" | head -5 | tr '\n' ' ')
bad=$(comm -23 "$TMP/knames" "$TMP/allsyms" | grep -v '^\[kernel\]$' | head -5 | tr '\n' ' ')
if [ -n "$bad" ]; then
	not_ok module_symbols "kernel frames not in kallsyms: $bad"
elif [ -z "$seen" ]; then
	skip module_symbols "no module code ran during the profile"
else
	ok module_symbols
fi
finish
