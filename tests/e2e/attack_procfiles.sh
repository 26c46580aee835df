#!/usr/bin/env bash
# Issue 32, items 3 and 4: files an unprivileged user plants where root's
# cprof reads on its processes' behalf (lib/proc_file.h's rule). The
# attacker runs a tiny JIT (jit_perfmap nomap: anonymous code, no map of its
# own) and plants /tmp/perf-PID.map:
#   a. a link to a root-only file whose lines look like map entries for the
#      JIT's code, with fs.protected_symlinks 0 and 1: no byte of it in the
#      profile or the summary;
#   b. the same from its own user+mount namespace with a tmpfs on /tmp, as a
#      link and as a bind mount of a root-only file;
#   c. a 4 GB sparse map: the run ends near -d, in bounded memory (-p, not
#      -a: on a shared test machine -a also profiles whatever else runs);
#   d. a 240 MB map of valid lines: bounded memory, the cap in the summary;
#      then eight processes with such maps: the run still ends near -d.
# And e: a binary whose .gnu_debuglink names a 1 TB sparse file beside it:
# the run ends near -d and a SIGINT ends a CRC in progress.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_procfiles "$why"
	exit 0
fi
if ! attacker_create 2>"$TMP/attacker.err"; then
	skip attack_procfiles "$(cat "$TMP/attacker.err")"
	exit 0
fi
# Maps planted in the real /tmp go with the attacker.
# shellcheck disable=SC2046
trap 'rm -f $(cat "$TMP/maps" 2>/dev/null); _attacker_remove; rm -rf "$TMP" "$BIND_DIR"' EXIT
cp "$FIX/jit_perfmap" "$FIX/known_tree_stripped" "$ATTACKER_DIR/"
chmod 755 "$ATTACKER_DIR"/*
# Root's files, outside the /tmp that the attacker's namespace covers: in
# a directory only root may enter, and (for the bind mount, which needs a
# lookup) one anyone may pass.
BIND_DIR=$(mktemp -d /var/tmp/cprof-e2e.XXXXXX)
chmod 0711 "$BIND_DIR"
SECRET_DIR=$BIND_DIR/root-only
mkdir -m 0700 "$SECRET_DIR"
BIND_SECRET=$BIND_DIR/secret
MAX_RSS_KB=$((300 * 1024))
MAX_WALL=6 # -d 3 and 3 s of slack on a loaded machine

# jit_start [unshare SETUP]: starts the attacker's JIT (in a new user+mount
# namespace running SETUP first, with $$ its PID), sets $pid and $code.
jit_start() {
	local pre=${2:-true}
	rm -f "$ATTACKER_DIR/pid"
	if [ "${1:-}" = unshare ]; then
		(as_attacker unshare -Urm sh -c "$pre && echo \$\$ >pid && exec ./jit_perfmap 30 nomap" 2>/dev/null &)
	else
		(as_attacker sh -c 'echo $$ >pid && exec ./jit_perfmap 30 nomap' 2>/dev/null &)
	fi
	for _ in $(seq 100); do
		pid=$(cat "$ATTACKER_DIR/pid" 2>/dev/null) && [ -n "$pid" ] &&
			code=$(awk '$2 == "r-xp" && $5 == 0 { split($1, a, "-"); print a[1]; exit }' \
				"/proc/$pid/maps" 2>/dev/null) && [ -n "$code" ] && break
		sleep 0.1
	done
	echo "/tmp/perf-$pid.map" >>"$TMP/maps"
}

jit_stop() {
	kill "$pid" 2>/dev/null
	rm -f "/tmp/perf-$pid.map"
}

# secret FILE: root-only lines that name the JIT's code, and lines that do not.
secret() {
	printf '%s 100 SECRETNAME_a1b2\nSECRET_password=hunter2\nSECRET_line_three\n' "$code" >"$1"
	chmod 0600 "$1"
}

# no_leak NAME REASON: no secret byte in the profile or the summary, and the map was refused.
no_leak() {
	if grep -q SECRET "$TMP/$1.folded" "$TMP/$1.err"; then
		not_ok "$1_no_secret" "$(grep -h SECRET "$TMP/$1.folded" "$TMP/$1.err" | head -3)"
	else ok "$1_no_secret"; fi
	if grep -q 'malformed perf map' "$TMP/$1.err"; then
		not_ok "$1_no_line_count" "$(grep 'malformed perf map' "$TMP/$1.err")"
	else ok "$1_no_line_count"; fi
	[ -z "$2" ] || check "$1_refusal_counted" grep -q "perf maps refused 1 ($2 1)" "$TMP/$1.err"
}

# within_bounds NAME [MAX_RSS_KB [MAX_WALL]]: wall and peak RSS of the run.
within_bounds() {
	local wall rss max=${2:-$MAX_RSS_KB} max_wall=${3:-$MAX_WALL}
	read -r wall rss < <(victim_cost "$1")
	echo "# $1: wall ${wall} s, peak RSS ${rss} KB"
	if awk -v w="$wall" -v m="$max_wall" 'BEGIN { exit !(w <= m) }'; then ok "$1_ends_near_d"; else
		not_ok "$1_ends_near_d" "wall ${wall} s with -d 3"; fi
	if [ "$rss" -le "$max" ]; then ok "$1_rss_bounded"; else
		not_ok "$1_rss_bounded" "peak RSS ${rss} KB > ${max} KB"; fi
}

# --- a. /tmp/perf-PID.map -> a root-only file ----------------------------------------
# (With protected_symlinks 1 the kernel refuses the link itself, before cprof's rule.)
link_case() {
	local name=$1 reason=$2
	jit_start
	secret "$SECRET_DIR/secret"
	as_attacker ln -s "$SECRET_DIR/secret" "/tmp/perf-$pid.map"
	victim_prof "$name" -p "$pid" -d 2
	jit_stop
	no_leak "$name" "$reason"
}
with_sysctl fs.protected_symlinks 0 link_case link_protected_symlinks_0 "a symbolic link"
with_sysctl fs.protected_symlinks 1 link_case link_protected_symlinks_1 ""

# --- b. its own /tmp in a user+mount namespace ----------------------------------------
if ! as_attacker unshare -Urm true 2>/dev/null; then
	skip userns_link "unprivileged user namespaces are disabled here"
	skip userns_bind_mount "unprivileged user namespaces are disabled here"
else
	# protected_symlinks 1 does not cover the attacker's own tmpfs.
	userns_link() {
		jit_start unshare "mount -t tmpfs none /tmp && ln -s $SECRET_DIR/secret2 /tmp/perf-\$\$.map"
		secret "$SECRET_DIR/secret2"
		victim_prof userns_link -p "$pid" -d 2
		jit_stop
		no_leak userns_link "a symbolic link"
	}
	with_sysctl fs.protected_symlinks 1 userns_link

	# Lookup is all a bind mount needs: $TMP is 0711, the file 0600.
	secret "$BIND_SECRET"
	jit_start unshare "mount -t tmpfs none /tmp && touch /tmp/perf-\$\$.map &&
		mount --bind $BIND_SECRET /tmp/perf-\$\$.map"
	secret "$BIND_SECRET"
	victim_prof userns_bind_mount -p "$pid" -d 2
	jit_stop
	no_leak userns_bind_mount "not owned by the process's user"
fi

# --- c. a 4 GB sparse map --------------------------------------------------------------
jit_start
as_attacker truncate -s 4G "/tmp/perf-$pid.map"
victim_prof sparse_map -p "$pid" -d 3
jit_stop
within_bounds sparse_map
check sparse_map_cap_counted grep -q 'capped (only their first 16 MiB or 256Ki lines read) 1' \
	"$TMP/sparse_map.err"

# --- d. 240 MB of valid lines ----------------------------------------------------------
jit_start
# (Under 256 MiB, which main's cprof would not read at all.)
big=$TMP/big.map
awk -v base=$((0x100000)) 'BEGIN { for (i = 0; i < 4400000; i++)
	printf "%x 10 jitted_function_with_a_long_enough_name_%d\n", base + i * 16, i }' >"$big"
chown "$ATTACKER:$ATTACKER" "$big"
ln "$big" "/tmp/perf-$pid.map"
victim_prof big_map -p "$pid" -d 3
jit_stop
within_bounds big_map
check big_map_cap_counted grep -q 'capped (only their first 16 MiB or 256Ki lines read) 1' \
	"$TMP/big_map.err"

# Eight such processes (hard links to the one map): each read is capped,
# and so are the reads a drain may make and what all maps hold (128 MiB).
# A second more: eight spinning processes on a loaded 2-core machine starve
# cprof of CPU (the same run without maps: 3.5 s).
pids=""
for _ in $(seq 8); do
	jit_start
	ln "$big" "/tmp/perf-$pid.map"
	pids=$pids${pids:+,}$pid
done
victim_prof big_maps -p "$pids" -d 3
for p in ${pids//,/ }; do
	pid=$p jit_stop
done
within_bounds big_maps $((400 * 1024)) 7

# --- e. a .gnu_debuglink naming a sparse terabyte ----------------------------------------
debuglink_start() {
	rm -f "$ATTACKER_DIR/pid" "$ATTACKER_DIR/known_tree_stripped.debug"
	as_attacker truncate -s "$1" known_tree_stripped.debug
	(as_attacker sh -c 'echo $$ >pid && exec ./known_tree_stripped 30' 2>"$TMP/start.err" &)
	for _ in $(seq 100); do
		pid=$(cat "$ATTACKER_DIR/pid" 2>/dev/null) && [ -n "$pid" ] && return 0
		sleep 0.1
	done
	echo "# the attacker's program did not start: $(cat "$TMP/start.err")"
	return 1
}
debuglink_start 1T
victim_prof debuglink_tb -p "$pid" -d 3 || head -3 "$TMP/debuglink_tb.err"
jit_stop
within_bounds debuglink_tb
check debuglink_tb_refusal_counted grep -q 'debug files refused 1 (over the size cap 1)' \
	"$TMP/debuglink_tb.err"

# Under the cap, the CRC (of 4 GB of zeros) runs: SIGINT ends it, and the run, within the
# half second loads are left after a signal (LOAD_GRACE_MS).
debuglink_start $(((4 << 30) - 4096))
"$CPROF" -F 499 --format folded -o "$TMP/sigint.folded" -p "$pid" >/dev/null 2>"$TMP/sigint.err" &
cprof_pid=$!
sleep 2
kill -INT "$cprof_pid"
sent=$(date +%s.%N)
for _ in $(seq 100); do
	kill -0 "$cprof_pid" 2>/dev/null || break
	sleep 0.1
done
ended=$(date +%s.%N)
kill -KILL "$cprof_pid" 2>/dev/null
wait "$cprof_pid"
rc=$?
jit_stop
took=$(awk -v a="$sent" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')
echo "# sigint_during_crc: ended ${took} s after SIGINT (rc $rc)"
if awk -v t="$took" 'BEGIN { exit !(t <= 3) }' && [ "$rc" -eq 0 ]; then ok sigint_during_crc; else
	not_ok sigint_during_crc "ended ${took} s after SIGINT, exit $rc"; fi
finish
