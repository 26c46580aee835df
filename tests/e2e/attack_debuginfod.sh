#!/usr/bin/env bash
# Issue 32, item 9: with DEBUGINFOD_URLS set, every build ID a user runs is
# asked of the servers, and a server answers every one (an attacker's own
# server, or one it filled). The attacker runs copies of a stripped program,
# each with a build ID of its own; the server answers each with a valid
# debug file of that build ID padded to 3 MiB. Root's cprof must cap what
# a run asks for (--debuginfod-max-files) and downloads (twice
# --debuginfod-max-bytes), keep the cache under four times
# --debuginfod-max-bytes, count each cap in the summary, end near -d, and
# write nothing into a cache directory another user can write into.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_debuginfod "$why"
	exit 0
fi
if ! command -v node >/dev/null || ! command -v eu-readelf >/dev/null; then
	skip attack_debuginfod "needs node and eu-readelf"
	exit 0
fi
attacker_create || {
	skip attack_debuginfod "no attacker user"
	finish
	exit
}
N=6
orig=$(eu-readelf -n "$FIX/known_tree_stripped" | awk '/Build ID:/ { print $3 }')
for i in $(seq $N); do
	id=$(printf 'a%039d' "$i")
	perl -0777 -pe 'BEGIN { $o = pack("H*", shift); $n = pack("H*", shift) } s/\Q$o\E/$n/g' \
		"$orig" "$id" <"$FIX/known_tree_stripped" >"$ATTACKER_DIR/bin$i"
	chmod 0755 "$ATTACKER_DIR/bin$i"
done
cat >"$ATTACKER_DIR/attack.sh" <<'SH'
for f in ./bin*; do "$f" 3 & done
wait
SH

# serve PAD_MB: the server; sets SRV_URL, SRV_PID and SRV_LOG.
SERVES=0
serve() {
	local pf=$TMP/port.$SERVES
	SRV_LOG=$TMP/srv.$SERVES.log
	SERVES=$((SERVES + 1))
	node "$ROOT/tests/server/debuginfod.cjs" --mode any --log "$SRV_LOG" --port-file "$pf" \
		--file "$FIX/known_tree_stripped.debug" --file-build-id "$orig" --pad-mb "$1" \
		2>>"$TMP/srv.err" &
	SRV_PID=$!
	await_file "$pf"
	SRV_URL=http://127.0.0.1:$(cat "$pf")
}
# attack NAME CACHE [CPROF OPTIONS...]: root's cprof -d 3 with the attacker's
# programs as its command; NAME.err, NAME.ms (wall time), NAME.rc.
attack() {
	local name=$1 cache=$2 start
	shift 2
	start=$(date +%s%N)
	(cd "$ATTACKER_DIR" && env DEBUGINFOD_URLS="$SRV_URL" DEBUGINFOD_CACHE_PATH="$cache" \
		"$CPROF" -d 3 -o "$TMP/$name.pb.gz" "$@" -- setpriv --reuid="$ATTACKER_UID" \
		--regid="$ATTACKER_UID" --clear-groups --inh-caps=-all --bounding-set=-all -- \
		sh ./attack.sh >/dev/null 2>"$TMP/$name.err")
	echo $? >"$TMP/$name.rc"
	echo $((($(date +%s%N) - start) / 1000000)) >"$TMP/$name.ms"
}
# ends_near_d NAME: -d 3, then at most --debuginfod-timeout (5 s) for downloads, with room.
ends_near_d() {
	local ms
	ms=$(cat "$TMP/$1.ms")
	if [ "$(cat "$TMP/$1.rc")" = 0 ] && [ "$ms" -lt 11000 ]; then ok "$1_ends_near_d"; else
		not_ok "$1_ends_near_d" "exit $(cat "$TMP/$1.rc") after $ms ms: $(tail -2 "$TMP/$1.err")"
	fi
}
# asked: how many of the attacker's build IDs the server was asked for.
asked() {
	grep -sc '/buildid/a0000' "$SRV_LOG"
}
# debuginfod_line NAME: the summary's debuginfod line.
debuginfod_line() {
	grep -a '^cprof: debuginfod:' "$TMP/$1.err" | head -1
}

# --- bytes: a run downloads at most twice --debuginfod-max-bytes; the cache is pruned
serve 3
cache=$TMP/cache-bytes
mkdir -m 0700 "$cache" "$cache/00ff"
head -c $((20 << 20)) /dev/zero >"$cache/00ff/debuginfo"
touch -a -d '2 hours ago' "$cache/00ff/debuginfo"
attack bytes "$cache" --debuginfod-max-bytes 4M
kill "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
got=$(find "$cache" -name debuginfo -path '*/a0000*' -size +0 | wc -l)
size=$(du -sb "$cache" | cut -f1)
if [ "$got" -le 2 ]; then ok bytes_run_downloads_capped; else
	not_ok bytes_run_downloads_capped "$got files of 3 MiB downloaded with --debuginfod-max-bytes 4M (cap 8 MiB); $(debuginfod_line bytes)"
fi
if [ "$size" -le $((16 << 20)) ] && [ ! -e "$cache/00ff/debuginfo" ]; then ok bytes_cache_under_cap; else
	not_ok bytes_cache_under_cap "cache $size bytes (cap 16 MiB), the old 20 MiB file $([ -e "$cache/00ff/debuginfo" ] && echo kept || echo removed)"
fi
if debuginfod_line bytes | grep -q "over the run's byte cap" &&
	debuginfod_line bytes | grep -qE "[0-9]+ files? used longest ago removed"; then
	ok bytes_caps_counted
else
	not_ok bytes_caps_counted "$(debuginfod_line bytes)"
fi
ends_near_d bytes

# --- files: a run asks for at most --debuginfod-max-files ----------------------------
serve 0
attack files "$TMP/cache-files" --debuginfod-max-files 3
kill "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
n=$(asked)
if [ "$(cat "$TMP/files.rc")" = 0 ] && [ "$n" -le 3 ]; then ok files_run_asks_capped; else
	not_ok files_run_asks_capped "exit $(cat "$TMP/files.rc"), $n build IDs asked of the server: $(tail -1 "$TMP/files.err")"
fi
if debuginfod_line files | grep -qE "[0-9]+ over the run's file cap"; then ok files_cap_counted; else
	not_ok files_cap_counted "$(debuginfod_line files)"
fi
ends_near_d files

# --- a cache directory the attacker made: root writes nothing into it ------------------
serve 0
mkdir -m 0777 "$ATTACKER_DIR/cache"
chown "$ATTACKER:$ATTACKER" "$ATTACKER_DIR/cache"
attack shared "$ATTACKER_DIR/cache"
kill "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
written=$(find "$ATTACKER_DIR/cache" -mindepth 1 -user root | wc -l)
if [ "$written" -eq 0 ] && grep -q "debuginfod is off" "$TMP/shared.err"; then
	ok shared_cache_dir_refused
else
	not_ok shared_cache_dir_refused "$written files and directories of root's in the attacker's cache directory; $(grep -a debuginfod "$TMP/shared.err" | head -2)"
fi
ends_near_d shared
for run in bytes files shared; do
	echo "# $run: $(cat "$TMP/$run.ms") ms; $(debuginfod_line "$run")" >&2
done
finish
