# The unprivileged local attacker of the trust tests (tests/e2e/attack_*.sh),
# sourced after tests/lib.sh. docs/threat-model.md says who is trusted: root
# and the operator's options; this user stands for everyone else. It is
# created for one script, owns nothing outside that script's scratch
# directory, and is removed (with every process it still runs) on exit.
# shellcheck shell=bash

ATTACKER=""
ATTACKER_UID=""
ATTACKER_DIR=""

_attacker_remove() {
	[ -n "$ATTACKER" ] || return 0
	pkill -KILL -u "$ATTACKER" 2>/dev/null
	sleep 0.1
	userdel "$ATTACKER" 2>/dev/null
	ATTACKER=""
}

# attacker_create: makes the user (no home, no shell login, no groups beyond
# its own) and $ATTACKER_DIR, a directory it owns inside $TMP. Prints the
# reason and fails when it cannot (not root, no useradd).
attacker_create() {
	local name="cprof-atk-$$"
	if [ "$(id -u)" != 0 ]; then
		echo "needs root to create an unprivileged user" >&2
		return 1
	fi
	if ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
		echo "needs useradd and setpriv" >&2
		return 1
	fi
	userdel "$name" 2>/dev/null
	if ! useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		--user-group "$name" 2>"$TMP/useradd.err"; then
		echo "useradd failed: $(cat "$TMP/useradd.err")" >&2
		return 1
	fi
	ATTACKER=$name
	ATTACKER_UID=$(id -u "$name")
	trap '_attacker_remove; rm -rf "$TMP"' EXIT
	# The attacker may pass through $TMP (mktemp made it 0700) to its own corner.
	chmod 0711 "$TMP"
	ATTACKER_DIR=$TMP/attacker
	mkdir -p "$ATTACKER_DIR"
	chown "$name:$name" "$ATTACKER_DIR"
	return 0
}

# as_attacker CMD...: runs CMD as the attacker, with no capabilities and no
# supplementary groups, from a directory it can read.
as_attacker() {
	(cd "$ATTACKER_DIR" && setpriv --reuid="$ATTACKER_UID" --regid="$ATTACKER_UID" \
		--clear-groups --inh-caps=-all --bounding-set=-all -- "$@")
}

# with_sysctl NAME VALUE CMD...: runs CMD with the sysctl set, then restores it.
with_sysctl() {
	local name=$1 value=$2 old rc
	shift 2
	old=$(sysctl -n "$name") || return 1
	sysctl -qw "$name=$value" || return 1
	"$@"
	rc=$?
	sysctl -qw "$name=$old"
	return $rc
}

# victim_prof NAME ARGS...: root's cprof with ARGS against what the attacker
# planted: folded profile in $TMP/NAME.folded, summary in $TMP/NAME.err, wall
# seconds and peak RSS in KB in $TMP/NAME.time; killed after $VICTIM_KILL_AFTER
# seconds (60), so a hang is a failed bound, not a stuck suite.
victim_prof() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$TMP/$name.time" timeout -s KILL "${VICTIM_KILL_AFTER:-60}" \
		"$CPROF" -F 499 --format folded -o "$TMP/$name.folded" "$@" >/dev/null 2>"$TMP/$name.err"
}

# victim_cost NAME: "WALL RSS" of victim_prof NAME's run, "99 0" when it was
# killed (time then writes a line about it first) or not measured.
victim_cost() {
	local wall rss
	read -r wall rss < <(tail -1 "$TMP/$1.time")
	case "$wall$rss" in *[!0-9.]* | "") wall=99 rss=0 ;; esac
	echo "$wall $rss"
}
