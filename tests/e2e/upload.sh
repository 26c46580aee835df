#!/usr/bin/env bash
# cprof --server, one-shot: the options (no BPF needed), then uploads of a
# known workload to the test server (tests/server: real Connect/gRPC-Web
# handlers from the servers' .proto files, real pprof decoding) over Parca's
# WriteRaw, Pyroscope's Push and /ingest, and the faults: a server that is
# down, slow, failing with 500 or "unavailable", refusing with 400, dropping
# the connection mid-response, or answering garbage. A failed upload must
# still leave the profile in a file, and exit 3.
# tag: quick
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"
trap 'server_stop; rm -rf "$TMP"' EXIT

expect_fail not_http_refused 2 "expected an http:// or https:// URL" --server ftp://parca:7070
expect_fail credentials_in_url_refused 2 "credentials in the URL are refused" \
	--server http://u:p@parca:7070
expect_fail server_options_need_server 2 "need --server" --interval 10s
expect_fail unknown_protocol 2 "unknown server protocol 'grpc'" --server http://h:1 --server-protocol grpc
expect_fail invalid_label 2 "invalid label '1x=y'" --server http://h:1 --label 1x=y
expect_fail reserved_label 2 "reserved" --server http://h:1 --label __x=y
expect_fail folded_with_server 2 "format folded" --server http://h:1 --format folded
expect_fail interval_with_output 2 "cannot be combined with -o" --server http://h:1 --interval 5s -o x
expect_fail interval_too_short 2 "at least 1s" --server http://h:1 --interval 500ms
expect_fail bad_spool_size 2 "invalid spool size" --server http://h:1 --spool-max-bytes 10x
CPROF_TOKEN=t CPROF_BASIC_AUTH=u:p expect_fail token_and_basic_auth 2 "use one" --server http://h:1
expect_line token_file_unreadable 1 \
	"cprof: cannot read the token file '$TMP/none': No such file or directory" \
	--server http://h:1 --token-file "$TMP/none"
"$CPROF" --help >"$TMP/help"
for opt in --server --server-protocol --interval --label --token-file --tenant --timeout \
	--spool-dir --spool-max-bytes CPROF_TOKEN CPROF_BASIC_AUTH "3 when"; do
	check "help_documents_$opt" grep -q -- "$opt" "$TMP/help"
done

upload_ready upload || {
	finish
	exit
}

WORK=$FIX/known_tree
fresh_server() {
	server_stop
	LOG=$TMP/$1.log
	server_start "$LOG" "${@:2}" || return 1
	URL=http://127.0.0.1:$SERVER_PORT
}

# One upload per protocol; the server decodes each and checks its pprof.
fresh_server parca
run parca --server "$URL" --server-protocol parca
verdict parca all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'server_check "$LOG" label service_name known_tree' \
	'server_check "$LOG" label __name__ process_cpu' 'server_check "$LOG" label hostname "$(uname -n)"' \
	'server_check "$LOG" label kernel_release "$(uname -r)"' 'server_check "$LOG" function hot_a' \
	'[ ! -e "$TMP/cwd/cprof.pb.gz" ]'

fresh_server pyroscope
CPROF_TOKEN=tok123 run pyroscope --server "$URL" --server-protocol pyroscope --tenant team-a \
	--label env=e2e
verdict pyroscope all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'server_check "$LOG" field authorization "Bearer tok123"' \
	'server_check "$LOG" field tenant team-a' 'server_check "$LOG" label env e2e' \
	'server_check "$LOG" function hot_b'

fresh_server ingest
printf 'from-a-file\n' >"$TMP/token"
run ingest --server "$URL" --server-protocol pyroscope-ingest --token-file "$TMP/token" \
	-o "$TMP/ingest.pb.gz"
verdict ingest all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'server_check "$LOG" field authorization "Bearer from-a-file"' \
	'server_check "$LOG" function hot_a' '[ -s "$TMP/ingest.pb.gz" ]'

# auto: the probe finds which API the server answers, and -v says so.
fresh_server auto_pyroscope --only pyroscope
CPROF_BASIC_AUTH=user:pw run auto_pyroscope --server "$URL" -v
verdict auto_pyroscope all '[ $rc = 0 ]' 'grep -q "using protocol pyroscope$" "$TMP/auto_pyroscope.err"' \
	'server_check "$LOG" accepted 1' 'server_check "$LOG" field authorization "Basic dXNlcjpwdw=="'
fresh_server auto_parca --only parca
run auto_parca --server "$URL" -v
verdict auto_parca all '[ $rc = 0 ]' 'grep -q "using protocol parca$" "$TMP/auto_parca.err"' \
	'server_check "$LOG" accepted 1'

# Down at start: retried, then saved to the default file; exit 3.
server_stop
run down --server "http://127.0.0.1:$SERVER_PORT"
verdict down all '[ $rc = 3 ]' 'grep -q "retrying in" "$TMP/down.err"' \
	'grep -q "the upload to .* failed: probing the server: connect to .*refused" "$TMP/down.err"' \
	'grep -q "wrote cprof.pb.gz" "$TMP/down.err"' \
	'[ "$(pprof_flat "$TMP/cwd/cprof.pb.gz" hot_a)" != 0 ]'
rm -f "$TMP/cwd/cprof.pb.gz"

# 500s then success: retried with backoff.
fresh_server fail500 --fail 2
run fail500 --server "$URL" --server-protocol pyroscope
verdict retry_after_500 all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'[ "$(server_check "$LOG" outcomes)" = "http-500,http-500,accepted" ]'
fresh_server unavailable --unavailable 1
run unavailable --server "$URL" --server-protocol parca
verdict retry_after_grpc_unavailable all '[ $rc = 0 ]' \
	'[ "$(server_check "$LOG" outcomes)" = "unavailable,accepted" ]' \
	'grep -q "UNAVAILABLE: injected outage" "$TMP/unavailable.err"'

# 400: not retried, the server's message printed, the profile saved, exit 3.
for proto in parca pyroscope pyroscope-ingest; do
	fresh_server "reject_$proto" --reject "label set not allowed here"
	run "reject_$proto" --server "$URL" --server-protocol "$proto" -o "$TMP/rejected.pb.gz"
	verdict "no_retry_on_refusal_$proto" all '[ $rc = 3 ]' 'server_check "$LOG" attempts 1' \
		'grep -q "refused the profile.*label set not allowed here" "$TMP/reject_$proto.err"' \
		'[ -s "$TMP/rejected.pb.gz" ]'
done

# Slow server: every try times out; exit 3 with the profile saved.
fresh_server slow --delay-ms 5000
run slow --server "$URL" --server-protocol pyroscope --timeout 0.5 -o "$TMP/slow.pb.gz"
verdict slow_server_times_out all '[ $rc = 3 ]' \
	'grep -q "no complete response within 500 ms" "$TMP/slow.err"' '[ -s "$TMP/slow.pb.gz" ]'

# Ctrl-C during a slow upload: the wait ends, the profile is saved, exit 3.
fresh_server interrupted --delay-ms 60000
(cd "$TMP/cwd" && exec "$CPROF" --server "$URL" --server-protocol parca --timeout 5 -d 1 -v \
	-o "$TMP/interrupted.pb.gz" -- "$WORK" 1 >/dev/null 2>"$TMP/interrupted.err") &
pid=$!
# Once the request is on its way (-v logs it), interrupt.
for _ in $(seq 200); do grep -q "http: POST" "$TMP/interrupted.err" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
verdict interrupted all '[ $rc = 3 ]' 'grep -q "failed: interrupted" "$TMP/interrupted.err"' \
	'[ -s "$TMP/interrupted.pb.gz" ]'

# A connection dropped mid-response is retried; garbage every time is a failure.
fresh_server drop --drop 1
run drop --server "$URL" --server-protocol parca
verdict dropped_connection_retried all '[ $rc = 0 ]' \
	'[ "$(server_check "$LOG" outcomes)" = "dropped,accepted" ]' \
	'grep -q "closed the connection mid-response" "$TMP/drop.err"'
fresh_server garbage --garbage 10
run garbage --server "$URL" --server-protocol pyroscope -o "$TMP/garbage.pb.gz"
verdict garbage_answer all '[ $rc = 3 ]' 'grep -q "malformed HTTP response" "$TMP/garbage.err"' \
	'server_check "$LOG" attempts 4' '[ -s "$TMP/garbage.pb.gz" ]'
finish
