#!/usr/bin/env bash
# Issue 32, item 4: a user truncates its own library while root's cprof
# reads it. libelf maps the files cprof reads; a read of a page past the
# new end raises SIGBUS, which ended root's cprof (exit 135) and lost its
# profile, once in two or three tries. The attacker runs a program mapped
# from a file it wrote (fixtures/src/hostile_elf.c: one whose 20 MB of CFI
# make 4.8 million table rows, one with 1.9 million symbols, each read for
# a second or two) and truncates it at several moments of root's
# whole-system run. Every run must end by itself with a profile; a read cut
# short is counted in the summary (lib/sigbus.h).
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_truncate "$why"
	exit 0
fi
if ! attacker_create; then
	skip attack_truncate "cannot create the attacker user"
	finish
	exit
fi
HOSTILE=$FIX/hostile_elf
DURATION=2
COUNTED=0

# one_run KIND ARG DELAY: the attacker's fresh file of KIND, run; root's
# cprof -a; the file truncated DELAY s into the run. Sets RC and SAID.
one_run() {
	local file=$ATTACKER_DIR/$1.so pid
	rm -f "$file"
	as_attacker "$HOSTILE" "$1" "$2" "$file"
	# Its own reads of the truncated file end it with SIGBUS: not news.
	as_attacker "$HOSTILE" run 30 "$file" 2>/dev/null &
	disown
	sleep 0.5
	rm -f "$TMP/p.pb.gz"
	timeout -s KILL 30 "$CPROF" --no-cache -a -d "$DURATION" -o "$TMP/p.pb.gz" 2>"$TMP/p.err" &
	pid=$!
	sleep "$3"
	as_attacker truncate -s 0 "$file"
	wait "$pid"
	RC=$?
	pkill -KILL -u "$ATTACKER" 2>/dev/null
	sleep 0.2
	SAID=$(grep -o 'files truncated while cprof read them: [0-9]*' "$TMP/p.err" | awk '{ print $NF }')
	echo "# $1 truncated at $3 s: exit $RC, profile $([ -s "$TMP/p.pb.gz" ] && echo written || echo missing)," \
		"reads cut short ${SAID:-0}"
}

# survives KIND ARG: every run of KIND ended by itself, with its profile.
survives() {
	local delay bad=""
	for delay in 0.2 0.4 0.7 1.0; do
		one_run "$1" "$2" "$delay"
		[ "$RC" -eq 0 ] && [ -s "$TMP/p.pb.gz" ] || bad="$bad at $delay s: exit $RC;"
		[ -n "$SAID" ] && COUNTED=$((COUNTED + SAID))
	done
	if [ -z "$bad" ]; then ok "${1}_truncated_survives"; else
		not_ok "${1}_truncated_survives" "root's cprof did not end with a profile:$bad"
	fi
}

survives cfi 20000000
survives symtab 1900000
if [ "$COUNTED" -gt 0 ]; then
	ok truncated_reads_counted
else
	skip truncated_reads_counted "no truncation fell on a read in these runs (timing)"
fi
finish
