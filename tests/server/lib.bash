# Helpers for the upload tests: install and run the test server (server.cjs)
# and the test proxy (proxy.cjs). Sourced after tests/lib.sh; certs.bash makes
# the certificates of the https tests. The npm packages pinned in package-lock.json
# are installed into .output/test-server (never into the source tree), once,
# and again only when the lock file changes.
# shellcheck shell=bash

SERVER_SRC=$ROOT/tests/server
SERVER_DIR=$ROOT/.output/test-server
SERVER_PID=
PROXY_PID=

# server_install: 0 when the server can run; otherwise says why on stderr.
server_install() {
	local protos
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "node and npm are needed (./build.sh installs them)" >&2
		return 1
	fi
	if ! command -v protoc >/dev/null; then
		echo "protoc is needed (./build.sh installs protobuf-compiler)" >&2
		return 1
	fi
	npm_install "$SERVER_SRC" "$SERVER_DIR" || return 1
	# The servers' .proto files, compiled by protoc into the descriptors the server loads.
	protos=$(cd "$SERVER_SRC/proto" && find . -name '*.proto' | sort)
	# shellcheck disable=SC2086 # one path per word
	if ! (cd "$SERVER_SRC/proto" && protoc --include_imports \
		--descriptor_set_out="$SERVER_DIR/api.binpb" $protos) 2>"$SERVER_DIR/protoc.log"; then
		echo "protoc failed: $(head -c 300 "$SERVER_DIR/protoc.log")" >&2
		return 1
	fi
}

# _await_port PID PORTFILE WHAT ERRFILE: waits up to 20 s for PID to write
# its port to PORTFILE and prints it; fails, saying why, if it does not.
_await_port() {
	for _ in $(seq 200); do
		[ -s "$2" ] && break
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -s "$2" ]; then
		echo "the test $3 did not start: $(tail -n 3 "$4")" >&2
		return 1
	fi
	cat "$2"
}

# server_start LOG [--port N] [server options...]: starts it in the background;
# sets SERVER_PORT and SERVER_PID. Fails if it does not listen within 20 s.
# With --tls-cert and --tls-key (see server.cjs) it serves https.
server_start() {
	local log=$1 portfile
	shift
	portfile=$(mktemp -u "$TMP/port.XXXXXX")
	NODE_PATH=$SERVER_DIR/node_modules node "$SERVER_SRC/server.cjs" \
		--descriptors "$SERVER_DIR/api.binpb" --log "$log" --port-file "$portfile" "$@" \
		2>>"$TMP/server.err" &
	SERVER_PID=$!
	# shellcheck disable=SC2034 # for the tests
	SERVER_PORT=$(_await_port "$SERVER_PID" "$portfile" server "$TMP/server.err")
}

server_stop() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	SERVER_PID=
}

# proxy_start LOG [--require-auth USER:PASS] [--refuse]: starts the test
# proxy (proxy.cjs) in the background; sets PROXY_PORT and PROXY_PID. Fails
# if it does not listen within 20 s. It needs node, not server_install.
proxy_start() {
	local log=$1 portfile
	shift
	portfile=$(mktemp -u "$TMP/proxyport.XXXXXX")
	node "$SERVER_SRC/proxy.cjs" --log "$log" --port-file "$portfile" "$@" 2>>"$TMP/proxy.err" &
	PROXY_PID=$!
	# shellcheck disable=SC2034 # for the tests
	PROXY_PORT=$(_await_port "$PROXY_PID" "$portfile" proxy "$TMP/proxy.err")
}

proxy_stop() {
	if [ -n "$PROXY_PID" ]; then
		kill "$PROXY_PID" 2>/dev/null
		wait "$PROXY_PID" 2>/dev/null
	fi
	PROXY_PID=
}

# server_check LOG CHECK [ARGS]: assertions on what the server received (check.cjs).
server_check() {
	node "$SERVER_SRC/check.cjs" "$@"
}

# Helpers of the upload scripts (upload*.sh), which set TMP and run from it.

# upload_ready NAME: 0 when BPF profiling and the server can run here;
# otherwise prints "skip NAME - why" and fails.
upload_ready() {
	local why
	if ! why=$(can_bpf 2>&1); then
		skip "$1" "$why"
		return 1
	fi
	if ! why=$(server_install 2>&1); then
		skip "$1_server" "$why"
		return 1
	fi
}

# run NAME ARGS...: cprof ARGS -- known_tree 1, from an empty directory
# ($TMP/cwd), its output in $TMP/NAME.out and .err; sets rc.
run() {
	local name=$1
	shift
	mkdir -p "$TMP/cwd"
	(cd "$TMP/cwd" && "$CPROF" "$@" -- "$FIX/known_tree" 1 >"$TMP/$name.out" 2>"$TMP/$name.err")
	rc=$?
}

# verdict NAME CONDITION...: ok when the condition holds, else not ok with cprof's stderr.
verdict() {
	local name=$1
	shift
	if "$@" >"$TMP/why" 2>&1; then ok "$name"; else
		not_ok "$name" "$(head -c 300 "$TMP/why") | cprof: $(tail -c 400 "$TMP/$name.err" 2>/dev/null)"
	fi
}

# all CONDITION...: each condition (a string, evaluated) holds.
all() { for c in "$@"; do eval "$c" || return 1; done; }

# summary_count WORD FILE: the number before WORD in cprof's upload summary line.
summary_count() {
	grep 'cprof: upload to ' "$2" | grep -oE "[0-9]+ $1" | head -n 1 | cut -d' ' -f1
}
