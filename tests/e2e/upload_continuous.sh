#!/usr/bin/env bash
# cprof --server --interval: whole-system continuous mode against the test
# server (tests/server). The server is killed mid-run and restarted, then
# cprof gets SIGTERM right away: every interval must arrive exactly once, in
# order and back to back, with the spool flushed at exit. Series are per
# process, with pid, comm and the cgroup identity of a workload moved into a
# container-like cgroup. A run against a server that never answers leaves
# its intervals in the size-capped spool, and the next run sends them first.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"

CG=
BG=
cleanup() {
	server_stop
	[ -n "$BG" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	[ -n "$CG" ] && rmdir "$CG" "$(dirname "$CG")" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! why=$(can_bpf 2>&1); then
	skip upload_continuous "$why"
	exit 0
fi
if ! why=$(server_install 2>&1); then
	skip upload_continuous "$why"
	exit 0
fi


# The workload, in a cgroup named like a container runtime's, when cgroup v2 allows.
"$FIX/known_tree" 60 &
BG=$!
ID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ -f "$root/cgroup.controllers" ] || continue
	if mkdir -p "$root/cprof-e2e.slice/docker-$ID.scope" 2>/dev/null; then
		CG=$root/cprof-e2e.slice/docker-$ID.scope
		echo "$BG" >"$CG/cgroup.procs" 2>/dev/null || { rmdir "$CG" "$(dirname "$CG")"; CG=; }
	fi
	break
done

LOG=$TMP/server.log
server_start "$LOG" || { not_ok server_start "see $TMP/server.err"; exit 1; }
PORT=$SERVER_PORT
"$CPROF" -a --interval 1 --server "http://127.0.0.1:$PORT" --spool-dir "$TMP/spool" \
	--label run=e2e 2>"$TMP/cprof.err" &
CP=$!
sleep 5
server_stop
sleep 4
server_start "$LOG" --port "$PORT" || not_ok server_restart "see $TMP/server.err"
sleep 0.3
kill -TERM "$CP"
wait "$CP"
rc=$?
sent=$(summary_count sent "$TMP/cprof.err")
spooled=$(summary_count spooled "$TMP/cprof.err")
check continuous_exit_zero [ "$rc" -eq 0 ]
check outage_was_spooled [ "${spooled:-0}" -gt 0 ]
check spool_empty_at_exit grep -q ' 0 still in the spool' "$TMP/cprof.err"
check nothing_dropped grep -q ' 0 refused, 0 dropped' "$TMP/cprof.err"
if out=$(server_check "$LOG" intervals "${sent:-0}"); then ok every_interval_once_in_order; else
	not_ok every_interval_once_in_order "$out; cprof: $(grep 'upload' "$TMP/cprof.err" | tail -n 3)"
fi
check at_least_8_intervals [ "${sent:-0}" -ge 8 ]
check series_per_process server_check "$LOG" some-label comm '^known_tree$'
check series_pid_label server_check "$LOG" some-label pid "^$BG$"
check series_service_host server_check "$LOG" label service_name host
check series_user_label server_check "$LOG" label run e2e
if [ -n "$CG" ]; then
	check series_container_id server_check "$LOG" some-label container_id "^$ID$"
	check series_systemd_unit server_check "$LOG" some-label systemd_unit "^docker-$ID\\.scope$"
	check series_cgroup_path server_check "$LOG" some-label cgroup "/cprof-e2e\\.slice/docker-$ID\\.scope$"
else
	skip series_cgroup_labels "no writable cgroup v2 hierarchy to place the workload in"
fi

# Never reachable: intervals stay in the spool, under its cap; exit 3.
server_stop
"$CPROF" -a --interval 1 -d 4 --server "http://127.0.0.1:$PORT" --spool-dir "$TMP/spool2" \
	--spool-max-bytes 64K 2>"$TMP/down.err"
rc=$?
made=$(grep -oE '[0-9]+ intervals? to send' "$TMP/down.err" | cut -d' ' -f1)
left=$(summary_count 'still in the spool' "$TMP/down.err")
dropped=$(summary_count dropped "$TMP/down.err")
check unreachable_exit_3 [ "$rc" -eq 3 ]
check unreachable_all_accounted [ "$((${left:-0} + ${dropped:-0}))" -eq "${made:--1}" ]
check spool_under_cap [ "$(cat "$TMP"/spool2/*.batch 2>/dev/null | wc -c)" -le 65536 ]
check spool_holds_entries [ "$(find "$TMP/spool2" -name '*.batch' | wc -l)" -eq "${left:--1}" ]

# The next run sends what the last one left, oldest first, then its own.
LOG2=$TMP/server2.log
server_start "$LOG2" --port "$PORT" || not_ok server_start2 "see $TMP/server.err"
"$CPROF" -a --interval 1 -d 2 --server "http://127.0.0.1:$PORT" --spool-dir "$TMP/spool2" \
	2>"$TMP/next.err"
rc=$?
sent=$(summary_count sent "$TMP/next.err")
check next_run_exit_zero [ "$rc" -eq 0 ]
if [ "${left:-0}" -gt 0 ]; then
	check next_run_reports_earlier \
		grep -q "$left of those sent were left in the spool by an earlier run" "$TMP/next.err"
else
	skip next_run_reports_earlier "every interval was larger than the 64 KiB spool cap"
fi
if out=$(server_check "$LOG2" ordered "${sent:-0}"); then ok spooled_then_new_in_order; else
	not_ok spooled_then_new_in_order "$out"; fi
check next_run_sent_all [ "${sent:-0}" -ge "$((${left:-0} + 2))" ]
finish
