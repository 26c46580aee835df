# Helpers for the upload tests: install and run the test server (server.cjs).
# Sourced after tests/lib.sh. The npm packages pinned in package-lock.json
# are installed into .output/test-server (never into the source tree), once,
# and again only when the lock file changes.
# shellcheck shell=bash

SERVER_SRC=$ROOT/tests/server
SERVER_DIR=$ROOT/.output/test-server
SERVER_PID=

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
	mkdir -p "$SERVER_DIR" || return 1
	if [ ! -d "$SERVER_DIR/node_modules" ] ||
		! cmp -s "$SERVER_SRC/package-lock.json" "$SERVER_DIR/package-lock.json"; then
		cp "$SERVER_SRC/package.json" "$SERVER_SRC/package-lock.json" "$SERVER_DIR/" || return 1
		if ! (cd "$SERVER_DIR" && npm ci --no-audit --no-fund --ignore-scripts) \
			>"$SERVER_DIR/npm.log" 2>&1; then
			echo "npm ci failed: $(grep -m 3 'npm error' "$SERVER_DIR/npm.log" | tr '\n' ' ')" >&2
			rm -rf "$SERVER_DIR/node_modules"
			return 1
		fi
	fi
	# The servers' .proto files, compiled by protoc into the descriptors the server loads.
	protos=$(cd "$SERVER_SRC/proto" && find . -name '*.proto' | sort)
	# shellcheck disable=SC2086 # one path per word
	if ! (cd "$SERVER_SRC/proto" && protoc --include_imports \
		--descriptor_set_out="$SERVER_DIR/api.binpb" $protos) 2>"$SERVER_DIR/protoc.log"; then
		echo "protoc failed: $(head -c 300 "$SERVER_DIR/protoc.log")" >&2
		return 1
	fi
}

# server_start LOG [--port N] [server options...]: starts it in the background;
# sets SERVER_PORT and SERVER_PID. Fails if it does not listen within 20 s.
server_start() {
	local log=$1 portfile i
	shift
	portfile=$(mktemp -u "$TMP/port.XXXXXX")
	NODE_PATH=$SERVER_DIR/node_modules node "$SERVER_SRC/server.cjs" \
		--descriptors "$SERVER_DIR/api.binpb" --log "$log" --port-file "$portfile" "$@" \
		2>>"$TMP/server.err" &
	SERVER_PID=$!
	for i in $(seq 200); do
		[ -s "$portfile" ] && break
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -s "$portfile" ]; then
		echo "the test server did not start: $(tail -n 3 "$TMP/server.err")" >&2
		return 1
	fi
	SERVER_PORT=$(cat "$portfile")
}

server_stop() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	SERVER_PID=
}

# server_check LOG CHECK [ARGS]: assertions on what the server received (check.cjs).
server_check() {
	node "$SERVER_SRC/check.cjs" "$@"
}
