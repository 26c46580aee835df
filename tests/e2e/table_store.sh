#!/usr/bin/env bash
# Unwind tables kept between runs (--cache-dir, src/store/table_store.c):
# a first profile of a program without frame pointers builds its files'
# tables and keeps them, one file each by build ID, and their symbols
# (src/resolve/symbol_file.h); a second one reads both back, builds none,
# and walks the same stacks; a damaged file is refused
# and built again; --no-cache keeps and reads nothing; a directory others
# may write into is not used, and says so.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip table_store "$why"
	exit 0
fi
if [ ! -e "$FIX/nofp_gcc" ]; then
	skip table_store "$FIX/nofp_gcc not built (make fixtures)"
	exit 0
fi
STORE=$TMP/store

# profile NAME ARGS...: cprof -v on nofp_gcc for 1 s, into NAME.folded and NAME.log.
profile() {
	local name=$1
	shift
	"$CPROF" -v -F 499 --format folded -o "$TMP/$name.folded" "$@" -- "$FIX/nofp_gcc" 1 \
		>/dev/null 2>"$TMP/$name.log"
}

# stat_of NAME WHAT: the number before WHAT in the -v line of the table store.
stat_of() {
	grep -o "[0-9][0-9]* $2" "$TMP/$1.log" | head -n1 | cut -d' ' -f1
}

# whole NAME: the share of samples under main;work;mid, the fixture's whole stack.
whole() {
	awk '{ n = $NF; total += n } /;main;work;mid;/ { hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$TMP/$1.folded"
}

profile cold --cache-dir "$STORE"
check cold_exit_zero [ $? -eq 0 ]
written=$(stat_of cold written)
check cold_writes_tables [ "${written:-0}" -ge 2 ]
check cold_one_file_a_table [ "$(find "$STORE" -name '*.utab' | wc -l)" -eq "${written:-0}" ]
check store_private [ "$(stat -c %a "$STORE")" = 700 ]
check cold_keeps_symbols [ "$(find "$STORE" -name 'sym-*.kept' | wc -l)" -ge 2 ]
check cold_loads_symbols grep -q "nofp_gcc: [0-9]* function symbols, loaded in" "$TMP/cold.log"

profile warm --cache-dir "$STORE"
check warm_exit_zero [ $? -eq 0 ]
check warm_reads_back [ "$(stat_of warm read)" -ge "${written:-1}" ]
check warm_writes_none [ "$(stat_of warm written)" = 0 ]
check warm_reads_symbols_back \
	grep -q "nofp_gcc: [0-9]* function symbols, read back from the store in" "$TMP/warm.log"
a=$(whole cold)
b=$(whole warm)
if within "$a" 97 3 && within "$b" 97 3; then ok same_whole_stacks; else
	not_ok same_whole_stacks "under main;work;mid: cold $a%, warm $b%"; fi

# A damaged file: refused, built again, written over.
f=$(find "$STORE" -name '*.utab' | head -n1)
printf '\xff' | dd of="$f" bs=1 seek=500 conv=notrunc status=none
profile damaged --cache-dir "$STORE"
check damaged_refused [ "$(stat_of damaged refused)" = 1 ]
check damaged_rewritten [ "$(stat_of damaged written)" = 1 ]
b=$(whole damaged)
if within "$b" 97 3; then ok damaged_whole_stacks; else
	not_ok damaged_whole_stacks "under main;work;mid: $b%"; fi

# --no-cache: neither the default store ($XDG_CACHE_HOME/cprof) nor any other.
profile none --no-cache
check no_cache_exit_zero [ $? -eq 0 ]
check no_cache_no_store_line bash -c "! grep -q 'table store:' '$TMP/none.log'"
check no_cache_writes_nothing [ ! -e "$XDG_CACHE_HOME/cprof" ]

mkdir -p "$TMP/open"
chmod 777 "$TMP/open"
profile open --cache-dir "$TMP/open"
check open_dir_exit_zero [ $? -eq 0 ]
check open_dir_warned grep -q -- "--cache-dir $TMP/open: cannot keep unwind tables there" "$TMP/open.log"
check open_dir_unused [ "$(find "$TMP/open" -type f | wc -l)" = 0 ]
finish
