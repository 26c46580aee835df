#!/usr/bin/env bash
# Issue 3, case 5: a process that exits (and whose binary is deleted) long
# before the profile is written keeps its names and its mapping: cprof reads
# a process's memory map and opens its files when it first sees the process.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_exited "$why"
	exit 0
fi
mkdir -p "$TMP/bin"
cp "$FIX/known_tree" "$TMP/bin/shortlived"
bid=$(eu-readelf -n "$FIX/known_tree" | awk '/Build ID:/ { print $3 }')

for fmt in folded pprof; do
	"$CPROF" -a -d 3 -F 199 --format "$fmt" -o "$TMP/all.$fmt" 2>"$TMP/all.$fmt.err" &
	cprof_pid=$!
	sleep 0.5
	"$TMP/bin/shortlived" 1
	# Gone, and so is its binary, two seconds before the profile is written.
	cp "$FIX/known_tree" "$TMP/bin/shortlived.keep"
	rm "$TMP/bin/shortlived"
	wait "$cprof_pid"
	check "exited_${fmt}_exit_zero" [ $? -eq 0 ]
	mv "$TMP/bin/shortlived.keep" "$TMP/bin/shortlived"
done
check exited_names_hot_a grep -qE '^shortlived;.*;main;work;hot_a [0-9]+$' "$TMP/all.folded"
check exited_names_hot_b grep -qE '^shortlived;.*;main;work;hot_b [0-9]+$' "$TMP/all.folded"
check exited_no_unnamed_frames bash -c "! grep -E '^shortlived;' '$TMP/all.folded' | grep -q 'shortlived+0x'"
# The mapping's path is in the string table. (Not through go tool pprof: it
# merges mappings with one build ID, and other copies of known_tree may run.)
check exited_mapping_kept bash -c "gzip -dc '$TMP/all.pprof' | grep -aqF '$TMP/bin/shortlived'"
check exited_build_id_kept bash -c "gzip -dc '$TMP/all.pprof' | grep -aqF '$bid'"
finish
