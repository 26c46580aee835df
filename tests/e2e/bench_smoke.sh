#!/usr/bin/env bash
# The benchmark harness keeps working: `bench/run --quick` (1 round, 2 s
# profiles, small fixed work) must finish and print a well-formed table.
# No timing and no target is asserted: the figures belong to the machine.
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip bench_smoke "$why"
	exit 0
fi

out=$TMP/bench.md
# Its progress goes to this script's stderr too: tests/run shows its end if it hangs.
"$ROOT/bench/run" --quick --output "$TMP/bench-copy.md" 2>&1 >"$out" | tee "$TMP/bench.err" >&2
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] && grep -q 'installing .* failed' "$TMP/bench.err"; then
	skip bench_smoke "the peers could not be installed: $(tail -n 1 "$TMP/bench.err")"
	exit 0
fi
check bench_quick_exits_zero [ "$rc" -eq 0 ]
check bench_output_file_is_the_table cmp -s "$out" "$TMP/bench-copy.md"
check bench_header_names_kernel grep -q "^- kernel: $(uname -r)\$" "$out"
check bench_header_names_commit grep -qE '^- cprof: ([0-9a-f]{7,}|unknown)' "$out"

# table_rows PREFIX: the rows of the resources table whose figure starts with PREFIX.
table_rows() { grep -F "| $1" "$out"; }

# Every figure has its row, with 8 cells.
for fig in "1. peak RSS" "2. CPU user+sys" "3. in-kernel ns per sample" "4. slowdown" \
	"5. startup" "7. binary size"; do
	name=bench_row_$(echo "${fig#* }" | tr -c 'a-zA-Z0-9\n' _)
	if table_rows "$fig" | awk -F'|' 'NF != 10 { bad = 1 } END { exit bad || !NR }'; then
		ok "$name"
	else
		not_ok "$name" "missing or malformed: $(table_rows "$fig" | head -n 2)"
	fi
done

# cprof's own cells are numbers: the harness measured it (a peer may be n/a).
bad=$(awk -F'|' '/^\| [1-5]\. / && $3 !~ /^ *-?[0-9]+(\.[0-9]+)? *$/ { print $2 }' "$out")
if [ -z "$bad" ]; then ok bench_cprof_cells_numeric; else
	not_ok bench_cprof_cells_numeric "not a number in: $bad"; fi
# Ratio and verdict cells hold a number, n/a or a dash; verdicts
# yes/no/unresolved/n/a/-.
bad=$(awk -F'|' '/^\| [1-7]\. / && ($6 !~ /^ *(-?[0-9.]+|n\/a|—) *$/ ||
	$9 !~ /^ *(yes|no|unresolved|n\/a|—) *$/) { print $2 }' "$out")
if [ -z "$bad" ]; then ok bench_ratio_and_verdict_cells; else
	not_ok bench_ratio_and_verdict_cells "malformed in: $bad"; fi

# Symbolization: libc, a large library and kallsyms, each with numbers.
n=$(awk -F'|' '/^## 6\./ { on = 1 } /^## 8\./ { on = 0 }
	on && $3 ~ /^ *[0-9]+ *$/ && $4 ~ /^ *[0-9.]+ *$/ && $5 ~ /^ *[0-9]+ *$/ { n++ }
	END { print n + 0 }' "$out")
check bench_symbolization_rows [ "$n" -eq 3 ]

# Accuracy: two rows per fixture function and a verdict line.
n=$(grep -cE '^\| (hot_a|hot_b|work|main|thread_main) \| (self|total) \| [0-9.]+ \|' "$out")
check bench_accuracy_rows [ "$n" -eq 10 ]
check bench_accuracy_verdict grep -qE 'target ≤ 2 points: (yes|no)\.$' "$out"
finish
