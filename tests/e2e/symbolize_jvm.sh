#!/usr/bin/env bash
# Issue 38, item 4: the JIT code of a JVM (JDK 17+, fixtures/java/HotLoop.java,
# one hot method) named from perf maps that come late.
#   a. -XX:+DumpPerfMapAtExit writes /tmp/perf-PID.map when the JVM exits:
#      read at the end of the run (main left 0% of the samples named);
#   b. a JVM started with no perf map flag at all, asked with --jvm-perf-map
#      for its map as `jcmd PID Compiler.perfmap` does (main: no such option,
#      and 0% named without it): the JVM lives on, no trigger file is left;
#   c. perf's named share of the same runs, side by side (figures): perf
#      reads the map when it reports, so for a running JVM `jcmd PID
#      Compiler.perfmap` is run before it exits.
# The named share: samples with HotLoop.spin anywhere in their stack. The
# JVMs leave no /tmp/hsperfdata_USER (-XX:-UsePerfData).
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_jvm "$why"
	exit 0
fi
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
	skip symbolize_jvm "no JDK (javac, java; Debian: openjdk-17-jdk-headless)"
	exit 0
fi
mkdir -p "$TMP/java"
if ! javac -J-XX:-UsePerfData -d "$TMP/java" "$ROOT/fixtures/java/HotLoop.java" 2>"$TMP/javac.err"; then
	skip symbolize_jvm "javac failed: $(head -c 200 "$TMP/javac.err")"
	exit 0
fi
chmod -R a+rX "$TMP/java"
# The maps the JVMs leave in /tmp go with the test.
trap 'rm -f $(cat "$TMP/maps" 2>/dev/null); rm -rf "$TMP"' EXIT

# named FOLDED: percent of samples with HotLoop.spin in their stack.
named() {
	[ -f "$1" ] || { echo 0; return; }
	awk '{ n = $NF; t += n; if (index($0, "HotLoop.spin")) h += n }
		END { printf "%.1f\n", t ? 100 * h / t : 0 }' "$1"
}
# perf_named PERFDATA: the same share in perf's reading of its own record.
perf_named() {
	perf script -i "$1" -F ip,sym 2>/dev/null |
		awk 'BEGIN { RS = "" } { t++; if (index($0, "HotLoop")) h++ }
			END { printf "%.1f\n", t ? 100 * h / t : 0 }'
}
# jvm ARGS...: `java ARGS... -cp $TMP/java HotLoop`, its PID in $TMP/jvm.pid.
jvm_cmd() {
	echo "sh -c 'echo \$\$ >$TMP/jvm.pid; exec java -XX:-UsePerfData $* -cp $TMP/java HotLoop 3'"
}
remember_map() { echo "/tmp/perf-$(cat "$TMP/jvm.pid").map" >>"$TMP/maps"; }

# --- a. the map written at exit --------------------------------------------------------
exit_flags="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
"$CPROF" -d 30 -F 499 --format folded -o "$TMP/exit.folded" -- \
	sh -c "$(jvm_cmd "$exit_flags")" >/dev/null 2>"$TMP/exit.err"
check exit_map_exit_zero [ $? -eq 0 ]
remember_map
a=$(named "$TMP/exit.folded")
echo "figure DumpPerfMapAtExit: named share $a% (main: 0%)"
if within "$a" 100 40; then ok exit_map_names_jit; else
	not_ok exit_map_names_jit "HotLoop.spin in $a% of samples (want >= 60%): $(
		sort -t' ' -k2 -nr "$TMP/exit.folded" | head -2)"
fi
check exit_map_counted grep -q "perf maps of processes that exited, read at the end 1," \
	"$TMP/exit.err"
# Issue 38 item 3: without -XX:+PreserveFramePointer the JIT code keeps data
# in rbp; the walk stops there for that reason, not for unreadable memory
# (main at 4cb7e95: 98.0% "stack memory unreadable").
nofp=$(grep -oE 'truncated: [0-9]+ \([0-9.]+%\) no CFI, and no frame pointer' "$TMP/exit.err" |
	grep -oE '[0-9.]+%' | tr -d %)
echo "figure JIT without frame pointers: ${nofp:-0}% of samples stop as no_fp"
if within "${nofp:-0}" 100 40; then ok jit_without_fp_reason; else
	not_ok jit_without_fp_reason "$(grep -m1 'truncated' "$TMP/exit.err")"; fi

# --- b. a JVM asked for its map --------------------------------------------------------
# ask NAME [OPTION]: profiles a running JVM (no perf map flag) for 3 s.
ask() {
	sh -c "echo \$\$ >$TMP/jvm.pid; exec java -XX:-UsePerfData -cp $TMP/java HotLoop 10" >/dev/null 2>&1 &
	local jp=$!
	sleep 1.5
	remember_map
	/usr/bin/time -f '%e' -o "$TMP/$1.time" "$CPROF" -d 3 -F 499 --format folded \
		-o "$TMP/$1.folded" -p "$jp" ${2:+"$2"} >/dev/null 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
	if kill -0 "$jp" 2>/dev/null; then echo alive >"$TMP/$1.alive"; fi
	ls -a /tmp "/proc/$jp/cwd/" 2>/dev/null | grep -c "^\.attach_pid$jp$" >"$TMP/$1.trigger"
	kill "$jp" 2>/dev/null
	wait "$jp" 2>/dev/null
}
ask unasked
ask asked --jvm-perf-map
check jcmd_exit_zero [ "$(cat "$TMP/asked.rc")" = 0 ]
a=$(named "$TMP/unasked.folded")
b=$(named "$TMP/asked.folded")
echo "figure running JVM, no perf map flag: named share $a% without --jvm-perf-map, $b% with it"
if within "$b" 100 40; then ok jcmd_names_jit; else
	not_ok jcmd_names_jit "HotLoop.spin in $b% of samples (want >= 60%): $(
		sort -t' ' -k2 -nr "$TMP/asked.folded" | head -2)"
fi
check jcmd_jvm_lives [ -s "$TMP/asked.alive" ]
check jcmd_no_trigger_left [ "$(cat "$TMP/asked.trigger")" = 0 ]
check jcmd_counted grep -q "JVMs asked for their perf map 1, no answer or refused 0," \
	"$TMP/asked.err"
# -d 3, and the JVM's answer within the end's second; 3 s of slack on a loaded machine.
wall=$(tail -1 "$TMP/asked.time")
if awk -v w="$wall" 'BEGIN { exit !(w <= 7) }'; then ok jcmd_ends_near_d; else
	not_ok jcmd_ends_near_d "wall $wall s with -d 3"; fi

# --- c. perf, side by side -------------------------------------------------------------
if ! command -v perf >/dev/null ||
	! perf record -q -o "$TMP/probe.perf" -- true >"$TMP/probe.err" 2>&1; then
	skip perf_side_by_side "perf record fails here, or is missing"
	finish
	exit
fi
perf record -q -F 499 -g -o "$TMP/exit.perf" -- sh -c "$(jvm_cmd "$exit_flags")" \
	>/dev/null 2>&1
remember_map
echo "figure DumpPerfMapAtExit: perf's named share $(perf_named "$TMP/exit.perf")%"
# perf on a running JVM, and `jcmd PID Compiler.perfmap` before it exits.
if command -v jcmd >/dev/null; then
	sh -c "echo \$\$ >$TMP/jvm.pid; exec java -XX:-UsePerfData -cp $TMP/java HotLoop 10" >/dev/null 2>&1 &
	jp=$!
	sleep 1.5
	remember_map
	perf record -q -F 499 -g -o "$TMP/jcmd.perf" -p "$jp" -- sleep 3 >/dev/null 2>&1
	jcmd -J-XX:-UsePerfData "$jp" Compiler.perfmap >/dev/null 2>&1
	kill "$jp" 2>/dev/null
	wait "$jp" 2>/dev/null
	echo "figure running JVM, jcmd Compiler.perfmap: perf's named share $(perf_named "$TMP/jcmd.perf")%"
fi
finish
