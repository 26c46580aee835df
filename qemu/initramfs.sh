#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The initramfs of the QEMU guests of qemu/run, for one architecture:
#
#   qemu/initramfs.sh ARCH OUT        (ARCH: x86_64 or arm64)
#
# A gzip'd newc cpio holding /init (qemu/init.sh), a static busybox (Debian's
# busybox-static, from qemu/fetch.sh) for the shell and the tools init uses,
# and the static musl builds of cprof and the fixtures from .output/ARCH/
# (make FLAVOR=ARCH cprof guest-fixtures). cprof loses its DWARF on the way,
# as ./cprof does. The one dynamic fixture, dlopen_call (musl's dlopen needs a
# dynamic program), comes with the library it loads, /lib/libplugin.so, and
# musl's libc.so as the loader its PT_INTERP names. /dev/console comes from
# the kernel's built-in initramfs.
set -euo pipefail

QEMU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$QEMU_DIR")
FIXTURES=(known_tree syscall_heavy drop_cap brief dlopen_call nofp)

die() { printf 'qemu/initramfs.sh: %s\n' "$*" >&2; exit 1; }

main() {
	[[ $# -eq 2 ]] || die "usage: qemu/initramfs.sh ARCH OUT"
	local arch=$1 out=$2 build busybox stage f ldso
	build=$ROOT/.output/$arch
	for f in cprof "${FIXTURES[@]/#/fixtures/}" fixtures/libplugin.so toolchain/lib/libc.so; do
		[[ -x $build/$f ]] || die "$build/$f missing (make FLAVOR=$arch cprof guest-fixtures)"
	done
	ldso=$(llvm-readelf -l "$build/fixtures/dlopen_call" |
		sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
	[[ $ldso == /lib/ld-musl-* ]] || die "$build/fixtures/dlopen_call: interpreter '$ldso', not musl's"
	busybox=$("$QEMU_DIR/fetch.sh" busybox "$arch" | cut -d' ' -f2)

	stage=$out.root
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,dev,lib,proc,sys,tmp}
	install -m 755 "$QEMU_DIR/init.sh" "$stage/init"
	install -m 755 "$busybox" "$stage/bin/busybox"
	llvm-strip --strip-debug -o "$stage/bin/cprof" "$build/cprof"
	for f in "${FIXTURES[@]}"; do
		install -m 755 "$build/fixtures/$f" "$stage/bin/$f"
	done
	install -m 755 "$build/fixtures/libplugin.so" "$stage/lib/libplugin.so"
	install -m 755 "$build/toolchain/lib/libc.so" "$stage$ldso"
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}

main "$@"
