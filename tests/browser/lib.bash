# Helpers for the tests that open cprof's flame graphs in a real browser:
# Debian's chromium, headless, driven by puppeteer-core (flamegraph.cjs).
# Sourced after tests/lib.sh. The npm packages pinned in package-lock.json
# go to .output/test-browser (npm_install); puppeteer-core downloads no
# browser of its own.
# shellcheck shell=bash

BROWSER_SRC=$ROOT/tests/browser
BROWSER_DIR=$ROOT/.output/test-browser
CHROMIUM=

# browser_install: 0 when chromium can be driven here (sets CHROMIUM);
# otherwise says why on stderr.
browser_install() {
	if ! CHROMIUM=$(command -v chromium); then
		echo "chromium is needed (./build.sh test installs Debian's chromium)" >&2
		return 1
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "node and npm are needed (./build.sh installs them)" >&2
		return 1
	fi
	# Whether chromium runs at all here (a container without its libraries, say).
	if ! timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--disable-background-networking --dump-dom about:blank >"$TMP/chromium.out" 2>&1; then
		echo "chromium cannot run here: $(grep -v -e '^$' -e dbus "$TMP/chromium.out" | tail -n 2 | tr '\n' ' ')" >&2
		return 1
	fi
	npm_install "$BROWSER_SRC" "$BROWSER_DIR"
}

# browser_run NAME SVG SHOTS [flamegraph.cjs options...]: its check lines on stdout.
browser_run() {
	local name=$1 svg=$2 shots=$3
	shift 3
	NODE_PATH=$BROWSER_DIR/node_modules timeout 300 node "$BROWSER_SRC/flamegraph.cjs" \
		--chromium "$CHROMIUM" --svg "$svg" --shots "$shots" --name "$name" "$@"
}
