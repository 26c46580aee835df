#!/usr/bin/env bash
# Issue 3, case 6: JIT code in anonymous executable memory is named from the
# process's perf map, /tmp/perf-PID.map (the convention of Node's
# --perf-basic-prof, JVM agents and LuaJIT). The fixture copies a loop into
# two blobs and writes their map, with a malformed line. Then the same
# process as PID 1 of its own namespaces with a private /tmp: the map is
# /tmp/perf-1.map inside it, reached through /proc/PID/root.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_jit "$why"
	exit 0
fi
hot='LazyCompile:*hotLoop /app/jit.js:10'
cold='Stub:cold_path'

# check_jit NAME FOLDED: both blobs ($hot, $cold) named, under their caller, about 70/30.
check_jit() {
	local a b
	a=$(folded_share "$2" ";main;run_jit;$hot")
	b=$(folded_share "$2" ";main;run_jit;$cold")
	if within "$a" 70 10 && within "$b" 30 10; then ok "$1_jit_frames_named"; else
		not_ok "$1_jit_frames_named" "'$hot' $a%, '$cold' $b% (want 70/30): $(head -3 "$2")"; fi
	check "$1_no_anon_fallback" bash -c "! grep -q '\[anon\]+0x' '$2'"
}

# The profile (-d 2) ends while the fixture (3 s) still runs.
"$CPROF" -d 2 -F 499 --format folded -o "$TMP/jit.folded" -- "$FIX/jit_perfmap" 3 2>"$TMP/jit.err"
check jit_exit_zero [ $? -eq 0 ]
check_jit host "$TMP/jit.folded"

# The same blobs with the frame pointer used for data (issue 38, item 3): no
# walk can find run_jit above them, and the reason given is that one, not
# the unreadable memory the register happened to point at (as e9effb9 said
# for 98% of a Java profile's samples without -XX:+PreserveFramePointer).
"$CPROF" -d 2 -F 499 --format folded -o "$TMP/nofp.folded" -- "$FIX/jit_perfmap" 3 nofp \
	2>"$TMP/nofp.err"
check nofp_exit_zero [ $? -eq 0 ]
a=$(folded_share "$TMP/nofp.folded" "[truncated: no CFI, and no frame pointer];$hot")
if within "$a" 70 15; then ok nofp_stop_named; else
	not_ok nofp_stop_named "'[truncated: no CFI, and no frame pointer];$hot' $a% (want ~70): $(
		sort -t' ' -k2 -nr "$TMP/nofp.folded" | head -3)"
fi
check nofp_summary_reason grep -q "truncated: [0-9]* ([0-9.]*%) no CFI, and no frame pointer" \
	"$TMP/nofp.err"
check nofp_no_read_blamed bash -c "! grep -q 'stack memory unreadable' '$TMP/nofp.err'"

# Issue 38, item 5: names as runtimes write them, with spaces, parentheses
# and brackets, are the whole function name in pprof (which took them for
# C++ it had to simplify: "RegExp:([a-z]+)(\d+)" was "RegExp:") and in
# folded stacks.
hot='RegExp:([a-z]+)(\d+)'
cold='LazyCompile:*parse(a, [b]) /app/x.js:3'
"$CPROF" -d 2 -F 499 -o "$TMP/names.pb.gz" -- "$FIX/jit_perfmap" 3 "$hot" "$cold" \
	2>"$TMP/names.err"
check names_exit_zero [ $? -eq 0 ]
pprof_top "$TMP/names.pb.gz" >"$TMP/names.top"
a=$(pprof_flat "$TMP/names.pb.gz" "$hot")
b=$(pprof_flat "$TMP/names.pb.gz" "$cold")
if within "$a" 70 10 && within "$b" 30 10; then ok pprof_whole_perf_map_names; else
	not_ok pprof_whole_perf_map_names "'$hot' $a%, '$cold' $b% (want 70/30): $(head -3 "$TMP/names.top" | tr '\n' '|')"; fi
"$CPROF" -d 2 -F 499 --format folded -o "$TMP/names.folded" -- "$FIX/jit_perfmap" 3 "$hot" \
	"$cold" 2>>"$TMP/names.err"
check_jit names "$TMP/names.folded"
hot='LazyCompile:*hotLoop /app/jit.js:10'
cold='Stub:cold_path'

if ! unshare -m -p -f --mount-proc true 2>/dev/null; then
	skip namespaced_jit_frames_named "unshare -m -p cannot make namespaces here"
	finish
	exit
fi
# The namespace's /tmp is $TMP/nstmp (bind-mounted), which also holds the binary.
mkdir -p "$TMP/nstmp"
cp "$FIX/jit_perfmap" "$TMP/nstmp/jit_ns"
"$CPROF" -d 2 -F 499 --format folded -o "$TMP/ns.folded" -- unshare -m -p -f --mount-proc \
	sh -c "mount --bind '$TMP/nstmp' /tmp && exec /tmp/jit_ns 3" 2>"$TMP/ns.err"
check ns_jit_exit_zero [ $? -eq 0 ]
check_jit namespaced "$TMP/ns.folded"
# Where the map was: /tmp/perf-1.map in the namespace, nowhere on the host's /tmp.
check ns_map_was_perf_1 [ ! -e /tmp/perf-1.map ]
finish
