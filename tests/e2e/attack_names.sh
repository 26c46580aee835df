#!/usr/bin/env bash
# Issue 32, item 7: names are data. An unprivileged user chooses the names
# root's cprof shows: a program file whose path holds ESC, BEL and a
# newline followed by a forged "cprof:" line (its process name is the first
# 15 bytes of that), a function renamed to an escape sequence in that
# program's symbol table, a perf map naming JIT code the same way, and a
# shell that writes an escape sequence into its own /proc/PID/comm. Root
# profiles those processes (-v: every debug message too) and reads the
# summary on a terminal: stderr must hold no control byte but the newlines
# ending cprof's own lines, no forged line, and the names shown escaped.
# tag: quick
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_names "$why"
	exit 0
fi
attacker_create || {
	skip attack_names "no attacker user"
	finish
	exit
}

esc=$'\e]0;pwned\a'
forged=$'\ncprof: FORGED'
# The program: known_tree, hot_a renamed to 5 bytes of newline and screen
# clear, hot_b to C1's CSI (U+009B) and a screen clear.
prog="$ATTACKER_DIR/x${esc}${forged} by a path"$'\e[2J'
cp "$FIX/known_tree" "$prog"
perl -pi -e 's/hot_a\0/\n\e[2J\0/g; s/hot_b\0/\xc2\x9b2J!\0/g' "$prog"
chown "$ATTACKER:$ATTACKER" "$prog"
chmod 0755 "$prog"
# JIT code named by its perf map: the name it writes there, 35 bytes, replaced.
cp "$FIX/jit_perfmap" "$ATTACKER_DIR/jit"
perl -pi -e 's{LazyCompile:\*hotLoop /app/jit.js:10}{\e]0;pwned\a\rcprof: FORGED by perfmap}' \
	"$ATTACKER_DIR/jit"
chmod 0755 "$ATTACKER_DIR/jit"
# The attacker's side, all started under cprof, so that paths come raw from
# the kernel's mmap records (/proc/PID/maps writes a newline as \012): the
# JIT code (a perf map name cannot hold a newline: a carriage return forges
# the line start), a shell that names itself with an escape sequence, and
# the program. Each runs 3 s.
cat >"$ATTACKER_DIR/attack.sh" <<'SH'
exec 2>/dev/null
./jit 3 &
bash -c 'printf "\e]0;pwned\a\n" >/proc/$$/comm; while [ $SECONDS -lt 3 ]; do :; done' &
exec "$1" 3 2
SH
# attack ARGS...: cprof ARGS as root, the attacker's side as its command; stderr in names.err.
attack() {
	(cd "$ATTACKER_DIR" && "$CPROF" "$@" -- setpriv --reuid="$ATTACKER_UID" \
		--regid="$ATTACKER_UID" --clear-groups --inh-caps=-all --bounding-set=-all -- \
		sh ./attack.sh "$prog" 2>"$TMP/names.err")
}
start=$(date +%s%N)
attack -v -d 3 --top 200 --format folded -o "$TMP/names.folded"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
check names_run_exit_zero [ "$rc" -eq 0 ]

# Every byte below 0x20 but the newline, DEL, and C1 (raw or as UTF-8).
if LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$TMP/names.err"; then
	not_ok stderr_no_control_byte "$(LC_ALL=C grep -caP '\x1b' "$TMP/names.err") lines with ESC; first: $(LC_ALL=C grep -aP '[\x00-\x09\x0b-\x1f\x7f]' "$TMP/names.err" | head -1 | od -c | head -3 | tr -s ' \n' ' ')"
else
	ok stderr_no_control_byte
fi
if grep -aq '^cprof: FORGED' "$TMP/names.err"; then
	not_ok stderr_no_forged_line "$(grep -a '^cprof: FORGED' "$TMP/names.err" | head -2)"
else
	ok stderr_no_forged_line
fi
# The names did reach the summary (else the two checks above prove nothing): escaped.
# shown_escaped NAME REGEX: the name, escaped, is in the summary. /proc/PID/maps
# gives a newline in a path as \012, the kernel's records give it raw.
shown_escaped() {
	if grep -aqE "$2" "$TMP/names.err"; then ok "$1"; else
		not_ok "$1" "'$2' not in: $(grep -a 'FORGED\|top functions' -A3 "$TMP/names.err" | head -5 | tr '\n' '|')"
	fi
}
shown_escaped path_shown_escaped 'x\\x1b]0;pwned\\x07(\\x0a|\\012)cprof: FORGED by a path'
shown_escaped perf_map_name_shown_escaped '\\x1b]0;pwned\\x07\\x0dcprof: FORGED by perfmap'
shown_escaped symbol_shown_escaped '\\x0a\\x1b\[2J'
shown_escaped c1_symbol_shown_escaped '\\xc2\\x9b2J!'
# The folded file is read on terminals too: names defused there the same way.
if [ -s "$TMP/names.folded" ] && ! LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$TMP/names.folded"; then
	ok folded_no_control_byte
else
	not_ok folded_no_control_byte "$(head -c 300 "$TMP/names.folded" | od -c | head -3 | tr -s ' \n' ' ')"
fi
if [ "$elapsed" -lt 6000 ]; then ok names_run_within_d; else
	not_ok names_run_within_d "-d 3 took $elapsed ms"; fi
finish
