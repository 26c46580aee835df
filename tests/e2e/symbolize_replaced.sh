#!/usr/bin/env bash
# Issue 3, case 4: a binary deleted, or replaced by another file, after its
# process started still symbolizes from the file that is mapped
# (/proc/PID/map_files), and a different file now at the same path is never
# used: without map_files (no CAP_SYS_ADMIN) the path is used only if its
# device and inode are the mapping's, else the frames stay module@0xOFFSET.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_replaced "$why"
	exit 0
fi
# The other binary: its functions (main, do_reads) must never show up.
other=$FIX/syscall_heavy

# start NAME: a copy of known_tree at $TMP/NAME/victim, running 4 s; sets $pid.
start() {
	mkdir -p "$TMP/$1"
	cp "$FIX/known_tree" "$TMP/$1/victim"
	"$TMP/$1/victim" 4 &
	pid=$!
	sleep 0.3
}
# prof NAME [WRAPPER...]: 1 s of $pid into $TMP/NAME.folded.
prof() {
	local name=$1
	shift
	"$@" "$CPROF" -p "$pid" -d 1 -F 499 --format folded -o "$TMP/$name.folded" 2>"$TMP/$name.err"
}
named() {
	check "$1_names_hot_a" grep -qE '^victim;.*;main;work;hot_a [0-9]+$' "$TMP/$1.folded"
	check "$1_names_hot_b" grep -qE '^victim;.*;main;work;hot_b [0-9]+$' "$TMP/$1.folded"
	check "$1_no_foreign_names" bash -c "! grep -q do_reads '$TMP/$1.folded'"
}

# --- deleted after start --------------------------------------------------------------
start deleted
rm "$TMP/deleted/victim"
prof deleted
named deleted
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- replaced: another binary renamed over the path -----------------------------------
start replaced
cp "$other" "$TMP/replaced/victim.new"
mv "$TMP/replaced/victim.new" "$TMP/replaced/victim"
prof replaced
named replaced
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- without map_files: the path alone, checked by device and inode -------------------
if ! setpriv --bounding-set -sys_admin,-checkpoint_restore true 2>/dev/null; then
	skip no_map_files "setpriv cannot drop capabilities here"
	finish
	exit
fi
nocap=(setpriv --bounding-set -sys_admin,-checkpoint_restore)
start same_file
prof same_file "${nocap[@]}"
named same_file
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# Another file bind-mounted over the path, in the process's own mount
# namespace: the path now opens a different file, and the maps line does not
# say "(deleted)". Its names must not be used.
mkdir -p "$TMP/mounted"
cp "$FIX/known_tree" "$TMP/mounted/victim"
unshare -m sh -c "'$TMP/mounted/victim' 4 & echo \$! >'$TMP/mounted/pid'; sleep 0.3;
	mount --bind '$other' '$TMP/mounted/victim'; wait" &
outer=$!
for _ in $(seq 50); do
	[ -s "$TMP/mounted/pid" ] && grep -q "$TMP/mounted/victim" "/proc/$(cat "$TMP/mounted/pid")/mountinfo" 2>/dev/null && break
	sleep 0.1
done
pid=$(cat "$TMP/mounted/pid")
prof mounted "${nocap[@]}"
"${nocap[@]}" "$CPROF" -v -p "$pid" -d 0.3 -o /dev/null 2>"$TMP/mounted.log"
check mounted_identity_check_refused_path grep -q "victim: not the file mapped by PID $pid (identity differs)" "$TMP/mounted.log"
check mounted_no_foreign_names bash -c "! grep -qE 'do_reads|;main;' '$TMP/mounted.folded'"
check_offset_split mounted_module_offsets_of_mapped_file "$TMP/mounted.folded" victim
wait "$outer"
finish
