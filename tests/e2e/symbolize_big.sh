#!/usr/bin/env bash
# Issue 3, case 9: a binary with 200,000 function symbols. Two processes of
# it are profiled together: the right function is named among its
# neighbours, and the symbol table is loaded once (cprof -v logs each load),
# shared by both processes. The load time is printed, not asserted.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_big "$why"
	exit 0
fi
n=$(nm "$FIX/big_symtab" | grep -c ' T big_fn_')
check big_fixture_has_200k_symbols [ "$n" -eq 200000 ]
"$FIX/big_symtab" 3 &
a=$!
"$FIX/big_symtab" 3 &
b=$!
sleep 0.3
"$CPROF" -v -p "$a,$b" -d 1 -F 499 -o "$TMP/big.pb.gz" 2>"$TMP/big.log"
check big_exit_zero [ $? -eq 0 ]
wait "$a" "$b"
go tool pprof -symbolize=none -traces "$TMP/big.pb.gz" >"$TMP/big.traces" 2>&1
for p in "$a" "$b"; do
	# The leaf and its caller, for each process (stacks are printed leaf first).
	if awk -v p="$p" '$1 == "pid:" { cur = $2 } cur == p && $NF == "big_symtab_spin" { s = 1; next }
		s && cur == p { if ($NF == "main") ok = 1; s = 0 } END { exit !ok }' "$TMP/big.traces"; then
		ok "big_named_in_pid_$p"
	else
		not_ok "big_named_in_pid_$p" "no main -> big_symtab_spin stack for PID $p"
	fi
done
check big_no_neighbour_names bash -c "! grep -q 'big_fn_' '$TMP/big.traces'"
loads=$(grep -c "big_symtab: [0-9]* function symbols" "$TMP/big.log")
check big_loaded_once [ "$loads" -eq 1 ]
grep -o "big_symtab: [0-9]* function symbols.*" "$TMP/big.log" | sed 's/^/# /'
finish
