#!/usr/bin/env bash
# Both architectures' binaries are single static files (make arm64 cross-builds
# the arm64 one); the QEMU matrix (qemu.sh) runs them.
source "$(dirname "$0")/../lib.sh"

# check_binary ARCH FILE-SAYS: .output/ARCH/cprof is a static ELF for that machine.
check_binary() {
	local bin=$ROOT/.output/$1/cprof
	if [ ! -x "$bin" ]; then
		not_ok "${1}_binary_built" "$bin missing (make FLAVOR=$1 cprof)"
		return
	fi
	check "${1}_binary_machine" bash -c "file -L '$bin' | grep -q '$2'"
	check "${1}_binary_static" bash -c "file -L '$bin' | grep -q 'statically linked'"
	check "${1}_binary_no_interpreter" bash -c "! llvm-readelf -l '$bin' | grep -q 'program interpreter'"
}

check_binary x86_64 'x86-64'
check_binary arm64 'ARM aarch64'
finish
