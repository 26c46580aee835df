#!/usr/bin/env bash
# The shipped binary is one static file that runs on a host with nothing else:
# checked in an empty chroot that has only /proc, /sys and the binary.
# tag: quick
source "$(dirname "$0")/../lib.sh"

check file_says_static bash -c "file -L '$CPROF' | grep -q 'statically linked'"
check no_interpreter bash -c "! readelf -l '$CPROF' | grep -q 'Requesting program interpreter'"

if ! why=$(can_bpf 2>&1); then
	skip empty_chroot "$why"
	exit 0
fi
root=$TMP/root
mkdir -p "$root/proc" "$root/sys" "$root/out"
cp "$CPROF" "$root/cprof"
if mount --bind /proc "$root/proc" && mount --rbind /sys "$root/sys"; then
	"$FIX/known_tree" 3 &
	bg=$!
	sleep 0.2
	chroot "$root" /cprof -p "$bg" -d 1 -F 199 -o /out/p.pb.gz 2>"$TMP/chroot.err"
	rc=$?
	umount -l "$root/sys"
	umount "$root/proc"
	wait "$bg"
	check empty_chroot_runs [ "$rc" -eq 0 ]
	check empty_chroot_profile go tool pprof -raw "$root/out/p.pb.gz"
	# The target's files live outside the chroot: they are found through /proc/PID/.
	go tool pprof -raw "$root/out/p.pb.gz" >"$TMP/chroot.raw" 2>&1
	check empty_chroot_symbolizes grep -q ' hot_a ' "$TMP/chroot.raw"
else
	skip empty_chroot "cannot bind-mount /proc and /sys here"
fi
finish
