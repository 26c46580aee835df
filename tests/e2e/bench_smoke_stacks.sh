#!/usr/bin/env bash
# The stacks benchmark keeps working: `bench/stacks --quick` (every workload
# on tiny inputs, about 40 s) must finish and print both tables whole, every
# cell a number. How right cprof's stacks are is not asserted: the table is
# the yardstick of the DWARF unwinder, and before it cprof's stacks of code
# without frame pointers are expected to be cut short. What is asserted is
# that the comparison itself is right: on crafted stacks, the same stacks in
# the two tools' forms compare equal, and a cut stack is seen as one; and
# that --rounds repeats each tool's runs and says so in the table.
source "$(dirname "$0")/../lib.sh"

COMPARE=$ROOT/bench/stacks_compare.awk
FOLD=$ROOT/bench/stacks_fold_perf.awk

# compare_line CPROF PERF: the line stacks_compare.awk prints for two folded
# files of the process "app", with libapp.so's functions at 0x1000-0x1100 and
# 0x1100-0x1200 (one PT_LOAD, file offset 0x1000 at address 0x401000).
compare_line() {
	printf '%s\n' "L libapp.so 4096 4198400 8192" "F libapp.so 4198400 4198656" \
		"F libapp.so 4198656 4198912" >"$TMP/ranges"
	echo "__libc_start_main_impl __libc_start_main" >"$TMP/aliases"
	awk -v comm=app -f "$COMPARE" "$TMP/aliases" "$TMP/ranges" "$1" "$2"
}

# The same two stacks, as cprof writes them and as perf script prints them:
# different aliases, what cprof alone prints of a C++ name (return type,
# parameters, clone suffix), offsets within unnamed functions, and kernel
# frames, none of which may count as a difference.
cat >"$TMP/cprof.folded" <<'EOF'
app;_start;__libc_start_main_impl;main;void ns::run<int>(int) const [clone .isra.0];libapp.so+0x1010;libapp.so+0x1105;read;vfs_read_[k] 30
app;_start;__libc_start_main_impl;main;void ns::run<int>(int) const [clone .isra.0];libapp.so+0x1020 10
other;main;elsewhere 99
EOF
cat >"$TMP/perf.script" <<'EOF'
app 101
	ffffffff81000000 vfs_read ([kernel.kallsyms])
	          10f0a0 __GI___libc_read (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            1180 [unknown] (/usr/lib/libapp.so)
	            1050 [unknown] (/usr/lib/libapp.so)
	            2222 ns::run<int> (/usr/bin/app)
	            3333 main (/usr/bin/app)
	           27304 __libc_start_main@@GLIBC_2.34 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            4444 _start (/usr/bin/app)

EOF
cat "$TMP/perf.script" "$TMP/perf.script" "$TMP/perf.script" >"$TMP/perf3.script"
printf '%s\n' "app 101" "	            10ff [unknown] (/usr/lib/libapp.so)" \
	"	            2222 ns::run<int> (/usr/bin/app)" "	            3333 main (/usr/bin/app)" \
	"	           27304 __libc_start_main@@GLIBC_2.34 (/usr/lib/x86_64-linux-gnu/libc.so.6)" \
	"	            4444 _start (/usr/bin/app)" "" >>"$TMP/perf3.script"
awk -f "$FOLD" "$TMP/perf3.script" | sort >"$TMP/perf.folded"
check stacks_fold_perf_form grep -qxF \
	"app;_start;__libc_start_main@@GLIBC_2.34;main;ns::run<int>;libapp.so+0x1050;libapp.so+0x1180;__GI___libc_read;vfs_read_[k] 3" \
	"$TMP/perf.folded"
# perf names read by its alias __GI___libc_read: bench/stacks learns that
# from libc's symbols (aliases_of), here it is said in place. Weights: 30 and
# 10 in cprof's, 3 and 1 in perf's, the same shares.
sed -i 's/__GI___libc_read/read/; s/ 3$/ 30/; s/ 1$/ 10/' "$TMP/perf.folded"
line=$(compare_line "$TMP/cprof.folded" "$TMP/perf.folded")
check stacks_compare_equal_stacks_agree [ "$line" = "40 40 100.0 100.0 0.0 0 6 0.0" ]
[ "$line" = "40 40 100.0 100.0 0.0 0 6 0.0" ] || echo "# compare printed: $line" >&2

# A stack cut short (no _start, no __libc_start_main) neither reaches the
# root nor has the outer edges.
sed 's/^app;_start;__libc_start_main_impl;/app;/' "$TMP/cprof.folded" >"$TMP/cut.folded"
line=$(compare_line "$TMP/cut.folded" "$TMP/perf.folded")
check stacks_compare_cut_stack_seen [ "$line" = "40 40 100.0 100.0 100.0 2 6 0.0" ]
[ "$line" = "40 40 100.0 100.0 100.0 2 6 0.0" ] || echo "# compare printed: $line" >&2
sed 's/^app;_start;__libc_start_main_impl;main;/app;/' "$TMP/cprof.folded" >"$TMP/cut.folded"
line=$(compare_line "$TMP/cut.folded" "$TMP/perf.folded")
check stacks_compare_cut_stack_not_rooted [ "${line%% 100.0 *}" = "40 40 0.0" ]

if ! why=$(can_bpf 2>&1); then
	skip bench_stacks_smoke "$why"
	finish
	exit
fi

out=$TMP/stacks.md
# Its progress goes to this script's stderr too: tests/run shows its end if it hangs.
"$ROOT/bench/stacks" --quick --output "$TMP/stacks-copy.md" 2>&1 >"$out" | tee "$TMP/stacks.err" >&2
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] && grep -q 'installing .* failed' "$TMP/stacks.err"; then
	skip bench_stacks_smoke "the packages could not be installed: $(tail -n 1 "$TMP/stacks.err")"
	finish
	exit
fi
check bench_stacks_quick_exits_zero [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -n 5 "$TMP/stacks.err" | sed 's/^/# /' >&2
check bench_stacks_output_file_is_the_table cmp -s "$out" "$TMP/stacks-copy.md"
check bench_stacks_header_names_kernel grep -q "^- kernel: $(uname -r)\$" "$out"
check bench_stacks_header_names_commit grep -qE '^- cprof: ([0-9a-f]{7,}|unknown)' "$out"
check bench_stacks_header_names_load grep -qE '^- run: .*: CPU busy .*: [0-9]+% before, [0-9]+% after$' "$out"

# rows TITLE: the data rows of the table under the heading that starts with TITLE.
rows() {
	awk -v t="## $1" 'index($0, t) == 1 { on = 1; next } /^## / { on = 0 }
		on && /^\| / && !/^\| (workload|---) / { print }' "$out"
}

# Every workload has its row in both tables, with every cell a number:
# 12 cells in the first, 14 in the second.
for w in xz gzip python3 perl sqlite3 openssl qsort_cb cxx_sort_map fixed_work; do
	r=$(rows "Stacks:" | grep -F "| $w |")
	if echo "$r" | awk -F'|' 'NF != 14 { bad = 1 }
		{ for (i = 3; i <= 13; i++) if ($i !~ /^ *[0-9]+(\.[0-9]+)? *$/) bad = 1 }
		END { exit bad || NR != 1 }'; then
		ok "bench_stacks_row_$w"
	else
		not_ok "bench_stacks_row_$w" "missing or not numbers: ${r:-(no row)}"
	fi
	r=$(rows "Cost:" | grep -F "| $w |")
	if echo "$r" | awk -F'|' 'NF != 16 { bad = 1 }
		{ for (i = 3; i <= 15; i++) if ($i !~ /^ *[0-9]+(\.[0-9]+)? *$/) bad = 1 }
		END { exit bad || NR != 1 }'; then
		ok "bench_stacks_cost_row_$w"
	else
		not_ok "bench_stacks_cost_row_$w" "missing or not numbers: ${r:-(no row)}"
	fi
done

# The harness measured something: every workload has samples in both
# profiles, and root shares are percentages (their values are not judged).
bad=$(rows "Stacks:" | awk -F'|' '$4 + 0 < 1 || $5 + 0 < 1 || $6 + 0 > 100 || $7 + 0 > 100 { print $2 }')
if [ -z "$bad" ]; then ok bench_stacks_samples_seen; else
	not_ok bench_stacks_samples_seen "no samples or a share above 100% in: $bad"; fi

# --rounds: each tool's runs repeated, the table says so; a bad count is refused.
r2=$TMP/rounds.md
if "$ROOT/bench/stacks" --quick --rounds 3 qsort_cb >"$r2" 2>"$TMP/rounds.err" &&
	[ "$(grep -c 'round [123] of 3' "$TMP/rounds.err")" -eq 3 ] &&
	grep -q '^Each tool profiled each workload 3 times' "$r2" &&
	grep -qE '^\| qsort_cb \| [0-9.]+ \|' "$r2"; then
	ok bench_stacks_rounds
else
	not_ok bench_stacks_rounds "$(tail -n 2 "$TMP/rounds.err" | tr '\n' ' ')"
fi
if "$ROOT/bench/stacks" --quick --rounds 0 qsort_cb >/dev/null 2>&1; then
	not_ok bench_stacks_refuses_bad_rounds "bench/stacks --rounds 0 exited 0"
else
	ok bench_stacks_refuses_bad_rounds
fi

# A mistyped workload is refused, not silently skipped.
if "$ROOT/bench/stacks" --quick nosuch >/dev/null 2>&1; then
	not_ok bench_stacks_refuses_unknown_workload "bench/stacks --quick nosuch exited 0"
else
	ok bench_stacks_refuses_unknown_workload
fi
finish
