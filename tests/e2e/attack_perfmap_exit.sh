#!/usr/bin/env bash
# Issue 38, item 4: perf maps read after their process exited, and JVMs
# asked for theirs (--jvm-perf-map), against an unprivileged user. The
# attacker runs a tiny JIT (jit_perfmap nomap: anonymous code, no map of its
# own) under a shell that cprof follows (-p), and:
#   a. once the JIT has exited, plants /tmp/perf-JITPID.map as a link to a
#      root-only file whose lines name the JIT's code: not read, counted, no
#      byte of it in the profile or the summary;
#   b. the same with a map of its own: read at the end, its names in the
#      profile (the exit read works for a user's process);
# and, with libjvm.so mapped so that it looks like a JVM:
#   c. a socket at /tmp/.java_pidPID that takes the connection and stalls;
#   d. one that floods its reply;
#   e. no socket, and no SIGQUIT handler: never signalled (it would die);
#   f. /tmp/.java_pidPID a link to a socket of root's: never connected to.
# Each run ends within -d and the end's bound, the failure counted.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_perfmap_exit "$why"
	exit 0
fi
if [ ! -x /usr/bin/python3 ]; then
	skip attack_perfmap_exit "no python3 for the fake JVM socket"
	exit 0
fi
if ! attacker_create 2>"$TMP/attacker.err"; then
	skip attack_perfmap_exit "$(cat "$TMP/attacker.err")"
	exit 0
fi
# Maps and sockets planted in the real /tmp go with the attacker.
# shellcheck disable=SC2046
trap 'rm -f $(cat "$TMP/planted" 2>/dev/null); [ -z "${root_pid:-}" ] || kill "$root_pid";
	_attacker_remove; rm -rf "$TMP" "$SECRET_DIR"' EXIT
cp "$FIX/jit_perfmap" "$ATTACKER_DIR/"
cp "$(ldd "$FIX/jit_perfmap" | awk '/libc.so/ { print $3 }')" "$ATTACKER_DIR/libjvm.so"
chmod 755 "$ATTACKER_DIR"/*
SECRET_DIR=$(mktemp -d /var/tmp/cprof-e2e.XXXXXX)
chmod 0700 "$SECRET_DIR"
MAX_WALL=7 # -d 3, the end's second, and 3 s of slack on a loaded machine

# prof NAME ARGS...: cprof ARGS, folded to $TMP/NAME.folded, summary $TMP/NAME.err,
# wall in $TMP/NAME.time, exit code in $TMP/NAME.rc.
prof() {
	local name=$1
	shift
	/usr/bin/time -f '%e' -o "$TMP/$name.time" timeout -s KILL 60 \
		"$CPROF" -F 499 --format folded -o "$TMP/$name.folded" "$@" >/dev/null 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
ends_near_d() {
	local wall
	wall=$(tail -1 "$TMP/$1.time")
	echo "# $1: wall $wall s"
	if awk -v w="$wall" -v m="$MAX_WALL" 'BEGIN { exit !(w <= m) }'; then ok "$1_ends_near_d"
	else not_ok "$1_ends_near_d" "wall $wall s with -d 3"; fi
}
no_secret() {
	if grep -q SECRET "$TMP/$1.folded" "$TMP/$1.err"; then
		not_ok "$1_no_secret" "$(grep -h SECRET "$TMP/$1.folded" "$TMP/$1.err" | head -3)"
	else ok "$1_no_secret"; fi
}

# --- a, b. a map planted after the JIT exited ------------------------------------------
# exit_case NAME PLANT: the attacker's shell waits for $ATTACKER_DIR/go, runs the
# JIT for 2 s, then runs PLANT (with $j the JIT's PID, $c its code's address).
exit_case() {
	local name=$1 plant=$2 pid
	rm -f "$ATTACKER_DIR/pid" "$ATTACKER_DIR/go" "$ATTACKER_DIR/jpid" "$ATTACKER_DIR/code"
	(as_attacker sh -c 'echo $$ >pid; while [ ! -e go ]; do sleep 0.1; done
		./jit_perfmap 2 nomap & j=$!; echo $j >jpid; sleep 1
		c=$(awk '"'"'$2 == "r-xp" && $5 == 0 { split($1, a, "-"); print a[1]; exit }'"'"' /proc/$j/maps)
		echo $c >code; wait $j; '"$plant"'; sleep 0.5' 2>/dev/null &)
	for _ in $(seq 50); do
		pid=$(cat "$ATTACKER_DIR/pid" 2>/dev/null) && [ -n "$pid" ] && break
		sleep 0.1
	done
	(sleep 1 && touch "$ATTACKER_DIR/go") &
	# Root's secret names the JIT's code, as a map would.
	(for _ in $(seq 100); do [ -s "$ATTACKER_DIR/code" ] && break; sleep 0.1; done
		printf '%s 100 SECRETNAME_a1b2\nSECRET_password=hunter2\n' "$(cat "$ATTACKER_DIR/code")" \
			>"$SECRET_DIR/secret") &
	prof "$name" -p "$pid" -d 8
	wait
	echo "/tmp/perf-$(cat "$ATTACKER_DIR/jpid").map" >>"$TMP/planted"
}
touch "$SECRET_DIR/secret"
chmod 0600 "$SECRET_DIR/secret"
link_case() {
	exit_case exit_link "ln -s $SECRET_DIR/secret /tmp/perf-\$j.map"
}
with_sysctl fs.protected_symlinks 0 link_case
no_secret exit_link
check exit_link_refusal_counted grep -q "perf maps refused 1 (a symbolic link 1)" "$TMP/exit_link.err"

exit_case exit_own "printf '%s 100 AttackerJit::hot\n' \$c >/tmp/perf-\$j.map"
check exit_own_map_named grep -q "AttackerJit::hot" "$TMP/exit_own.folded"
check exit_own_map_counted grep -q "read at the end 1," "$TMP/exit_own.err"

# --- c-f. something that looks like a JVM ---------------------------------------------
cat >"$ATTACKER_DIR/listen.py" <<'EOF'
import os, socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o600)
s.listen(8)
open(sys.argv[3], "w").write("ready")
while True:
    c, _ = s.accept()
    if mode == "record":
        open(sys.argv[3], "a").write(" connected")
    if mode == "flood":
        try:
            c.sendall(b"0\n")
            while True:
                c.sendall(b"x" * 65536)
        except OSError:
            pass
    else:
        time.sleep(3600)
EOF
chmod 644 "$ATTACKER_DIR/listen.py"

# fake_jvm: the attacker's JIT with libjvm.so mapped, for 30 s; sets $pid.
fake_jvm() {
	rm -f "$ATTACKER_DIR/pid"
	(as_attacker sh -c 'echo $$ >pid && LD_PRELOAD=./libjvm.so exec ./jit_perfmap 30 nomap' \
		2>/dev/null &)
	for _ in $(seq 100); do
		pid=$(cat "$ATTACKER_DIR/pid" 2>/dev/null) && [ -n "$pid" ] &&
			grep -q libjvm.so "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.1
	done
	echo "/tmp/.java_pid$pid" >>"$TMP/planted"
}
# serve MODE: the attacker's listener on /tmp/.java_pid$pid.
serve() {
	rm -f "$ATTACKER_DIR/ready"
	(as_attacker /usr/bin/python3 listen.py "/tmp/.java_pid$pid" "$1" ready 2>/dev/null &)
	for _ in $(seq 50); do
		[ -s "$ATTACKER_DIR/ready" ] && return
		sleep 0.1
	done
}
# asked NAME: the run failed to get an answer, counted, and ended in time.
asked() {
	check "$1_exit_zero" [ "$(cat "$TMP/$1.rc")" = 0 ]
	check "$1_counted" grep -q "JVMs asked for their perf map 1, no answer or refused 1," \
		"$TMP/$1.err"
	ends_near_d "$1"
}

for mode in stall flood; do
	fake_jvm
	serve "$mode"
	prof "$mode" -p "$pid" -d 3 --jvm-perf-map
	asked "$mode"
	kill "$pid" 2>/dev/null
done

fake_jvm
prof no_sigquit -p "$pid" -d 3 --jvm-perf-map
asked no_sigquit
check no_sigquit_process_lives kill -0 "$pid"
check no_sigquit_no_trigger [ ! -e "/tmp/.attach_pid$pid" ]
kill "$pid" 2>/dev/null

# f. A socket of root's, where only root may go, and the attacker's link to it.
fake_jvm
/usr/bin/python3 "$ATTACKER_DIR/listen.py" "$SECRET_DIR/root.sock" record "$SECRET_DIR/root.ready" &
root_pid=$!
for _ in $(seq 50); do [ -s "$SECRET_DIR/root.ready" ] && break; sleep 0.1; done
as_attacker ln -s "$SECRET_DIR/root.sock" "/tmp/.java_pid$pid"
prof root_link -p "$pid" -d 3 --jvm-perf-map
asked root_link
check root_link_never_connected bash -c "! grep -q connected '$SECRET_DIR/root.ready'"
kill "$pid" "$root_pid" 2>/dev/null
root_pid=
finish
