#!/usr/bin/env bash
# Issue 16: stripped binaries named through debug files fetched from
# debuginfod servers (DEBUGINFOD_URLS), as perf and gdb fetch them, into the
# cache they share (elfutils' layout). A real server first, Debian's
# `debuginfod` (elfutils' own) indexing the fixture's debug file: named, the
# file in the cache, named again from the cache with the server gone, nothing
# fetched without DEBUGINFOD_URLS or with --no-debuginfod. Then a scripted
# server (tests/server/debuginfod.cjs) plays each failure: every one counted
# in the summary, the frames left as module+offset (never a wrong name), and
# the profile written.
source "$(dirname "$0")/../lib.sh"

"$CPROF" --debuginfod-timeout soon -d 1 -o "$TMP/x.pb.gz" 2>"$TMP/usage.err"
check bad_timeout_is_usage_error [ $? -eq 2 ]
"$CPROF" --debuginfod-max-bytes 12Q -d 1 -o "$TMP/x.pb.gz" 2>"$TMP/usage2.err"
check bad_max_bytes_is_usage_error [ $? -eq 2 ]

if ! why=$(can_bpf 2>&1); then
	skip symbolize_debuginfod "$why"
	exit 0
fi
mkdir -p "$TMP/bin"
cp "$FIX/known_tree_buildid" "$TMP/bin/app"
bid=$(eu-readelf -n "$TMP/bin/app" | awk '/Build ID:/ { print $3 }')

# prof NAME [ENV...] -- [CPROF OPTIONS]: profiles the stripped app (no local
# debug file) with the environment given; $TMP/NAME.folded, $TMP/NAME.err.
# libc and the loader have theirs in /usr/lib/debug (libc6-dbg) or are asked
# for too (404): the summaries are matched for the app's outcome.
prof() {
	local name=$1 env=()
	shift
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	env -u DEBUGINFOD_URLS "${env[@]}" "$CPROF" -F 499 --format folded \
		-o "$TMP/$name.folded" "$@" -- "$TMP/bin/app" 1 >/dev/null 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
named() {
	check "$1_names_hot_a" grep -qE ';main;work;hot_a [0-9]+$' "$TMP/$1.folded"
	check "$1_names_hot_b" grep -qE ';main;work;hot_b [0-9]+$' "$TMP/$1.folded"
}
# unnamed NAME: the run went well, and its frames are app+0xOFFSET, no name invented.
unnamed() {
	check "$1_exit_0" grep -qx 0 "$TMP/$1.rc"
	check "$1_profile_written" test -s "$TMP/$1.folded"
	check "$1_frames_stay_module_offset" grep -qE ';app\+0x[0-9a-f]+ [0-9]+$' "$TMP/$1.folded"
	check "$1_no_name_invented" bash -c "! grep -qE 'hot_a|hot_b|;work;' '$TMP/$1.folded'"
}
# said NAME REGEX [WHAT]: the summary's debuginfod line says it.
said() {
	check "$1_summary_says_${3:-it}" grep -qE "^cprof: debuginfod: [0-9]+ debug files? asked for: $2" "$TMP/$1.err"
}

# --- a real server: Debian's debuginfod --------------------------------------------
if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
	skip debuginfod_real_server "debuginfod is not installed (Debian: debuginfod, which ./build.sh test installs)"
else
	mkdir -p "$TMP/srv"
	cp "$FIX/known_tree_stripped.debug" "$TMP/srv/"
	port=$((20000 + RANDOM % 20000))
	debuginfod -F "$TMP/srv" -p "$port" -d "$TMP/dbgd.sqlite" >"$TMP/dbgd.log" 2>&1 &
	dpid=$!
	ready=
	# A fresh cache each try: a miss before the first scan would be remembered.
	for i in $(seq 100); do
		if DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMP/probe-cache.$i \
			debuginfod-find debuginfo "$bid" >/dev/null 2>&1; then
			ready=1
			break
		fi
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.2
	done
	if [ -z "$ready" ]; then
		not_ok debuginfod_real_server "the server did not serve $bid: $(tail -n 3 "$TMP/dbgd.log")"
	else
		url=http://127.0.0.1:$port
		gets() { grep -c "GET /buildid/$bid/debuginfo" "$TMP/dbgd.log"; }
		before=$(gets)
		prof real "DEBUGINFOD_URLS=$url" "DEBUGINFOD_CACHE_PATH=$TMP/cache" --
		named real
		said real "1 downloaded, 0 from the cache(;|$)" downloaded
		check real_server_was_asked [ "$(gets)" -gt "$before" ]
		check real_debug_file_in_cache cmp -s "$TMP/cache/$bid/debuginfo" "$FIX/known_tree_stripped.debug"
		DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$TMP/cache "$CPROF" -F 499 -o "$TMP/real.pb.gz" \
			-- "$TMP/bin/app" 1 2>/dev/null
		check real_profile_comment_says_it bash -c "gzip -dc '$TMP/real.pb.gz' | grep -aqE 'cprof: debuginfod: [0-9]+ debug files? asked for: 0 downloaded, 1 from the cache'"
		# Unset, or turned off: no request, no cache made.
		before=$(gets)
		prof unset "DEBUGINFOD_CACHE_PATH=$TMP/cache-unset" --
		unnamed unset
		check unset_asks_no_server [ "$(gets)" -eq "$before" ]
		check unset_makes_no_cache [ ! -e "$TMP/cache-unset" ]
		check unset_says_nothing bash -c "! grep -q debuginfod '$TMP/unset.err'"
		prof off "DEBUGINFOD_URLS=$url" "DEBUGINFOD_CACHE_PATH=$TMP/cache-off" -- --no-debuginfod
		unnamed off
		check off_asks_no_server [ "$(gets)" -eq "$before" ]
		check off_makes_no_cache [ ! -e "$TMP/cache-off" ]
	fi
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	# The server gone: the cache names them.
	if [ -n "$ready" ]; then
		prof cached "DEBUGINFOD_URLS=$url" "DEBUGINFOD_CACHE_PATH=$TMP/cache" --
		named cached
		said cached "0 downloaded, 1 from the cache(;|$)" from_cache
	fi
fi

# --- a scripted server: each failure counted, nothing invented -----------------------
if ! command -v node >/dev/null; then
	skip debuginfod_failures "node is not installed (./build.sh installs it)"
	finish
	exit
fi
objcopy --only-keep-debug "$FIX/known_tree_nopie" "$TMP/other.debug"
SRV_PID=
# serve MODE [FILE]: starts the scripted server; sets SRV_URL, and SRV_LOG, its own log.
SERVES=0
serve() {
	local pf=$TMP/port.$SERVES
	SRV_LOG=$TMP/srv.$SERVES.$1.log
	SERVES=$((SERVES + 1))
	node "$ROOT/tests/server/debuginfod.cjs" --mode "$1" --log "$SRV_LOG" \
		--port-file "$pf" --build-id "$bid" ${2:+--file "$2"} 2>>"$TMP/srv.err" &
	SRV_PID=$!
	await_file "$pf"
	SRV_URL=http://127.0.0.1:$(cat "$pf")
}
unserve() {
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
}
# failure MODE FILE REGEX [ENV...] -- [CPROF OPTIONS...]: a run against that server.
failure() {
	local mode=$1 file=$2 re=$3
	shift 3
	serve "$mode" "$file"
	prof "f_$mode" "DEBUGINFOD_URLS=$SRV_URL" "DEBUGINFOD_CACHE_PATH=$TMP/cache-$mode" "$@"
	unserve
	unnamed "f_$mode"
	said "f_$mode" "0 downloaded, 0 from the cache; $re" counted
	check "f_${mode}_no_file_cached" bash -c "! test -s '$TMP/cache-$mode/$bid/debuginfo'"
	check "f_${mode}_no_temporary_left" bash -c "! find '$TMP/cache-$mode' -type f ! -name debuginfo ! -name '*_s' | grep -q ."
}
failure notfound "" "failed: [0-9]+ not found$" --
failure error "" "failed: ([0-9]+ not found, )?1 server error$" --
failure garbage "" "failed: ([0-9]+ not found, )?1 not an ELF file$" --
failure wrong "$TMP/other.debug" "failed: ([0-9]+ not found, )?1 build ID mismatch$" --
failure truncated "$FIX/known_tree_stripped.debug" "failed: ([0-9]+ not found, )?1 connection failed$" --
failure redirect-loop "" "failed: ([0-9]+ not found, )?1 redirect loop$" --
failure oversize "" "failed: ([0-9]+ not found, )?1 too large$" -- --debuginfod-max-bytes 1M
# A file's own deadline (DEBUGINFOD_MAXTIME, as elfutils'), then the run's wait.
failure stall "" "failed: ([0-9]+ not found, )?1 timeout$" DEBUGINFOD_MAXTIME=2 -- --debuginfod-timeout 10
failure drip "" "(failed: [0-9]+ not found; )?1 still downloading when the run ended \(--debuginfod-timeout\)$" -- --debuginfod-timeout 1

# A miss is remembered (elfutils' empty file): the next run asks no server.
serve notfound
prof miss1 "DEBUGINFOD_URLS=$SRV_URL" "DEBUGINFOD_CACHE_PATH=$TMP/cache-miss" --
prof miss2 "DEBUGINFOD_URLS=$SRV_URL" "DEBUGINFOD_CACHE_PATH=$TMP/cache-miss" --
unserve
check miss_remembered_as_empty_file bash -c "test -f '$TMP/cache-miss/$bid/debuginfo' && ! test -s '$TMP/cache-miss/$bid/debuginfo'"
check miss_second_run_asks_no_server [ "$(grep -c "/buildid/$bid/" "$SRV_LOG")" -eq 1 ]
said miss2 "0 downloaded, 0 from the cache; failed: ([0-9]+ not found, )?1 cached miss$" cached_miss

# Servers in turn: a 404, then one that redirects to the file.
serve notfound
first=$SRV_URL
first_pid=$SRV_PID
serve redirect "$FIX/known_tree_stripped.debug"
prof two "DEBUGINFOD_URLS=$first $SRV_URL" "DEBUGINFOD_CACHE_PATH=$TMP/cache-two" --
unserve
SRV_PID=$first_pid unserve
named two
said two "1 downloaded, 0 from the cache(;|$)" downloaded_from_second

# --- continuous mode: the intervals after the file came are named --------------------
source "$ROOT/tests/server/lib.bash"
if why=$(server_install 2>&1); then
	trap 'server_stop; unserve' EXIT
	server_start "$TMP/upload.log" || true
	serve late "$FIX/known_tree_stripped.debug"
	env -u DEBUGINFOD_URLS "DEBUGINFOD_URLS=$SRV_URL" "DEBUGINFOD_CACHE_PATH=$TMP/cache-late" \
		"$CPROF" -F 199 --interval 1 --server "http://127.0.0.1:$SERVER_PORT" \
		-- "$TMP/bin/app" 5 >/dev/null 2>"$TMP/late.err"
	check late_exit_0 [ $? -eq 0 ]
	unserve
	server_stop
	check late_first_interval_unnamed server_check "$TMP/upload.log" no-function-in 0 hot_a
	check late_later_interval_named server_check "$TMP/upload.log" function-after 0 hot_a
else
	skip continuous_named_later "$why"
fi
finish
