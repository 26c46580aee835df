#!/usr/bin/env bash
# Go programs as they are shipped, stripped (-ldflags='-s -w': no .symtab,
# no DWARF), are named from .gopclntab, Go's own function table, which the
# runtime keeps for its stack traces (src/lib/go_pclntab.c): before,
# their frames were MODULE+0xOFFSET (go+0x3bdd6). Two programs:
#  - go_work (fixtures/src/unwind/go_work.go, nearly all its time in
#    main.hot) built stripped by the test: main.hot must be the leaf of
#    most samples, and no frame of the program unnamed;
#  - Debian's own go command (itself built with -s -w) listing the
#    standard library's packages: its frames are named runtime.* and
#    cmd/go/..., none go+0xOFFSET but in .plt (the lazy-binding stub PLT0,
#    which cprof names in no program: no Go code).
# With -v, cprof says where the names came from ("N function symbols, N of
# them from .gopclntab").
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_go "$why"
	exit 0
fi
if ! command -v go >/dev/null; then
	skip symbolize_go "go is not installed (Debian: golang-go, which ./build.sh test installs)"
	exit 0
fi
# GOFLAGS from lib.sh (-mod=mod) is for module builds; these are not.
export GOFLAGS=

has_symtab() { readelf -SW "$1" 2>/dev/null | grep -q ' \.symtab '; }
# samples FOLDED PROCESS [REGEX]: the samples of PROCESS, those with a frame REGEX matches.
samples() {
	awk -v p="$2" -v re="${3:-}" '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";"); if (f[1] != p) next
		if (re == "") { c += n; next }
		for (i = 2; i <= k; i++) if (f[i] ~ re) { c += n; break } }
		END { print c + 0 }' "$1"
}

# --- go_work, stripped --------------------------------------------------------------
prog=$TMP/go_work
if ! (cd "$ROOT/fixtures/src/unwind" && CGO_ENABLED=0 go build -ldflags='-s -w' -o "$prog" \
	go_work.go) >"$TMP/build.log" 2>&1; then
	not_ok go_work_stripped_build "go build failed: $(tail -c 300 "$TMP/build.log")"
	finish
	exit
fi
check go_work_stripped bash -c "! readelf -SW '$prog' | grep -q ' \.symtab '"
"$CPROF" -v -F 999 --format folded -o "$TMP/w.folded" -- "$prog" 2 2>"$TMP/w.err"
check go_work_exit_zero [ $? -eq 0 ]
check go_work_symbols_from_gopclntab \
	grep -qE "go_work: [0-9]+ function symbols, [0-9]+ of them from \.gopclntab \(Go 1\.[0-9]+ layout\)" \
	"$TMP/w.err"
total=$(samples "$TMP/w.folded" go_work)
hot=$(folded_share "$TMP/w.folded" ';main.hot')
echo "figure go_work: $total samples, main.hot the leaf of $hot%"
if [ "$total" -ge 100 ] && within "$hot" 100 20; then ok go_work_main_hot_named; else
	not_ok go_work_main_hot_named "$total samples, main.hot the leaf of $hot% (want 80%): $(sort -t' ' -k2 -rn "$TMP/w.folded" | head -3 | cut -c 1-300)"
fi
# main.hot sets up no frame, so a frame-pointer step from it may skip main.work.
check go_work_stack grep -qE '^go_work;runtime\.goexit;runtime\.main;main\.main;(main\.work;)?main\.hot [0-9]+$' \
	"$TMP/w.folded"
unnamed=$(samples "$TMP/w.folded" go_work '^go_work\+0x')
if [ "$unnamed" = 0 ]; then ok go_work_no_unnamed_frames; else
	not_ok go_work_no_unnamed_frames "$unnamed samples have a go_work+0x frame: $(grep -m 3 'go_work+0x' "$TMP/w.folded" | cut -c 1-300)"
fi
check go_work_summary grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +main\.hot \(go_work\)$' "$TMP/w.err"

# --- Debian's go command ------------------------------------------------------------
gobin=$(readlink -f "$(command -v go)")
if has_symtab "$gobin"; then
	skip go_command "$gobin has a .symtab: not the stripped build this case is about"
	finish
	exit
fi
# shellcheck disable=SC2016 # $0 is the inner shell's
"$CPROF" -v -F 999 --format folded -o "$TMP/g.folded" -- \
	sh -c 'for i in 1 2 3 4 5 6 7 8; do "$0" list -deps -json std >/dev/null || exit 1; done' \
	"$gobin" 2>"$TMP/g.err"
check go_command_exit_zero [ $? -eq 0 ]
check go_command_symbols_from_gopclntab \
	grep -qE "$gobin: [0-9]+ function symbols, [0-9]+ of them from \.gopclntab" "$TMP/g.err"
total=$(samples "$TMP/g.folded" go)
runtime=$(samples "$TMP/g.folded" go '^runtime\.')
cmdgo=$(samples "$TMP/g.folded" go '^cmd/go/')
# go+0xOFFSET frames outside .plt, as "COUNT FRAME" lines.
# The name's field: "[ 2]" is two fields, "[12]" one.
read -r plt_off plt_size < <(readelf -SW "$gobin" |
	awk '{ for (i = 1; i < NF; i++) if ($i == ".plt") { print $(i + 3), $(i + 4); exit } }')
awk -v lo="${plt_off:-0}" -v size="${plt_size:-0}" "$HEX_AWK"'
	{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
	  if (f[1] != "go") next
	  for (i = 2; i <= k; i++) if (f[i] ~ /^go\+0x/) {
		off = hex(substr(f[i], 5)); if (off < hex(lo) || off >= hex(lo) + hex(size)) print n, f[i] } }' \
	"$TMP/g.folded" >"$TMP/g.unnamed"
unnamed=$(awk '{ c += $1 } END { print c + 0 }' "$TMP/g.unnamed")
echo "figure go_command: $total samples of go, $runtime with a runtime.* frame, $cmdgo with cmd/go/..., $unnamed with go+0x"
if [ "$total" -ge 50 ] && [ $((runtime * 100)) -ge $((total * 80)) ]; then ok go_command_runtime_frames; else
	not_ok go_command_runtime_frames "$runtime of $total samples of go have a runtime.* frame (want 80% of at least 50)"
fi
if [ "$cmdgo" -gt 0 ]; then ok go_command_cmd_go_frames; else
	not_ok go_command_cmd_go_frames "no sample of go has a cmd/go/... frame"
fi
if [ "$unnamed" = 0 ]; then ok go_command_no_unnamed_frames; else
	not_ok go_command_no_unnamed_frames "$unnamed samples have a go+0x frame outside .plt: $(head -n 3 "$TMP/g.unnamed" | tr '\n' ' ')"
fi
finish
