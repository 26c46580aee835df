#!/usr/bin/env bash
# The flame graph (-o NAME.svg, --format svg): the options; the known-call-tree
# fixture drawn, well-formed, self-contained, its hot_a and hot_b frames as
# wide as their samples (70/30); the same run's folded stacks drawn with -i
# give the same split; --inverted, --title, --minwidth; --server and -o x.svg
# both happen. Then a real browser (Debian's chromium, headless, driven by
# puppeteer-core) opens the graphs from file:// and hovers, zooms, searches
# and resets them; screenshots are kept in .output/test-logs/flamegraph/.
# Size and time to first paint of many_stacks' graph are printed as info lines.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"
source "$ROOT/tests/browser/lib.bash"
trap 'server_stop; rm -rf "$TMP"' EXIT
SHOTS=$ROOT/.output/test-logs/flamegraph
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

# --- options (no BPF) ---------------------------------------------------------------
expect_fail svg_options_need_svg 2 "are for the flame graph" --title x -o x.pb.gz
expect_fail minwidth_range 2 "invalid --minwidth '200'" --minwidth 200 -o x.svg
expect_fail svg_with_interval 2 "format svg cannot be combined" --server http://h:1 --interval 5s \
	--format svg
expect_fail input_with_pid 2 "no -p, -a, command or --server" -i x.folded -p 1
expect_fail input_not_svg 2 "--format svg only" -i x.folded --format pprof
expect_fail input_missing 1 "cannot read 'nonexistent.folded'" -i nonexistent.folded -o "$TMP/n.svg"
printf '\x1f\x8b\x08\x00' >"$TMP/gz.pb.gz"
expect_fail input_gzip_named 1 "gzip-compressed (a pprof profile?)" -i "$TMP/gz.pb.gz" -o "$TMP/n.svg"

# svg_share FILE NAME: percent of all samples in frames NAME (their titles), and
# percent of the width (1180 px) their rects take, "SAMPLES% WIDTH%".
svg_share() {
	awk -v n="$2" '
		match($0, /<title>[^<]* \([0-9,]+ samples/) {
			t = substr($0, RSTART + 7, RLENGTH - 7); c = t; sub(/ \([0-9,]+ samples$/, "", t)
			sub(/.* \(/, "", c); sub(/ samples$/, "", c); gsub(/,/, "", c)
			if (t == "all") total = c
			if (t == n) { hit += c; w = $0; sub(/.* width="/, "", w); sub(/".*/, "", w); width += w }
		}
		END { printf "%.2f %.2f\n", total ? 100 * hit / total : 0, 100 * width / 1180 }' "$1"
}
# well_formed NAME FILE: xmllint parses FILE.
well_formed() {
	if ! command -v xmllint >/dev/null; then
		skip "$1" "xmllint is needed (./build.sh test installs libxml2-utils)"
	elif xmllint --noout "$2" 2>"$TMP/xmllint.err"; then ok "$1"; else
		not_ok "$1" "$(head -c 300 "$TMP/xmllint.err")"
	fi
}
# self_contained NAME FILE: no reference out of the file: the SVG namespace is
# the one URL, no href, no url() but the file's own #fragments, no @import.
self_contained() {
	local refs
	refs=$(grep -oE 'https?://[^" ]*|href=|url\([^#][^)]*\)|@import' "$2" | grep -vx 'http://www.w3.org/2000/svg')
	if [ -z "$refs" ]; then ok "$1"; else not_ok "$1" "references: $(echo "$refs" | sort -u | head -5 | tr '\n' ' ')"; fi
}

# --- drawing a folded file (no BPF) -------------------------------------------------
cp "$ROOT/fixtures/corpus/folded/hostile" "$TMP/hostile.folded"
"$CPROF" -i "$TMP/hostile.folded" -o "$TMP/hostile.svg" 2>"$TMP/hostile.err"
check input_hostile_names_exit_zero [ $? -eq 0 ]
check input_counts_skipped_lines grep -q "3 lines are not a folded stack" "$TMP/hostile.err"
well_formed input_hostile_names_well_formed "$TMP/hostile.svg"
"$CPROF" -i - --title 'From stdin' <"$ROOT/fixtures/corpus/folded/cprof_known_tree" \
	-o "$TMP/stdin.svg" 2>/dev/null
check input_from_stdin grep -q '<text id="title" x="600" y="24">From stdin</text>' "$TMP/stdin.svg"

if ! why=$(can_bpf 2>&1); then
	skip flamegraph "$why"
	finish
	exit
fi

# --- the known call tree, drawn ---------------------------------------------------------
"$CPROF" -F 499 -o "$TMP/kt.svg" -- "$FIX/known_tree" 2 2>"$TMP/kt.err"
check svg_exit_zero [ $? -eq 0 ]
check svg_by_file_name grep -q "cprof: wrote $TMP/kt.svg (flame graph, [0-9]* bytes)" "$TMP/kt.err"
well_formed svg_well_formed "$TMP/kt.svg"
self_contained svg_self_contained "$TMP/kt.svg"
check svg_root_frame grep -qE '<title>all \([0-9,]+ samples, 100.00%\)</title><rect x="10.00" y="[0-9]+" width="1180.00"' "$TMP/kt.svg"
check svg_title_is_command grep -q "<text id=\"title\" x=\"600\" y=\"24\">$FIX/known_tree 2</text>" "$TMP/kt.svg"
check svg_subtitle grep -qE "<text id=\"subtitle\"[^>]*>host $(uname -n), Linux $(uname -r), [0-9-]+ [0-9:]+ UTC, [0-9.]+ s at 499 Hz, [0-9,]+ samples, [0-9,]+ lost</text>" "$TMP/kt.svg"
read -r a aw <<<"$(svg_share "$TMP/kt.svg" hot_a)"
read -r b bw <<<"$(svg_share "$TMP/kt.svg" hot_b)"
if within "$a" 70 5 && within "$b" 30 5 && within "$aw" "$a" 0.1 && within "$bw" "$b" 0.1; then
	ok svg_hot_a_hot_b_70_30
else
	not_ok svg_hot_a_hot_b_70_30 "hot_a $a% of samples, $aw% of the width; hot_b $b%, $bw% (want 70/30 within 5, widths as samples)"
fi

# The same run's profile as folded stacks, drawn with -i: the same split within a point.
"$CPROF" -F 499 --format folded -o "$TMP/kt.folded" -- "$FIX/known_tree" 2 2>/dev/null
"$CPROF" -i "$TMP/kt.folded" -o "$TMP/kt-folded.svg" 2>"$TMP/ktf.err"
check input_exit_zero [ $? -eq 0 ]
# (hot_a's frame holds what the kernel did on its behalf too: stacks through it, not ending in it.)
fa=$(awk '{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line)
	if (index(line ";", ";hot_a;")) hit += n } END { printf "%.2f\n", 100 * hit / total }' "$TMP/kt.folded")
read -r ia iaw <<<"$(svg_share "$TMP/kt-folded.svg" hot_a)"
if within "$ia" "$fa" 1 && within "$iaw" "$fa" 1; then ok input_same_split; else
	not_ok input_same_split "folded: hot_a $fa%; its graph: $ia% of samples, $iaw% of the width"; fi
check input_title_is_file grep -q '<text id="title" x="600" y="24">kt.folded</text>' "$TMP/kt-folded.svg"

# An icicle, a title, all frames.
"$CPROF" -F 499 --inverted --title 'Icicle <&>' --minwidth 0 -o "$TMP/icicle.svg" -- "$FIX/known_tree" 1 2>/dev/null
check inverted_root_at_top grep -qE '<title>all \([0-9,]+ samples, 100.00%\)</title><rect x="10.00" y="78" ' "$TMP/icicle.svg"
check title_escaped grep -q '>Icicle &lt;&amp;&gt;</text>' "$TMP/icicle.svg"
well_formed inverted_well_formed "$TMP/icicle.svg"

# many_stacks: 16,384 distinct stacks; narrow frames merged (the default 0.1%), or all drawn.
"$CPROF" -F 999 -o "$TMP/many.svg" -- "$FIX/many_stacks" 3 14 2>/dev/null
"$CPROF" -F 999 --format folded -o "$TMP/many.folded" -- "$FIX/many_stacks" 3 14 2>/dev/null
"$CPROF" -i "$TMP/many.folded" --minwidth 0 -o "$TMP/many-all.svg" 2>/dev/null
"$CPROF" -i "$TMP/many.folded" -o "$TMP/many-merged.svg" 2>/dev/null
nall=$(grep -c '<title>' "$TMP/many-all.svg")
nmerged=$(grep -c '<title>' "$TMP/many-merged.svg")
check minwidth_merges bash -c "[ $nmerged -lt $nall ] && grep -q 'frames narrower than 0.1%]' '$TMP/many-merged.svg'"
well_formed many_well_formed "$TMP/many.svg"
echo "info many_stacks: $(wc -l <"$TMP/many.folded") distinct stacks; -o many.svg: $(stat -c %s "$TMP/many.svg") bytes, $(grep -c '<title>' "$TMP/many.svg") frames; drawn from its folded stacks: $(stat -c %s "$TMP/many-merged.svg") bytes ($nmerged frames), with --minwidth 0 $(stat -c %s "$TMP/many-all.svg") bytes ($nall frames)"

# --- with --server: uploaded, and the graph written -----------------------------------
if why=$(server_install 2>&1); then
	server_start "$TMP/server.log" || true
	"$CPROF" -F 199 --server "http://127.0.0.1:$SERVER_PORT" -o "$TMP/up.svg" -- "$FIX/known_tree" 1 2>"$TMP/up.err"
	rc=$?
	if [ $rc -eq 0 ] && server_check "$TMP/server.log" accepted 1 >/dev/null && grep -q '<title>hot_a' "$TMP/up.svg"; then
		ok server_and_svg_both
	else
		not_ok server_and_svg_both "exit $rc; $(server_check "$TMP/server.log" accepted 1); $(tail -c 300 "$TMP/up.err")"
	fi
	server_stop
	# The server gone: the graph, and the profile itself beside it (never lost).
	"$CPROF" -F 199 --server "http://127.0.0.1:$SERVER_PORT" -o "$TMP/down.svg" \
		-- "$FIX/known_tree" 1 2>"$TMP/down.err"
	check server_down_exits_3 [ $? -eq 3 ]
	check server_down_svg_written grep -q '<title>hot_a' "$TMP/down.svg"
	check server_down_pprof_kept bash -c "go tool pprof -top '$TMP/down.pb.gz' 2>/dev/null | grep -q hot_a"
else
	skip server_and_svg_both "$why"
fi

# --- in a real browser ------------------------------------------------------------------
# Not in $(...): it sets CHROMIUM.
if ! browser_install 2>"$TMP/why"; then
	skip browser "$(cat "$TMP/why")"
	finish
	exit
fi
want=$(awk '{ print $1 }' <<<"$(svg_share "$TMP/kt.svg" hot_a)")
browser_run known_tree "$TMP/kt.svg" "$SHOTS" --expect-matched "$want" 2>"$TMP/browser.err" ||
	echo "browser: $(tail -c 500 "$TMP/browser.err")" >&2
browser_run icicle "$TMP/icicle.svg" "$SHOTS" --zoom-only 2>>"$TMP/browser.err"
browser_run many_stacks "$TMP/many.svg" "$SHOTS" --measure 2>>"$TMP/browser.err"
cp "$TMP/kt.svg" "$TMP/many.svg" "$SHOTS/" 2>/dev/null
finish
