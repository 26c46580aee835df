#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One-step build of cprof on a Debian 12 machine:
#
#   ./build.sh [MAKE ARGS...]     e.g. ./build.sh, ./build.sh V=1,
#                                 ./build.sh FLAVOR=asan unit-tests, ./build.sh test,
#                                 ./build.sh arm64 (.output/arm64/cprof)
#
# 1. Installs the Debian packages the build and the tests need, only those
#    missing (apt-get update runs only then). Not root: prints what to install.
# 2. Runs `make -j2 ARGS...`. The Makefile fetches and builds the pinned
#    third-party libraries itself (third_party/build.sh, via $(DEPS)/.stamp).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

# What the build and test suite use, and why.
PACKAGES=(
	make gcc libc6-dev binutils       # host compiler: asan deps, fixtures
	musl-tools musl-dev               # musl-gcc: the static cprof binary
	linux-libc-dev                    # kernel UAPI headers (copied to deps/uapi)
	clang llvm libclang-rt-dev        # BPF object, ASan/UBSan build and runtime, llvm-strip
	lld                               # links the arm64 cross build (make arm64)
	bpftool                           # skeleton generation
	dpkg-dev                          # dpkg-source: unpacks + patches the pinned sources
	patch                             # third_party/patches/: our small fixes on top
	file elfutils golang-go           # tests: `file`, eu-readelf, the pprof reader
	clang-format                      # tests: the style gate (tests/e2e/style.sh)
	qemu-system-x86 qemu-system-arm   # tests: the kernel matrix (qemu/run)
	cpio                              # tests: the matrix guests' initramfs
	libc6-dbg                         # tests: glibc's separate debug files (symbolize_debug.sh)
	protobuf-compiler                 # tests: protoc compiles the upload test server's .proto files
)

installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

install_missing() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		installed "$p" || missing+=("$p")
	done
	# tests: the upload test server (tests/server) runs on Node.js. A node that
	# did not come from Debian (e.g. NodeSource's, which bundles npm) is used as is.
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		missing+=(nodejs npm)
	fi
	[[ ${#missing[@]} -eq 0 ]] && return 0

	if [[ $(id -u) -ne 0 ]]; then
		echo "build.sh: missing Debian packages: ${missing[*]}" >&2
		echo "build.sh: install them with: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	printf '  %-8s %s\n' INSTALL "${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# --no-install-recommends keeps it lean; what a recommendation would have
	# brought that we need (libclang-rt-dev, libc6-dev) is listed explicitly.
	local log=.output/apt-install.log
	mkdir -p .output
	if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
		>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		echo "build.sh: installing ${missing[*]} failed; full log: $log" >&2
		exit 1
	fi
}

install_missing
exec make -j2 "$@"
