#!/usr/bin/env bash
# An unprivileged user against root's --spool-dir (issue 32, item 6). The
# attacker creates the spool directory first, in a sticky /tmp-like
# directory or its own, and plants in it: a .lock link to a path root may
# create, links at the temporary entry names to a root-only file, a forged
# entry for root to upload with its bearer token. cprof must refuse such a
# directory (and a link in its place, and one root made writable by all)
# before sampling, touching nothing. In root's own spool, an entry swapped
# for a FIFO during the run must not hold cprof past -d or SIGTERM.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"
source "$ROOT/tests/attacker.sh"

BUSY=
CP=
cleanup() {
	server_stop
	[ -n "$BUSY" ] && kill "$BUSY" 2>/dev/null && wait "$BUSY" 2>/dev/null
	[ -n "$CP" ] && kill -KILL "$CP" 2>/dev/null && wait "$CP" 2>/dev/null
	_attacker_remove
	rm -rf "$TMP"
}

if ! why=$(can_bpf 2>&1); then
	skip attack_spool "$why"
	exit 0
fi
if ! why=$(server_install 2>&1); then
	skip attack_spool "$why"
	exit 0
fi
attacker_create 2>"$TMP/attacker.err" || {
	skip attack_spool "$(cat "$TMP/attacker.err")"
	exit 0
}
trap cleanup EXIT

# Something to sample, so that every interval has samples to spool or send.
sh -c 'while :; do :; done' &
BUSY=$!
# A port nobody listens on: where a server was.
server_start "$TMP/dead.log" || { not_ok server_start "see $TMP/server.err"; exit 1; }
DEAD=$SERVER_PORT
server_stop
LOG=$TMP/server.log
server_start "$LOG" || { not_ok server_start "see $TMP/server.err"; exit 1; }
PORT=$SERVER_PORT
STICKY=$TMP/tmp
mkdir -m 1777 "$STICKY"
SECRET_TOKEN=root-token-$$
export CPROF_TOKEN=$SECRET_TOKEN

# cprof_to PORT SPOOL ERRFILE [options...]: a 2-second continuous run, killed
# at 20 s if it hangs; its exit status.
cprof_to() {
	local port=$1 spool=$2 err=$3
	shift 3
	timeout -s KILL 20 "$CPROF" -p "$BUSY" --interval 1 -d 2 --server "http://127.0.0.1:$port" \
		--spool-dir "$spool" "$@" 2>"$err"
}

# refused NAME SPOOL ERRFILE RC: cprof said no to this directory, at once.
refused() {
	if [ "$4" -ne 0 ] && [ "$4" -ne 3 ] && grep -q "spool directory $2" "$3" &&
		! grep -q 'samples in' "$3"; then
		ok "$1"
	else
		not_ok "$1" "exit $4: $(head -c 200 "$3" | tr '\n' ' ')"
	fi
}

# An entry of a genuine spool, left by a run against no server, to forge with.
cprof_to "$DEAD" "$TMP/forge" "$TMP/forge.err" --label forged=yes
FORGED=$(find "$TMP/forge" -name '*.batch' | sort | head -n 1)
if [ -z "$FORGED" ]; then
	not_ok forge_entry "no entry left by a run against no server: $(tail -n 2 "$TMP/forge.err")"
	exit 1
fi
cp "$FORGED" "$ATTACKER_DIR/forged.batch"
chmod 0644 "$ATTACKER_DIR/forged.batch"

# (a) A .lock link to a path in a root-only directory that does not exist yet.
A=$STICKY/spool
as_attacker mkdir -m 0755 "$A"
as_attacker ln -s "$TMP/victim_created" "$A/.lock"
with_sysctl fs.protected_symlinks 1 cprof_to "$PORT" "$A" "$TMP/a.err"
rc=$?
if [ -e "$TMP/victim_created" ]; then
	not_ok lock_link_creates_nothing "root created $TMP/victim_created through $A/.lock"
else
	ok lock_link_creates_nothing
fi
refused attacker_dir_refused "$A" "$TMP/a.err" "$rc"

# (b) Links at the temporary names of the next entries to a root-only file,
# planted again and again (a spool's start removes old temporary files).
VICTIM=$TMP/victim_file
echo "root's own data" >"$VICTIM"
chmod 0600 "$VICTIM"
cp -p "$VICTIM" "$TMP/victim_copy"
B=$ATTACKER_DIR/spool
as_attacker mkdir -m 0755 "$B"
# shellcheck disable=SC2016 # expanded by the attacker's shell
as_attacker sh -c 'cd "$1" && end=$(($(date +%s) + 8)); while [ "$(date +%s)" -lt "$end" ]; do
	for i in 1 2 3 4 5 6 7 8; do ln -sfn "$2" "$(printf %020d.batch.tmp "$i")" 2>/dev/null; done
	sleep 0.02; done' sh "$B" "$VICTIM" &
PLANTER=$!
sleep 0.5
cprof_to "$DEAD" "$B" "$TMP/b.err"
rc=$?
wait "$PLANTER"
if cmp -s "$VICTIM" "$TMP/victim_copy" && [ "$(stat -c %a "$VICTIM")" = 600 ]; then
	ok tmp_links_leave_victim
else
	not_ok tmp_links_leave_victim "$VICTIM became $(stat -c '%s bytes, mode %a' "$VICTIM")"
fi
refused attacker_dir_refused_while_planting "$B" "$TMP/b.err" "$rc"

# (c) A forged entry in the attacker's spool: never sent with root's token.
C=$ATTACKER_DIR/spool_c
as_attacker mkdir -m 0755 "$C"
as_attacker cp "$ATTACKER_DIR/forged.batch" "$C/$(basename "$FORGED")"
cprof_to "$PORT" "$C" "$TMP/c.err"
rc=$?
if server_check "$LOG" some-label forged '^yes$' >/dev/null; then
	not_ok forged_entry_not_sent "the server received the forged entry$(
		server_check "$LOG" field authorization "Bearer $SECRET_TOKEN" >/dev/null &&
			echo " with root's bearer token")"
else
	ok forged_entry_not_sent
fi
refused forged_dir_refused "$C" "$TMP/c.err" "$rc"

# A link in the directory's place, to a directory of root's: not followed.
mkdir -m 0755 "$TMP/rootdir"
as_attacker ln -s "$TMP/rootdir" "$STICKY/spool_link"
cprof_to "$DEAD" "$STICKY/spool_link" "$TMP/l.err"
rc=$?
if [ -z "$(ls -A "$TMP/rootdir")" ]; then ok dir_link_not_followed; else
	not_ok dir_link_not_followed "root wrote $(ls -A "$TMP/rootdir" | tr '\n' ' ')into $TMP/rootdir"
fi
refused dir_link_refused "$STICKY/spool_link" "$TMP/l.err" "$rc"

# A directory of root's that everyone may write into is no better.
mkdir -m 1777 "$TMP/shared"
cprof_to "$DEAD" "$TMP/shared" "$TMP/w.err"
refused writable_dir_refused "$TMP/shared" "$TMP/w.err" "$?"

# (d) Root's own spool, whose oldest entry is swapped for a FIFO while cprof
# runs against no server: it must still end about when -d says, and at
# SIGTERM. fifo_run OPTS...: starts cprof, swaps the entry at 1 s.
D=$TMP/spool_d
fifo_run() {
	rm -rf "$D"
	mkdir -m 0700 "$D"
	cp "$FORGED" "$D/00000000000000000001.batch"
	"$CPROF" -p "$BUSY" --interval 1 --server "http://127.0.0.1:$DEAD" --spool-dir "$D" "$@" \
		2>"$TMP/d.err" &
	CP=$!
	START=$(date +%s.%N)
	sleep 1
	rm "$D/00000000000000000001.batch"
	mkfifo -m 0600 "$D/00000000000000000001.batch"
}
# ended_by SECONDS: whether cprof ended within SECONDS of its start; reaps it.
ended_by() {
	local now
	while kill -0 "$CP" 2>/dev/null; do
		now=$(date +%s.%N)
		awk -v a="$START" -v b="$now" -v s="$1" 'BEGIN { exit !(b - a > s) }' && return 1
		sleep 0.1
	done
	wait "$CP"
	RC=$?
	CP=
	ELAPSED=$(awk -v a="$START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
fifo_run -d 3
if ended_by 6; then ok fifo_entry_ends_by_d; else
	not_ok fifo_entry_ends_by_d "still running 3 s past -d 3: $(tail -n 1 "$TMP/d.err")"
	kill -KILL "$CP"
	wait "$CP" 2>/dev/null
	CP=
fi
if grep -q '1 entry in the spool .* was not a regular file' "$TMP/d.err"; then
	ok fifo_entry_counted
else
	not_ok fifo_entry_counted "not counted as not a regular file; cprof said:" \
		"$(grep -iE 'spool|upload|attempt' "$TMP/d.err" | tr '\n' '|' | cut -c1-600)"
fi
check fifo_entry_left_alone test -p "$D/00000000000000000001.batch"

fifo_run
sleep 1
kill -TERM "$CP" 2>/dev/null
SIGNALED=$(date +%s.%N)
if START=$SIGNALED ended_by 3; then ok fifo_entry_honours_sigterm; else
	not_ok fifo_entry_honours_sigterm "still running 3 s after SIGTERM: $(tail -n 1 "$TMP/d.err")"
	kill -KILL "$CP"
	wait "$CP" 2>/dev/null
	CP=
fi
finish
