#!/usr/bin/env bash
# cprof --server through an HTTP proxy (tests/server/proxy.cjs on loopback),
# chosen from the environment as curl does: https through a CONNECT tunnel
# (TLS end to end), http in absolute form, no_proxy going direct, the
# proxy's login from its URL, a proxy that refuses. Then the request options
# beside the URL: --basic-auth-file and --header.
# tag: quick
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/server/lib.bash"
source "$ROOT/tests/server/certs.bash"
trap 'server_stop; proxy_stop; rm -rf "$TMP"' EXIT
unset http_proxy https_proxy all_proxy no_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY

http_proxy=socks5://p:1 expect_fail socks_proxy_refused 1 \
	"bad proxy setting (http_proxy): only http:// proxies" --server http://h:1 -d 1 -a
expect_fail header_syntax 2 "expected 'Name: value'" --server http://h:1 --header nocolon
expect_fail header_own 1 "cannot set Authorization: use CPROF_TOKEN" --server http://h:1 \
	--header 'Authorization: Bearer x' -d 1 -a
expect_fail header_needs_server 2 "need --server" --header 'X-A: b'
printf 'u:p\n' >"$TMP/basic"
CPROF_TOKEN=t expect_fail basic_file_and_token 2 "use one" --server http://h:1 \
	--basic-auth-file "$TMP/basic"
expect_line basic_file_unreadable 1 \
	"cprof: cannot read the basic auth file '$TMP/none': No such file or directory" \
	--server http://h:1 --basic-auth-file "$TMP/none"

C=$TMP/certs
upload_ready upload_proxy && certs_ready "$C" || {
	finish
	exit
}

# in_log FILE STRING: the JSON log FILE has STRING.
in_log() { grep -qF -- "$2" "$1"; }
fresh() {
	server_stop
	proxy_stop
	LOG=$TMP/$1.log
	PLOG=$TMP/$1.proxy.log
	server_start "$LOG" "${@:3}" || return 1
	proxy_start "$PLOG" $2 || return 1
	PROXY=http://127.0.0.1:$PROXY_PORT
}

# https through CONNECT: the proxy sees only the tunnel; TLS reaches the server.
fresh connect "" --tls-cert "$C/server.pem" --tls-key "$C/server.key"
https_proxy=$PROXY run connect --server "https://localhost:$SERVER_PORT" \
	--server-protocol parca --ca-file "$C/ca.pem"
verdict https_through_connect all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'in_log "$LOG" "\"tls\":\"TLSv1.3\""' 'in_log "$PLOG" "\"method\":\"CONNECT\""' \
	'in_log "$PLOG" "\"target\":\"localhost:$SERVER_PORT\""'

# HTTPS_PROXY in capitals, with a login the proxy wants.
fresh login "--require-auth alice:s3cret" --tls-cert "$C/server.pem" --tls-key "$C/server.key"
HTTPS_PROXY=http://alice:s3cret@127.0.0.1:$PROXY_PORT run login \
	--server "https://localhost:$SERVER_PORT" --server-protocol parca --ca-file "$C/ca.pem"
verdict proxy_login all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'in_log "$PLOG" "Basic YWxpY2U6czNjcmV0"'
https_proxy=$PROXY run no_login --server "https://localhost:$SERVER_PORT" \
	--server-protocol parca --ca-file "$C/ca.pem" -o "$TMP/no_login.pb.gz"
verdict proxy_wants_login all '[ $rc = 3 ]' \
	'grep -q "the proxy (https_proxy) wants a login: give it in the proxy.s URL" "$TMP/no_login.err"' \
	'[ -s "$TMP/no_login.pb.gz" ]'

# http in absolute form, with the request's own headers kept.
fresh absolute ""
printf 'grafana:glc_token\n' >"$TMP/basic"
http_proxy=$PROXY run absolute --server "http://127.0.0.1:$SERVER_PORT" \
	--server-protocol pyroscope --basic-auth-file "$TMP/basic" --header 'X-Project: demo'
verdict http_absolute_form all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' \
	'in_log "$PLOG" "\"target\":\"http://127.0.0.1:$SERVER_PORT/"' \
	'server_check "$LOG" field authorization "Basic Z3JhZmFuYTpnbGNfdG9rZW4="'
verdict header_sent server_check "$LOG" field project demo

# no_proxy: straight to the server, the proxy never asked.
fresh bypass ""
http_proxy=$PROXY no_proxy=localhost,127.0.0.0/8 run bypass \
	--server "http://127.0.0.1:$SERVER_PORT" --server-protocol parca
verdict no_proxy_bypass all '[ $rc = 0 ]' 'server_check "$LOG" accepted 1' '[ ! -s "$PLOG" ]'

# A proxy that refuses: one line with its answer, exit 3, the profile kept.
fresh refuse "--refuse" --tls-cert "$C/server.pem" --tls-key "$C/server.key"
https_proxy=$PROXY run refuse --server "https://localhost:$SERVER_PORT" \
	--server-protocol parca --ca-file "$C/ca.pem" -o "$TMP/refuse.pb.gz"
verdict proxy_refuses all '[ $rc = 3 ]' \
	'grep -q "the proxy (https_proxy) refused the tunnel to localhost:$SERVER_PORT: HTTP 403" "$TMP/refuse.err"' \
	'[ -s "$TMP/refuse.pb.gz" ]' 'server_check "$LOG" accepted 0'
# A proxy that is not there: said so.
proxy_stop
https_proxy=$PROXY run no_proxy_there --server "https://localhost:$SERVER_PORT" \
	--server-protocol parca --ca-file "$C/ca.pem" --timeout 1 -o "$TMP/gone.pb.gz"
verdict proxy_down all '[ $rc = 3 ]' \
	'grep -q "connect to the proxy (https_proxy) 127.0.0.1:$PROXY_PORT" "$TMP/no_proxy_there.err"'
finish
