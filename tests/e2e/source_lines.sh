#!/usr/bin/env bash
# Issue 37, lines: pprof frames carry the source file and line of their
# address (the call site for a return address), from the DWARF line table
# of the file or of its separate debug file (by build ID), so that
# `go tool pprof -lines` and `-list FUNC` show source; the summary says
# what share of samples have a line at their leaf, and why others do not;
# --no-lines and folded output carry none (folded output looks them up
# for inlined functions only: tests/e2e/inlines.sh).
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip source_lines "$why"
	exit 0
fi
if ! command -v go >/dev/null; then
	skip source_lines "go (the pprof reader) missing"
	exit 0
fi
SRC=$ROOT/fixtures/src/known_tree.c
# The lines of known_tree.c's code, found in the source, not written here.
line_of() { grep -n -m1 -F "$1" "$SRC" | cut -d: -f1; }
spin_a=$(line_of 'SPIN(7 * UNIT)')
spin_b=$(line_of 'SPIN(3 * UNIT)')
call_a=$(line_of 'hot_a();')
call_b=$(line_of 'hot_b();')

# prof NAME ARGS... -- COMMAND...: a pprof profile $TMP/NAME.pb.gz, its summary $TMP/NAME.err.
prof() {
	local name=$1
	shift
	"$CPROF" -F 499 -o "$TMP/$name.pb.gz" "$@" >/dev/null 2>"$TMP/$name.err"
}
# lines NAME: `go tool pprof -lines -top` of the profile, one frame a line.
lines() { go tool pprof -lines -top "$TMP/$1.pb.gz" 2>/dev/null >"$TMP/$1.lines"; }

# --- a program built with -g: the leaves' lines, the callers' call sites -----------------
prof plain -- "$FIX/known_tree" 1
lines plain
check leaf_line_hot_a grep -qE " hot_a $SRC:$spin_a\$" "$TMP/plain.lines"
check leaf_line_hot_b grep -qE " hot_b $SRC:$spin_b\$" "$TMP/plain.lines"
check call_site_of_hot_a grep -qE " work $SRC:$call_a\$" "$TMP/plain.lines"
check call_site_of_hot_b grep -qE " work $SRC:$call_b\$" "$TMP/plain.lines"
go tool pprof -list '^hot_a$' "$TMP/plain.pb.gz" >"$TMP/plain.list" 2>/dev/null
check list_shows_source grep -qE "^ +[0-9.]+m?s +[0-9.]+m?s +$spin_a:.*SPIN\(7 \* UNIT\)" "$TMP/plain.list"
check summary_says_share grep -qE "^cprof: source lines: ([0-9]+) of \1 user samples \(100\.0%\) have one at the leaf" "$TMP/plain.err"
check profile_comment_says_share bash -c "go tool pprof -comments '$TMP/plain.pb.gz' 2>/dev/null | grep -q 'source lines: '"

# --- stripped, its debug file found by build ID ------------------------------------------
bid=$(eu-readelf -n "$FIX/known_tree_buildid" | awk '/Build ID:/ { print $3 }')
mkdir -p "$TMP/bin" "$TMP/dd/.build-id/${bid:0:2}"
cp "$FIX/known_tree_buildid" "$TMP/bin/app"
cp "$FIX/known_tree_stripped.debug" "$TMP/dd/.build-id/${bid:0:2}/${bid:2}.debug"
prof debug --debug-dir "$TMP/dd" -- "$TMP/bin/app" 1
lines debug
check debug_file_leaf_line grep -qE " hot_a $SRC:$spin_a\$" "$TMP/debug.lines"
check debug_file_call_site grep -qE " work $SRC:$call_a\$" "$TMP/debug.lines"

# --- symbols but no DWARF: named, no line, and the summary says why ----------------------
mkdir -p "$TMP/empty"
strip --strip-debug -o "$TMP/bin/nodebug" "$FIX/known_tree"
prof nodebug --debug-dir "$TMP/empty" -- "$TMP/bin/nodebug" 1
lines nodebug
check no_debug_info_named grep -qE " hot_a\$" "$TMP/nodebug.lines"
check no_debug_info_counted grep -qE "source lines: 0 of [1-9][0-9]* user samples .* no debug info [1-9]" "$TMP/nodebug.err"

# --- off: --no-lines, and folded output ----------------------------------------------------
prof off --no-lines -- "$FIX/known_tree" 1
lines off
check no_lines_option grep -qE " hot_a\$" "$TMP/off.lines"
check no_lines_no_summary_line bash -c "! grep -q 'source lines' '$TMP/off.err'"
"$CPROF" -F 499 --format folded -o "$TMP/f.folded" -- "$FIX/known_tree" 1 >/dev/null 2>"$TMP/f.err"
check folded_unchanged grep -qE ';main;work;hot_a [0-9]+$' "$TMP/f.folded"
check folded_carries_no_lines bash -c "! grep -qE '\.c:[0-9]' '$TMP/f.folded'"
"$CPROF" -F 499 --format folded -o "$TMP/fn.folded" -- "$FIX/known_tree" 1 \
	>/dev/null 2>"$TMP/fn.err"
check folded_looks_up_none bash -c "! grep -q 'source lines' '$TMP/fn.err'"
finish
