#!/bin/busybox sh
# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# /init of the QEMU guests of qemu/run (packed by qemu/initramfs.sh with
# busybox, cprof, static fixtures and the dynamic dlopen fixture with musl's
# loader). It profiles the fixtures with cprof, sends what the host checks
# (qemu/check.sh) over the serial console, and powers off. Console protocol,
# one item per line:
#
#   @@cprof info KEY VALUE...       kernel, btf (size of /sys/kernel/btf/vmlinux),
#                                   rc, rc-exec, rc-dlopen, rc-as, rc-as-memlock
#                                   (cprof's exit statuses)
#   @@cprof begin NAME SHA256       a file, base64 encoded, up to
#   @@cprof end NAME                ... (profile, log, verbose, exec, exec-log,
#                                   dlopen, dlopen-log, as, as-log,
#                                   as-memlock-log, dmesg)
#   @@cprof done                    last line: nothing was cut off
#
# Kernel command line: cprof.seconds=N (length of the workload), cprof.mode=
#   btf       profile the fixtures, then the exec and dlopen cases
#   no-btf    the same with /sys/kernel/btf/vmlinux hidden
#   memlock   run cprof without CAP_SYS_RESOURCE under a 64 KiB RLIMIT_MEMLOCK
#             (it must refuse with a message naming the limit before 5.11)
#   probe     power off at once (qemu/run: does KVM boot a guest at all?)
# cprof.as=RELEASE (btf and no-btf): also profile the fixtures as on that
#   release (CPROF_KERNEL_AS), and run the memlock refusal so.

/bin/busybox --install -s /bin
export PATH=/bin

info() { echo "@@cprof info $*"; }

# emit NAME FILE: FILE as a checksummed base64 section.
emit() {
	echo "@@cprof begin $1 $(sha256sum <"$2" | cut -d' ' -f1)"
	base64 "$2"
	echo "@@cprof end $1"
}

# param NAME: the value of cprof.NAME= on the kernel command line.
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^cprof\.$1=//p"; }

# Power off only once the UART has sent everything: stty applies its setting
# with TCSADRAIN, which waits until the output queue is empty.
power_off() {
	stty "$(stty -g)"
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

mode=$(param mode)
seconds=$(param seconds)
as=$(param as)
if [ "$mode" = probe ]; then
	echo "@@cprof probe"
	power_off
fi
info kernel "$(uname -r)" "$(uname -m)"

if [ "$mode" = no-btf ]; then
	# What a kernel built without CONFIG_DEBUG_INFO_BTF looks like to libbpf.
	: >/tmp/empty
	mount --bind /tmp/empty /sys/kernel/btf/vmlinux
fi
if [ -e /sys/kernel/btf/vmlinux ]; then
	info btf "$(wc -c </sys/kernel/btf/vmlinux)"
else
	info btf absent
fi

# Far too low for cprof's maps on kernels before 5.11: cprof must raise it.
# shellcheck disable=SC3045 # busybox ash has ulimit -l
ulimit -l 64
if [ "$mode" = memlock ]; then
	drop_cap 24 cprof -a -d 1 -o /tmp/profile.pb.gz >/tmp/log 2>&1 # 24: CAP_SYS_RESOURCE
	rc=$?
else
	# The fixtures as children of one command: cprof must follow them (the
	# fork tracepoint); known_tree gives user stacks, syscall_heavy kernel
	# ones, nofp user stacks that only its CFI walks whole.
	cprof -F 499 -o /tmp/profile.pb.gz -- \
		sh -c "known_tree ${seconds:-3} & nofp ${seconds:-3} & syscall_heavy ${seconds:-3} >/dev/null; wait" \
		>/tmp/log 2>&1
	rc=$?
	# Processes that live 40 ms and come through exec, from the shell and
	# through a wrapper (busybox's env, itself exec'd by the shell's child,
	# execs brief): cprof must follow each exec to file brief's samples under
	# brief, with brief's own frames.
	# shellcheck disable=SC2016 # expanded by the profiled shell
	cprof -F 999 -o /tmp/exec.pb.gz -- \
		sh -c 'i=0; while [ $i -lt 6 ]; do env brief 40; brief 40; i=$((i + 1)); done' \
		>/tmp/exec-log 2>&1
	rc_exec=$?
	# The same, every user stack walked in user space from the copy each
	# perf sample carries: the way of kernels before 5.5, proven on these.
	# shellcheck disable=SC2016 # expanded by the profiled shell
	cprof --stack-copies -F 999 -o /tmp/copies.pb.gz -- \
		sh -c 'i=0; while [ $i -lt 6 ]; do env brief 40; brief 40; i=$((i + 1)); done' \
		>/tmp/copies-log 2>&1
	rc_copies=$?
	# A library loaded with dlopen and called at once (musl's dlopen: a
	# dynamic program under /lib/ld-musl-*.so.1): cprof must follow the new
	# mapping to name the library's frames.
	# shellcheck disable=SC2016 # expanded by the profiled shell
	cprof -F 999 -o /tmp/dlopen.pb.gz -- \
		sh -c 'i=0; while [ $i -lt 5 ]; do dlopen_call /lib/libplugin.so 40; i=$((i + 1)); done' \
		>/tmp/dlopen-log 2>&1
	rc_dlopen=$?
	# The whole system, sampled from launch (the head start: perf events
	# with rings, before the BPF program loads) while nofp runs: its user
	# stacks walked whole either way. -v says when the first sample was.
	# nofp outlives the profile: under TCG cprof's load takes seconds, and
	# a process gone before its first samples are read cannot be named.
	# --max-stack 1024: the deepest walk (on 5.10, the tail-called runs of
	# 35 frames) must pass this kernel's verifier.
	nofp 10 &
	nofp_pid=$!
	cprof -v -a -d 3 -F 999 --max-stack 1024 -o /tmp/system.pb.gz >/tmp/system-log 2>&1
	rc_system=$?
	kill "$nofp_pid" 2>/dev/null
	wait
	if [ -n "$as" ]; then
		# The first profile again as on an older release: the fallbacks it
		# forces (no batched map operations, user stacks walked from copies,
		# kernel names from kallsyms...) on a real kernel, with real
		# numbers; then the memlock refusal so, which must name the limit.
		CPROF_KERNEL_AS=$as cprof -F 499 -o /tmp/as.pb.gz -- \
			sh -c "known_tree ${seconds:-3} & nofp ${seconds:-3} & syscall_heavy ${seconds:-3} >/dev/null; wait" \
			>/tmp/as-log 2>&1
		rc_as=$?
		CPROF_KERNEL_AS=$as drop_cap 24 cprof -a -d 1 -o /tmp/as-memlock.pb.gz >/tmp/as-memlock-log 2>&1
		rc_as_memlock=$?
	fi
fi
# From here on the console carries only our lines; dmesg has all the kernel's.
dmesg -n 1
info rc "$rc"
if [ "$mode" != memlock ]; then
	info rc-exec "$rc_exec"
	info rc-copies "$rc_copies"
	info rc-dlopen "$rc_dlopen"
	info rc-system "$rc_system"
	if [ -n "$as" ]; then
		info rc-as "$rc_as"
		info rc-as-memlock "$rc_as_memlock"
	fi
fi
if [ "$rc" -ne 0 ] && [ "$mode" != memlock ]; then
	# libbpf's and the verifier's log, for the report.
	cprof -v -a -d 1 -o /tmp/verbose.pb.gz >/tmp/verbose 2>&1
	emit verbose /tmp/verbose
fi
emit log /tmp/log
# -v's libbpf log is long: the lines of cprof's own modules, and the summary.
[ -f /tmp/system-log ] && grep -v '^cprof: libbpf: ' /tmp/system-log >/tmp/system-log.short &&
	mv /tmp/system-log.short /tmp/system-log
[ -f /tmp/profile.pb.gz ] && emit profile /tmp/profile.pb.gz
for f in exec copies dlopen system as as-memlock; do
	[ -f "/tmp/$f-log" ] && emit "$f-log" "/tmp/$f-log"
	[ -f "/tmp/$f.pb.gz" ] && emit "$f" "/tmp/$f.pb.gz"
done
dmesg >/tmp/dmesg
emit dmesg /tmp/dmesg
echo "@@cprof done"
power_off
