#!/usr/bin/env bash
# Issue 32: files served by a user's FUSE daemon (docs/threat-model.md). The
# daemon (fixtures/src/fuse_serve.c) answers its own program's requests and
# holds everyone else's $STALL s; a request it has read is waited out even
# by SIGKILL. Its mount is made as fusermount makes one for a user allowed
# "user_allow_other" (allow_other: root may enter), the daemon runs as the
# attacker. Root's `cprof -a -d 2` must end within 3 s of -d, write its
# profile and count the file it could not read, when the daemon serves:
#   a. the program a process runs;
#   b. the perf map of a JIT, on a FUSE /tmp of the JIT's own namespace;
#   c. the debug file (.debug/ beside a stripped program);
#   d. the program again, with SIGTERM in the middle of a long run;
#   e. a program from a FUSE mount of the attacker's own user namespace,
#      with no help from root: the kernel never sends root's requests there
#      (root's uid has no name in it); cprof must not be slowed either;
#   f. but a perf map on an overlay of that namespace whose lower layer is
#      that FUSE mount does reach the daemon (overlayfs opens its layers as
#      the user who mounted it): no help from root needed.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_fuse "$why"
	exit 0
fi
if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	skip attack_fuse "no FUSE in this kernel"
	exit 0
fi
if ! attacker_create 2>"$TMP/attacker.err"; then
	skip attack_fuse "$(cat "$TMP/attacker.err")"
	exit 0
fi
STALL=30
MAX_WALL=5 # -d 2 and 3 s of slack on a loaded machine
VICTIM_KILL_AFTER=120 # the SIGTERM case runs with -d 60
# Programs outside /tmp, which case b covers with FUSE in the JIT's namespace.
HOST_DIR=$(mktemp -d /var/tmp/cprof-e2e.XXXXXX)
chmod 0755 "$HOST_DIR"
mkdir -p "$HOST_DIR/bin/.debug" "$ATTACKER_DIR/mnt" "$ATTACKER_DIR/own"
cp "$FIX/jit_perfmap" "$FIX/known_tree_stripped" "$HOST_DIR/bin/"
chown -R "$ATTACKER:$ATTACKER" "$HOST_DIR" "$ATTACKER_DIR"
FUSE_MODE=$(stat -c %a /dev/fuse)
cleanup() {
	_attacker_remove
	umount -l "$ATTACKER_DIR/mnt" "$HOST_DIR/bin/.debug" "$ATTACKER_DIR/own" 2>/dev/null
	chmod "$FUSE_MODE" /dev/fuse
	rm -rf "$TMP" "$HOST_DIR"
}
trap cleanup EXIT

# serve NAME [-u] MOUNT FILE... -- CMD...: starts the daemon (-u: mounted by
# root for the attacker, else by the attacker alone); sets $pid to CMD's.
serve() {
	local name=$1 as
	shift
	pid=""
	if [ "$1" = -u ]; then
		shift
		("$FIX/fuse_serve" -u "$ATTACKER_UID" -s $STALL "$@" >"$TMP/$name.serve" 2>&1 &)
	else
		(as_attacker "$FIX/fuse_serve" -s $STALL "$@" >"$TMP/$name.serve" 2>&1 &)
	fi
	for _ in $(seq 100); do
		pid=$(awk '$1 == "pid" { print $2 }' "$TMP/$name.serve" 2>/dev/null) && [ -n "$pid" ] && break
		sleep 0.1
	done
	sleep 0.5 # the program up and running
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && return 0
	echo "# $name: the daemon did not start: $(head -3 "$TMP/$name.serve")"
	return 1
}

# stop MOUNT: the daemon and its program gone, the mount with them.
stop() {
	pkill -KILL -u "$ATTACKER" 2>/dev/null
	sleep 0.2
	umount -l "$1" 2>/dev/null
}

# verdict NAME [COUNTED]: on time, profile written, the file counted (unless COUNTED is no).
verdict() {
	local wall
	read -r wall _ < <(victim_cost "$1")
	echo "# $1: wall ${wall} s"
	if awk -v w="$wall" -v m="$MAX_WALL" 'BEGIN { exit !(w <= m) }'; then ok "$1_ends_near_d"; else
		not_ok "$1_ends_near_d" "wall ${wall} s with -d 2"; fi
	check "$1_profile_written" test -s "$TMP/$1.folded"
	[ "${2:-}" = no ] ||
		check "$1_counted" grep -q 'of files on FUSE given up: the FUSE server did not answer' \
			"$TMP/$1.err"
}

# --- a. the program ----------------------------------------------------------------------
if serve program -u "$ATTACKER_DIR/mnt" "$FIX/known_tree" -- "$ATTACKER_DIR/mnt/known_tree" 60; then
	victim_prof program -a -d 2
	verdict program
else not_ok program_served "see above"; fi
stop "$ATTACKER_DIR/mnt"

# --- b. a perf map on FUSE /tmp ----------------------------------------------------------
printf '1000 100 SERVED_BY_FUSE\n' >"$TMP/perf-PID.map"
if serve perf_map -u "$ATTACKER_DIR/mnt" "$TMP/perf-PID.map" -- unshare -Urm sh -c \
	"mount --bind $ATTACKER_DIR/mnt /tmp && exec $HOST_DIR/bin/jit_perfmap 60 nomap"; then
	victim_prof perf_map -a -d 2
	verdict perf_map
else not_ok perf_map_served "see above"; fi
stop "$ATTACKER_DIR/mnt"

# --- c. a debug file -----------------------------------------------------------------------
if serve debug_file -u "$HOST_DIR/bin/.debug" "$FIX/known_tree_stripped.debug" -- \
	"$HOST_DIR/bin/known_tree_stripped" 60; then
	victim_prof debug_file -a -d 2
	verdict debug_file
else not_ok debug_file_served "see above"; fi
stop "$HOST_DIR/bin/.debug"

# --- d. SIGTERM ------------------------------------------------------------------------------
if serve sigterm -u "$ATTACKER_DIR/mnt" "$FIX/known_tree" -- "$ATTACKER_DIR/mnt/known_tree" 60; then
	victim_prof sigterm -a -d 60 &
	sleep 3
	t0=$(date +%s.%N)
	pkill -TERM -f "^$CPROF -F 499 --format folded -o $TMP/sigterm.folded"
	wait
	t1=$(date +%s.%N)
	after=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	echo "# sigterm: ended ${after} s after SIGTERM"
	if awk -v w="$after" 'BEGIN { exit !(w <= 3) }'; then ok sigterm_honoured; else
		not_ok sigterm_honoured "ended ${after} s after SIGTERM"; fi
	check sigterm_profile_written test -s "$TMP/sigterm.folded"
else not_ok sigterm_served "see above"; fi
stop "$ATTACKER_DIR/mnt"

# --- e, f. FUSE in the attacker's own user namespace ---------------------------------------
# (Distributions make /dev/fuse 0666; this machine may not.)
chmod 0666 /dev/fuse
if ! as_attacker unshare -Urm true 2>/dev/null; then
	skip userns_program "unprivileged user namespaces are disabled here"
	skip overlay_perf_map "unprivileged user namespaces are disabled here"
	finish
	exit
fi
if serve userns_program "$ATTACKER_DIR/own" "$FIX/known_tree" -- "$ATTACKER_DIR/own/known_tree" 60; then
	victim_prof userns_program -a -d 2
	verdict userns_program no
else not_ok userns_program_served "see above"; fi
stop "$ATTACKER_DIR/own"

# f. An overlay of the namespace with the FUSE mount as its lower layer, on
# the JIT's /tmp: overlayfs opens its layers as the user who mounted it, so
# root's lookup of the perf map reaches the daemon after all.
mkdir -p "$ATTACKER_DIR/upper" "$ATTACKER_DIR/work" "$ATTACKER_DIR/merged"
chown "$ATTACKER:$ATTACKER" "$ATTACKER_DIR/upper" "$ATTACKER_DIR/work" "$ATTACKER_DIR/merged"
if serve overlay_perf_map "$ATTACKER_DIR/own" "$TMP/perf-PID.map" -- sh -c \
	"mount -t overlay overlay -o lowerdir=$ATTACKER_DIR/own,upperdir=$ATTACKER_DIR/upper,workdir=$ATTACKER_DIR/work $ATTACKER_DIR/merged &&
	mount --bind $ATTACKER_DIR/merged /tmp && exec $HOST_DIR/bin/jit_perfmap 60 nomap"; then
	victim_prof overlay_perf_map -a -d 2
	verdict overlay_perf_map
else not_ok overlay_perf_map_served "see above"; fi
stop "$ATTACKER_DIR/own"
finish
