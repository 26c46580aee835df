#!/usr/bin/env bash
# The flame graph (-o NAME.svg, --format svg): the options; the known-call-tree
# fixture drawn, well-formed, self-contained, its hot_a and hot_b frames as
# wide as their samples (70/30); the same run's folded stacks and its pprof
# profile drawn with -i give the same split; pprof profiles (cprof's, Go's)
# drawn and corrupt ones refused in one line; --inverted, --title,
# --minwidth; --server and -o x.svg
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
expect_fail input_sample_type_needs_input 2 "--sample-type chooses the values of a pprof profile" \
	--sample-type cpu -o x.svg
# expect_one_line NAME PATTERN ARGS...: cprof ARGS exits 1 with one line on stderr, holding PATTERN.
expect_one_line() {
	local name=$1 pattern=$2
	shift 2
	"$CPROF" "$@" >/dev/null 2>"$TMP/err"
	local rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$pattern" "$TMP/err"; then
		ok "$name"
	else
		not_ok "$name" "exit $rc, want 1 and one line with '$pattern': $(head -c 300 "$TMP/err")"
	fi
}

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

# --- drawing a pprof file (no BPF) ---------------------------------------------------
# The format is the content's, whatever the name: gzipped (cprof's), or not (Go's).
PPROF=$ROOT/fixtures/corpus/pprof_input
cp "$PPROF/cprof_known_tree_gz" "$TMP/fixture.pb.gz"
"$CPROF" -i "$TMP/fixture.pb.gz" -o "$TMP/fixture.svg" 2>"$TMP/fixture.err"
check input_pprof_fixture_exit_zero [ $? -eq 0 ]
check input_pprof_fixture_said grep -q "wrote $TMP/fixture.svg (flame graph of 5 stacks, 92 samples" "$TMP/fixture.err"
check input_pprof_subtitle grep -q '<text id="subtitle"[^>]*>2026-11-26 11:33:38 UTC, 1.30 s at 99 Hz, 92 samples, 0 lost</text>' "$TMP/fixture.svg"
check input_pprof_kernel_frames grep -q '<g class="k"><title>irqentry_exit_to_user_mode (1 samples' "$TMP/fixture.svg"
check input_pprof_process grep -q '<g class="p"><title>known_tree (92 samples, 100.00%)' "$TMP/fixture.svg"
"$CPROF" -i "$TMP/fixture.pb.gz" --sample-type cpu -o "$TMP/fixture-cpu.svg" 2>/dev/null
check input_pprof_sample_type grep -q '<text id="title" x="600" y="24">fixture.pb.gz, cpu/nanoseconds</text>' "$TMP/fixture-cpu.svg"
expect_one_line input_pprof_no_such_type "no sample type 'alloc_space' in it; it has samples/count, cpu/nanoseconds" \
	-i "$TMP/fixture.pb.gz" --sample-type alloc_space -o "$TMP/n.svg"
"$CPROF" -i "$PPROF/go_cpu_inlined" -o "$TMP/go.svg" 2>/dev/null
check input_pprof_go_inlined grep -q '<title>main.inner (' "$TMP/go.svg"
expect_one_line input_sample_type_of_folded "holds folded stacks, one count each: --sample-type is for pprof" \
	-i "$ROOT/fixtures/corpus/folded/cprof_known_tree" --sample-type cpu -o "$TMP/n.svg"
# Corrupt: one line of reason, exit 1, no graph.
printf '\x1f\x8b\x08\x00' >"$TMP/gz.pb.gz"
expect_one_line input_pprof_gzip_header_only "gz.pb.gz: not a valid pprof profile: gzip: the gzip data is cut short" \
	-i "$TMP/gz.pb.gz" -o "$TMP/n.svg"
head -c 800 "$TMP/fixture.pb.gz" >"$TMP/cut.pb.gz"
expect_one_line input_pprof_gzip_cut "cut.pb.gz: not a valid pprof profile: gzip: the gzip data is cut short" \
	-i "$TMP/cut.pb.gz" -o "$TMP/n.svg"
head -c 600 "$PPROF/go_cpu_inlined" >"$TMP/cut.pb"
expect_one_line input_pprof_cut "cut.pb: not a valid pprof profile (field 2 of 20 bytes, past the end of its message (byte 587)), nor folded stacks" \
	-i "$TMP/cut.pb" -o "$TMP/n.svg"
check input_pprof_no_graph_left [ ! -e "$TMP/n.svg" ]

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

# The same program's pprof profile, drawn with -i: 70/30 within 5 points, and each as
# go tool pprof reads the same file (cum%, samples through it), within a point.
"$CPROF" -F 499 -o "$TMP/kt.pb.gz" -- "$FIX/known_tree" 2 2>/dev/null
"$CPROF" -i "$TMP/kt.pb.gz" -o "$TMP/kt-pprof.svg" 2>"$TMP/ktp.err"
check input_pprof_exit_zero [ $? -eq 0 ]
read -r pa paw <<<"$(svg_share "$TMP/kt-pprof.svg" hot_a)"
read -r pb pbw <<<"$(svg_share "$TMP/kt-pprof.svg" hot_b)"
if within "$pa" 70 5 && within "$pb" 30 5 && within "$paw" "$pa" 0.1 && within "$pbw" "$pb" 0.1; then
	ok input_pprof_hot_a_hot_b_70_30
else
	not_ok input_pprof_hot_a_hot_b_70_30 "hot_a $pa% of samples, $paw% of the width; hot_b $pb%, $pbw% (want 70/30 within 5, widths as samples)"
fi
if command -v go >/dev/null; then
	go tool pprof -top -nodecount=1000 "$TMP/kt.pb.gz" 2>/dev/null >"$TMP/kt.top"
	ga=$(awk '$NF == "hot_a" { sub(/%$/, "", $5); print $5 }' "$TMP/kt.top")
	gb=$(awk '$NF == "hot_b" { sub(/%$/, "", $5); print $5 }' "$TMP/kt.top")
	if [ -n "$ga" ] && [ -n "$gb" ] && within "$paw" "$ga" 1 && within "$pbw" "$gb" 1; then
		ok input_pprof_as_go_pprof_reads_it
	else
		not_ok input_pprof_as_go_pprof_reads_it "widths hot_a $paw%, hot_b $pbw%; go tool pprof: $ga%, $gb%"
	fi
else
	skip input_pprof_as_go_pprof_reads_it "go is not installed (Debian: golang-go, which ./build.sh test installs)"
fi
echo "info pprof drawn: hot_a $pa% of the samples, $paw% of the width (go tool pprof: ${ga:-?}%); hot_b $pb%, $pbw% (${gb:-?}%)"
check input_pprof_title_is_file grep -q '<text id="title" x="600" y="24">kt.pb.gz</text>' "$TMP/kt-pprof.svg"
check input_pprof_subtitle_run grep -qE '<text id="subtitle"[^>]*>[0-9-]+ [0-9:]+ UTC, [0-9.]+ s at 499 Hz, [0-9,]+ samples, [0-9,]+ lost</text>' "$TMP/kt-pprof.svg"

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
