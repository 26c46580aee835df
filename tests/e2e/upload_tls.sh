#!/usr/bin/env bash
# cprof --server https://: the TLS options (no BPF needed), then one-shot
# uploads of a known workload to the test server (tests/server) served over
# TLS by Node (OpenSSL), with certificates the test makes (certs.bash): each
# protocol over TLS 1.3 and over a TLS-1.2-only server, RSA and ECDSA
# certificates, the trust store from --ca-file and from SSL_CERT_FILE, a
# client certificate, --server-name for an IP URL; and the refusals (wrong
# name, unknown CA, expired, no client certificate, an http server), each
# with its cause in one line, exit 3 and the profile kept; a stalled
# handshake ended by the timeout and by Ctrl-C.
# tag: quick
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"
source "$ROOT/tests/server/certs.bash"
BG=
trap 'server_stop; [ -n "$BG" ] && kill "$BG" 2>/dev/null; rm -rf "$TMP"' EXIT

expect_fail tls_options_need_https 2 "need an https:// server URL" \
	--server http://h:1 --ca-file /etc/hostname
expect_fail cert_needs_key 2 "needs both --cert and --key" --server https://h:1 --cert /x
expect_fail ca_file_and_insecure 2 "cannot be combined" --server https://h:1 --ca-file /x \
	--insecure-skip-verify
expect_fail bad_server_name 2 "invalid server name" --server https://h:1 --server-name a/b
"$CPROF" --help >"$TMP/help"
for opt in --ca-file --cert --key --server-name --insecure-skip-verify SSL_CERT_FILE; do
	check "help_documents_$opt" grep -q -- "$opt" "$TMP/help"
done

C=$TMP/certs
upload_ready upload_tls && certs_ready "$C" || {
	finish
	exit
}

# Unreadable trust store: refused before profiling, one line.
expect_fail ca_file_unreadable 1 "no CA certificate could be read from $TMP/none" \
	--server https://localhost:1 --ca-file "$TMP/none" -d 1 -a
printf 'not a certificate\n' >"$TMP/junk.pem"
expect_fail ca_file_junk 1 "no CA certificate could be read from $TMP/junk.pem" \
	--server https://localhost:1 --ca-file "$TMP/junk.pem" -d 1 -a
expect_fail key_not_matching 1 "does not belong to the certificate" --server https://localhost:1 \
	--ca-file "$C/ca.pem" --cert "$C/client.pem" --key "$C/server.key" -d 1 -a

WORK=$FIX/known_tree
# tls_server NAME CERT [server options...]: the server over TLS with CERT.pem/.key.
tls_server() {
	server_stop
	LOG=$TMP/$1.log
	server_start "$LOG" --tls-cert "$C/$2.pem" --tls-key "$C/$2.key" "${@:3}" || return 1
	URL=https://localhost:$SERVER_PORT
}
# log_has FIELD VALUE: some line of the server's log has "FIELD":"VALUE".
log_has() { grep -q "\"$1\":\"$2\"" "$LOG"; }

# Each protocol over TLS 1.3, the CA from --ca-file.
for proto in parca pyroscope pyroscope-ingest; do
	tls_server "tls13_$proto" server
	run "tls13_$proto" --server "$URL" --server-protocol "$proto" --ca-file "$C/ca.pem"
	verdict "tls13_$proto" all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
		'log_has tls TLSv1.3' 'log_has sni localhost' 'server_check "$LOG" function hot_a' \
		'[ ! -e "$TMP/cwd/cprof.pb.gz" ]'
done

# Each protocol on a TLS-1.2-only server with an RSA certificate; the CA
# from SSL_CERT_FILE.
for proto in parca pyroscope pyroscope-ingest; do
	tls_server "tls12_rsa_$proto" server_rsa --tls-max-version 1.2
	SSL_CERT_FILE=$C/bundle.pem run "tls12_rsa_$proto" --server "$URL" --server-protocol "$proto"
	verdict "tls12_rsa_$proto" all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
		'log_has tls TLSv1.2'
done

# The refusals: the cause in one line, no retry, exit 3, the profile kept.
# refused NAME CERT PATTERN [cprof options...]
refused() {
	local name=$1 cert=$2 pattern=$3
	tls_server "$name" "$cert"
	run "$name" --server "$URL" --server-protocol parca -o "$TMP/$name.pb.gz" "${@:4}"
	verdict "$name" all '[ $rc = 3 ]' "grep -q -- \"$pattern\" \"\$TMP/$name.err\"" \
		'! grep -q "retrying" "$TMP/'"$name"'.err"' '[ -s "$TMP/'"$name"'.pb.gz" ]' \
		'server_check "$LOG" accepted 0'
}
refused wrong_name wrong_name \
	"certificate is for not-this-host.example, not localhost (--server-name" --ca-file "$C/ca.pem"
refused unknown_ca untrusted "not signed by a trusted CA (trusted: 1 CAs of $C/ca.pem" \
	--ca-file "$C/ca.pem"
refused expired expired "certificate of server localhost expired on" --ca-file "$C/ca.pem"
refused no_system_trust untrusted "not signed by a trusted CA"

# An IP address URL: the certificate names only localhost; --server-name says so.
tls_server ip_url name_only
URL=https://127.0.0.1:$SERVER_PORT
run ip_url --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" -o "$TMP/ip.pb.gz"
verdict ip_url_refused all '[ $rc = 3 ]' \
	'grep -q "certificate is for localhost, not 127.0.0.1" "$TMP/ip_url.err"'
run ip_url_named --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	--server-name localhost
verdict ip_url_server_name all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'log_has sni localhost'

# --insecure-skip-verify: accepted whatever the certificate, with a warning.
tls_server insecure untrusted
run insecure --server "$URL" --server-protocol parca --insecure-skip-verify
verdict insecure_skip_verify all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'grep -q "insecure-skip-verify: the server.s certificate is not checked" "$TMP/insecure.err"'

# Mutual TLS: refused without a client certificate, accepted with one.
tls_server mtls server --tls-client-ca "$C/ca.pem"
run mtls_none --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	-o "$TMP/mtls.pb.gz"
verdict client_cert_required all '[ $rc = 3 ]' \
	'grep -q "it wants a client certificate (--cert and --key)" "$TMP/mtls_none.err"' \
	'[ -s "$TMP/mtls.pb.gz" ]' 'server_check "$LOG" accepted 0'
run mtls --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	--cert "$C/client.pem" --key "$C/client.key"
verdict client_cert_accepted all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'grep -q "\"clientCert\":\"" "$LOG"'
# A certificate from a CA the server does not trust: Node closes after the
# handshake, with no alert; cprof says what that may mean.
run mtls_stranger --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	--cert "$C/stranger.pem" --key "$C/stranger.key" -o "$TMP/mtls.pb.gz"
verdict client_cert_refused all '[ $rc = 3 ]' \
	'grep -q "it may have refused cprof.s client certificate" "$TMP/mtls_stranger.err"'
# TLS 1.2: the server ends the handshake itself, with a less telling alert.
tls_server mtls12 server --tls-client-ca "$C/ca.pem" --tls-max-version 1.2
run mtls12_none --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	-o "$TMP/mtls12.pb.gz"
verdict client_cert_required_tls12 all '[ $rc = 3 ]' \
	'grep -q "it may want a client certificate (--cert and --key)" "$TMP/mtls12_none.err"'

# An http server behind an https URL: said so, retried as a failure that may pass.
server_stop
LOG=$TMP/plain.log
server_start "$LOG"
run plain --server "https://localhost:$SERVER_PORT" --server-protocol parca \
	--ca-file "$C/ca.pem" -o "$TMP/plain.pb.gz"
verdict http_server_behind_https all '[ $rc = 3 ]' \
	'grep -q "does not speak TLS as expected" "$TMP/plain.err"' '[ -s "$TMP/plain.pb.gz" ]'

# A handshake that never ends: the timeout ends it; so does Ctrl-C, at once.
server_stop
LOG=$TMP/stall.log
server_start "$LOG" --stall-handshake --tls-cert "$C/server.pem" --tls-key "$C/server.key"
URL=https://localhost:$SERVER_PORT
run stall --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" --timeout 0.5 \
	-o "$TMP/stall.pb.gz"
verdict stalled_handshake_times_out all '[ $rc = 3 ]' \
	'grep -q "the TLS handshake with server localhost timed out" "$TMP/stall.err"' \
	'[ -s "$TMP/stall.pb.gz" ]'
before=$(grep -c '"outcome":"stalled"' "$LOG")
(cd "$TMP/cwd" && exec "$CPROF" --server "$URL" --server-protocol parca --ca-file "$C/ca.pem" \
	--timeout 60 -d 1 -o "$TMP/stall_int.pb.gz" -- "$WORK" 1 >/dev/null 2>"$TMP/stall_int.err") &
pid=$!
# Once its ClientHello has reached the server (a new "stalled" line), interrupt.
for _ in $(seq 300); do
	[ "$(grep -c '"outcome":"stalled"' "$LOG")" -gt "$before" ] && break
	sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
verdict stall_int all '[ $rc = 3 ]' 'grep -q "failed: interrupted" "$TMP/stall_int.err"' \
	'[ -s "$TMP/stall_int.pb.gz" ]'

# Continuous mode, down then back over TLS: every interval arrives once, in order.
# Something to profile in every interval, whatever else the machine does.
"$WORK" 30 &
BG=$!
tls_server continuous server
PORT=$SERVER_PORT
"$CPROF" -a --interval 1 --server "$URL" --ca-file "$C/ca.pem" --spool-dir "$TMP/spool" \
	2>"$TMP/continuous.err" &
CP=$!
sleep 3
server_stop
sleep 3
server_start "$LOG" --port "$PORT" --tls-cert "$C/server.pem" --tls-key "$C/server.key" ||
	not_ok tls_server_restart "see $TMP/server.err"
sleep 0.5
kill -TERM "$CP"
wait "$CP"
rc=$?
sent=$(summary_count sent "$TMP/continuous.err")
spooled=$(summary_count spooled "$TMP/continuous.err")
verdict continuous all '[ $rc = 0 ]' '[ "${spooled:-0}" -gt 0 ]' '[ "${sent:-0}" -ge 5 ]' \
	'server_check "$LOG" intervals "${sent:-0}"' 'log_has tls TLSv1.3'

# A certificate cprof cannot trust: said once, the intervals kept in the spool.
tls_server continuous_untrusted untrusted
"$CPROF" -a --interval 1 -d 4 --server "$URL" --ca-file "$C/ca.pem" --spool-dir "$TMP/spool3" \
	2>"$TMP/continuous_untrusted.err"
rc=$?
left=$(summary_count 'still in the spool' "$TMP/continuous_untrusted.err")
verdict continuous_untrusted all '[ $rc = 3 ]' '[ "${left:-0}" -ge 3 ]' \
	'[ "$(grep -c "not signed by a trusted CA" "$TMP/continuous_untrusted.err")" = 1 ]' \
	'[ "$(find "$TMP/spool3" -name "*.batch" | wc -l)" = "${left:-0}" ]'
kill "$BG"
wait "$BG" 2>/dev/null
finish
