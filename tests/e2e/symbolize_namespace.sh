#!/usr/bin/env bash
# Issue 3, case 2: a process whose binary exists only in its own mount
# namespace (a tmpfs mounted there, over a directory that is empty on the
# host), in its own PID namespace too, as in a container. Its frames are
# named through /proc/PID; its pid label is the host PID and ns_pid its PID
# inside (1). Then the same without CAP_SYS_ADMIN, where /proc/PID/map_files
# is closed to cprof and the file is found through /proc/PID/root.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_namespace "$why"
	exit 0
fi
if ! unshare -m -p -f --mount-proc true 2>/dev/null; then
	skip symbolize_namespace "unshare -m -p cannot make namespaces here"
	exit 0
fi
ns=$TMP/ns-only
mkdir -p "$ns"
# run_in_ns: the fixture as PID 1 of a new PID namespace, from a tmpfs only it sees.
in_ns="mount -t tmpfs tmpfs '$ns' && cp '$FIX/known_tree' '$ns/nsbin' && exec '$ns/nsbin' 3"

"$CPROF" -F 499 -d 2 -o "$TMP/ns.pb.gz" -- unshare -m -p -f --mount-proc sh -c "$in_ns" 2>"$TMP/ns.err"
check ns_exit_zero [ $? -eq 0 ]
check ns_binary_not_on_host [ ! -e "$ns/nsbin" ]
go tool pprof -symbolize=none -raw "$TMP/ns.pb.gz" >"$TMP/ns.raw" 2>&1
go tool pprof -symbolize=none -traces -tagfocus=comm=nsbin "$TMP/ns.pb.gz" >"$TMP/ns.traces" 2>&1
# -traces prints each stack leaf first, one frame a line.
check ns_names_hot_a bash -c "grep -A3 -E '^ +[0-9.]+m?s +hot_a\$' '$TMP/ns.traces' | grep -q ' work\$'"
check ns_names_main bash -c "grep -A2 -E ' work\$' '$TMP/ns.traces' | grep -q ' main\$'"
check ns_mapping_path_as_the_process_sees_it grep -qE "^[0-9]+: 0x[0-9a-f/x]+ $ns/nsbin [0-9a-f]{40} \[FN\]" "$TMP/ns.raw"
# "pid ns_pid comm" of every sample (ns_pid 0: no label).
sample_labels() {
	awk 'function out() { if (p) print p, n + 0, c }
		/^ +[0-9]+ +[0-9]+: / { out(); p = ""; n = 0; c = "" }
		{ if (match($0, /(^|[^_])pid:\[[0-9]+\]/)) { v = substr($0, RSTART, RLENGTH); sub(/.*\[/, "", v); p = v + 0 }
		  if (match($0, /ns_pid:\[[0-9]+\]/)) { v = substr($0, RSTART, RLENGTH); sub(/.*\[/, "", v); n = v + 0 }
		  if (match($0, /comm:\[[^]]*\]/)) { c = substr($0, RSTART + 6, RLENGTH - 7) } }
		END { out() }' "$1"
}
sample_labels "$TMP/ns.raw" >"$TMP/ns.labels"
# Labels: the sample's pid is a host PID (it exists here), ns_pid is 1.
pid=$(awk '$3 == "nsbin" { print $1; exit }' "$TMP/ns.labels")
check ns_pid_label_is_1 bash -c "awk '\$3 == \"nsbin\"' '$TMP/ns.labels' | grep -q ' 1 nsbin\$'"
check ns_pid_label_host_pid [ -n "$pid" ] && [ "$pid" -gt 1 ]
# The host process (unshare itself) has no ns_pid; the inner process has 1
# under every name it had (unshare's code before its exec, sh, nsbin): a
# namespace is the process's, not one program's. (Its children, mount and
# cp, are namespaced too.)
check no_ns_pid_label_for_host_processes bash -c \
	"! awk -v inner='$pid' '\$3 == \"unshare\" && \$1 != inner && \$2 != 0' '$TMP/ns.labels' | grep -q ."
check ns_pid_label_for_every_name_of_the_inner_process bash -c \
	"! awk -v inner='$pid' '\$1 == inner && \$2 != 1' '$TMP/ns.labels' | grep -q ."

# The same without CAP_SYS_ADMIN (and CAP_CHECKPOINT_RESTORE): map_files is
# refused, /proc/PID/root/PATH is used, and it is the file the process maps.
if setpriv --bounding-set -sys_admin,-checkpoint_restore true 2>/dev/null; then
	unshare -m -p -f --mount-proc sh -c "$in_ns" &
	outer=$!
	# unshare's child becomes nsbin (PID 1 inside).
	inner=
	for _ in $(seq 50); do
		inner=$(cat "/proc/$outer/task/$outer/children" 2>/dev/null | awk '{ print $1 }')
		[ -n "$inner" ] && [ "$(cat "/proc/$inner/comm" 2>/dev/null)" = nsbin ] && break
		sleep 0.1
	done
	setpriv --bounding-set -sys_admin,-checkpoint_restore \
		"$CPROF" -p "$inner" -d 1 -F 499 --format folded -o "$TMP/root.folded" 2>"$TMP/root.err"
	check no_sys_admin_exit_zero [ $? -eq 0 ]
	check no_sys_admin_names_via_proc_root grep -qE '^nsbin;.*;main;work;hot_a [0-9]+$' "$TMP/root.folded"
	wait "$outer"
else
	skip no_sys_admin_names_via_proc_root "setpriv cannot drop capabilities here"
fi
finish
