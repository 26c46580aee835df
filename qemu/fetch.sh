#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Kernels and busybox for the QEMU guests of qemu/run, from Debian's archive:
#
#   qemu/fetch.sh [--refresh] resolve SUITE/ARCH...  print "SUITE/ARCH VERSION"
#   qemu/fetch.sh [--refresh] kernel SUITE/ARCH...   print "SUITE/ARCH VERSION VMLINUZ"
#   qemu/fetch.sh [--refresh] busybox ARCH...        print "ARCH BUSYBOX"
#
# ARCH is x86_64 or arm64. A kernel is the image that SUITE's
# linux-image-cloud-DEBARCH metapackage depends on; VERSION is its release
# (uname -r), e.g. 6.1.0-50-cloud-amd64. busybox comes from busybox-static in
# bookworm. Packages are downloaded with `apt-get download` through a private
# apt configuration in qemu/cache/apt (third_party/fetch.sh's, so the host's
# /etc/apt is only read), and apt checks them against its signed index. Only
# the vmlinuz and the busybox binary are kept, in qemu/cache/ (ignored by git),
# so a kernel is downloaded once. The lists are updated when they are missing,
# when a package is not found in them or cannot be downloaded any more (Debian
# replaced it), or with --refresh (to move on to the newest kernels).
set -euo pipefail

QEMU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$QEMU_DIR")
CACHE=$QEMU_DIR/cache
BUSYBOX_SUITE=bookworm

# private_apt, apt_update, debian_mirror
# shellcheck source=SCRIPTDIR/../third_party/fetch.sh
source "$ROOT/third_party/fetch.sh"

die() { printf 'qemu/fetch.sh: %s\n' "$*" >&2; exit 1; }
# Progress goes to stderr: stdout is the answer.
step() { printf '  %-8s %s\n' "$1" "$2" >&2; }

deb_arch() {
	case $1 in
	x86_64) echo amd64 ;;
	arm64) echo arm64 ;;
	*) die "unknown architecture '$1' (expected x86_64 or arm64)" ;;
	esac
}

# setup_apt SUITE...: the private apt tree for these suites, both architectures.
setup_apt() {
	local mirror suite sources=
	mirror=$(debian_mirror)
	for suite in "$@"; do
		sources+="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64,arm64]"
		sources+=" $mirror $suite main"$'\n'
	done
	private_apt "$CACHE/apt" "amd64 arm64" "$sources"
}

# show PACKAGE[:ARCH][/SUITE|=VERSION] FIELD: the field of apt-cache show in
# SHOWN, or fail.
show() {
	SHOWN=$(apt-cache "${APT_OPTS[@]}" show "$1" 2>/dev/null |
		awk -v f="$2" 'index($0, f ": ") == 1 { print substr($0, length(f) + 3); exit }')
	[[ -n $SHOWN ]]
}

# resolve_kernel SUITE ARCH: sets VERSION (uname -r), PKG and PVER: the package
# that holds vmlinuz, the image package or, since Debian's 6.17 packaging, the
# linux-binary-VERSION package it depends on, and its Debian version.
resolve_kernel() {
	local suite=$1 darch image binary
	darch=$(deb_arch "$2")
	show "linux-image-cloud-$darch:$darch/$suite" Depends || return 1
	# "linux-image-6.1.0-50-cloud-amd64 (= 6.1.176-1)"
	image=$(grep -oE 'linux-image-[0-9][^ ,]*' <<<"$SHOWN" | head -n1) || return 1
	[[ $SHOWN == *"$image (= "* ]] || return 1
	PVER=${SHOWN#*"$image (= "}
	PVER=${PVER%%)*}
	show "$image:$darch=$PVER" Depends || return 1
	binary=$(grep -oE 'linux-binary-[0-9][^ ,]*' <<<"$SHOWN" | head -n1 || true)
	VERSION=${image#linux-image-}
	PKG=${binary:-$image}
}

# retry CMD...: CMD, and once more after updating the lists if it failed.
retry() {
	"$@" && return 0
	[[ -z $APT_UPDATED ]] || return 1
	apt_update
	"$@"
}

# download PACKAGE:ARCH=VERSION: the .deb into $CACHE/dl (created afresh).
download() {
	rm -rf "$CACHE/dl"
	mkdir -p "$CACHE/dl"
	(cd "$CACHE/dl" && apt-get "${APT_OPTS[@]}" download "$1") >"$CACHE/dl.log" 2>&1
}

# extract REGEX OUT: the one file of the downloaded .deb whose path matches
# REGEX, to OUT; then drop the download.
extract() {
	local regex=$1 out=$2 deb path
	deb=$(echo "$CACHE"/dl/*.deb)
	path=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | grep -E "$regex" | head -n1) ||
		die "$(basename "$deb"): no file matching $regex"
	mkdir -p "$(dirname "$out")"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$path" >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$CACHE/dl" "$CACHE/dl.log"
}

# kernel SUITE ARCH: sets VERSION and VMLINUZ, downloading it if not cached.
kernel() {
	local suite=$1 arch=$2
	retry resolve_kernel "$suite" "$arch" ||
		die "no linux-image-cloud-$(deb_arch "$arch") in $suite (apt log: $APT_LOG)"
	VMLINUZ=$CACHE/kernels/$VERSION/vmlinuz
	[[ -f $VMLINUZ ]] && return
	step FETCH "$PKG $PVER"
	if ! download "$PKG:$(deb_arch "$arch")=$PVER"; then
		# Replaced in the archive since the lists were read: start over.
		[[ -z $APT_UPDATED ]] || die "apt-get download $PKG=$PVER failed; log: $CACHE/dl.log"
		apt_update
		kernel "$suite" "$arch"
		return
	fi
	echo "$PKG $PVER" >"$CACHE/package"
	extract '(/boot/vmlinuz-|/vmlinuz$)' "$VMLINUZ"
	mv "$CACHE/package" "$(dirname "$VMLINUZ")/package"
}

# busybox ARCH: sets BUSYBOX, the path of a static busybox for ARCH.
busybox() {
	local darch
	darch=$(deb_arch "$1")
	retry show "busybox-static:$darch/$BUSYBOX_SUITE" Version ||
		die "no busybox-static:$darch in $BUSYBOX_SUITE (apt log: $APT_LOG)"
	BUSYBOX=$CACHE/busybox/${SHOWN//:/_}_$darch/busybox
	[[ -x $BUSYBOX ]] && return
	step FETCH "busybox-static:$darch $SHOWN"
	download "busybox-static:$darch=$SHOWN" ||
		die "apt-get download busybox-static:$darch=$SHOWN failed; log: $CACHE/dl.log"
	extract '/bin/busybox$' "$BUSYBOX"
	chmod +x "$BUSYBOX"
}

main() {
	local refresh='' cmd arg suites
	if [[ ${1:-} == --refresh ]]; then
		refresh=1
		shift
	fi
	[[ $# -ge 2 ]] || die "usage: qemu/fetch.sh [--refresh] resolve|kernel SUITE/ARCH... | busybox ARCH..."
	cmd=$1
	shift

	mkdir -p "$CACHE"
	# Two runs must not download into the same place at once.
	exec 7>"$CACHE/.lock"
	flock 7
	# Every suite of the matrix, so that the lists serve all of its lines.
	suites=$({ awk '!/^#/ && NF { print $1 }' "$QEMU_DIR/kernels"; echo "$BUSYBOX_SUITE"; } | sort -u)
	# shellcheck disable=SC2086 # one word per suite
	setup_apt $suites
	[[ -z $refresh ]] || apt_update

	for arg in "$@"; do
		case $cmd in
		resolve)
			retry resolve_kernel "${arg%/*}" "${arg#*/}" ||
				die "no linux-image-cloud-$(deb_arch "${arg#*/}") in ${arg%/*} (apt log: $APT_LOG)"
			echo "$arg $VERSION"
			;;
		kernel)
			kernel "${arg%/*}" "${arg#*/}"
			echo "$arg $VERSION $VMLINUZ"
			;;
		busybox)
			busybox "$arg"
			echo "$arg $BUSYBOX"
			;;
		*) die "unknown command '$cmd' (expected resolve, kernel or busybox)" ;;
		esac
	done
}

main "$@"
