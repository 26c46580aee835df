#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One-step build of cprof on a Debian 12 machine:
#
#   ./build.sh [MAKE ARGS...]     e.g. ./build.sh, ./build.sh demo, ./build.sh V=1,
#                                 ./build.sh test, ./build.sh check,
#                                 ./build.sh FLAVOR=asan unit-tests,
#                                 ./build.sh arm64 (.output/arm64/cprof)
#
# 1. Installs the Debian packages that are missing (apt-get update runs only
#    then): those the build needs, and when the make arguments ask for tests
#    (see wants_tests) those the tests need too. Not root: prints what to install.
# 2. Runs `make -j2 ARGS...`. The Makefile fetches and builds the pinned
#    third-party libraries itself (third_party/build.sh, via $(DEPS)/.stamp).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

# What building cprof (any flavor's binary, the fixtures) and the demo use, and why.
BUILD_PACKAGES=(
	make gcc libc6-dev binutils       # host compiler: asan deps; objcopy: fixtures
	g++                               # the C++ fixture of the unwinding test (cxx_nofp)
	musl-tools musl-dev               # musl-gcc: the static cprof binary
	linux-libc-dev                    # kernel UAPI headers (copied to deps/uapi)
	clang llvm                        # BPF object, fixtures, llvm-strip
	lld                               # links the arm64 cross build (make arm64)
	bpftool                           # skeleton generation
	dpkg-dev                          # dpkg-source: unpacks + patches the pinned sources
	patch                             # third_party/patches/: our small fixes on top
)
# What the tests add, and why.
TEST_PACKAGES=(
	libclang-rt-dev                   # ASan/UBSan runtime: FLAVOR=asan, FLAVOR=fuzz
	file elfutils golang-go           # `file`, eu-readelf, the pprof reader (go tool pprof)
	clang-format                      # the style gate (tests/gates/style.sh)
	qemu-system-x86 qemu-system-arm   # the kernel matrix (qemu/run)
	cpio                              # the matrix guests' initramfs
	libc6-dbg                         # glibc's separate debug files (symbolize_debug.sh)
	protobuf-compiler                 # protoc compiles the upload test server's .proto files
	openssl ca-certificates           # the https tests' certificates (certs.bash); a system CA bundle
	linux-perf                        # perf record: the reference of mappings.sh's build profile
	bpftrace time xz-utils            # the peers and workloads of bench/run (bench_smoke.sh)
	debuginfod                        # elfutils' server: symbolize_debuginfod.sh fetches from it
	chromium                          # flame graphs opened in a real browser (tests/e2e/flamegraph.sh)
	libxml2-utils                     # xmllint: the flame graphs are well-formed XML
	strace                            # bpf_object.sh: the bpf(2) commands cprof issues as on 4.18
)

# wants_tests MAKE-ARGS...: true when the arguments build or run tests: the
# goals test, check, test-unit, unit-tests and fuzzers, or the sanitizer flavors.
wants_tests() {
	local a
	for a in "$@"; do
		case "$a" in
		test | check | test-unit | unit-tests | fuzzers | FLAVOR=asan | FLAVOR=fuzz) return 0 ;;
		esac
	done
	return 1
}

installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

install_missing() {
	local missing=() p packages=("${BUILD_PACKAGES[@]}")
	if [[ $1 == tests ]]; then
		packages+=("${TEST_PACKAGES[@]}")
	fi
	for p in "${packages[@]}"; do
		installed "$p" || missing+=("$p")
	done
	# tests: the upload test server (tests/server) runs on Node.js. A node that
	# did not come from Debian (e.g. NodeSource's, which bundles npm) is used as is.
	if [[ $1 == tests ]] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
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

if wants_tests "$@"; then
	install_missing tests
else
	install_missing build
fi
exec make -j2 "$@"
