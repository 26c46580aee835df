#!/usr/bin/env bash
# Command-line behaviour that needs no BPF: help, version, and bad input
# (each a clear one-line message and the documented exit code).
# tag: quick
source "$(dirname "$0")/../lib.sh"

"$CPROF" --help >"$TMP/help" 2>&1
check help_exits_zero [ $? -eq 0 ]
for opt in --pid --all --frequency --duration --output --format --per-thread --include-idle \
	--no-children --map-size --top --verbose --version; do
	check "help_documents_$opt" grep -q -- "$opt" "$TMP/help"
done
"$CPROF" --version | grep -q '^cprof [0-9]' && ok version_format || not_ok version_format "$("$CPROF" --version)"

expect_fail unknown_option_is_usage_error 2 "unknown option '--bogus'" --bogus
# The option named as typed, short or long, last or not (getopt leaves optind past the end).
expect_line missing_argument 2 "cprof: option '-F' needs an argument" -F
expect_line missing_argument_o 2 "cprof: option '-o' needs an argument" -o
expect_line missing_argument_after_flag 2 "cprof: option '-d' needs an argument" --per-thread -d
expect_line missing_argument_long 2 "cprof: option '--frequency' needs an argument" --frequency
expect_line missing_argument_abbreviated 2 "cprof: option '--freq' needs an argument" --freq
expect_line missing_argument_server 2 "cprof: option '--server' needs an argument" -d 1 --server
expect_fail frequency_zero 2 "invalid frequency '0'" -F 0
expect_fail frequency_not_a_number 2 "invalid frequency 'abc'" -F abc
expect_line frequency_too_high 2 \
	"cprof: invalid frequency '100000': expected a number from 1 to 10000" -F 100000
# As perf does: a rate above kernel.perf_event_max_sample_rate is refused up front.
sysctl=/proc/sys/kernel/perf_event_max_sample_rate
if [ "$(id -u)" = 0 ] && old=$(cat "$sysctl" 2>/dev/null) && echo 500 >"$sysctl" 2>/dev/null; then
	expect_line frequency_above_kernel_limit 2 "cprof: -F 999 is above the kernel's limit of \
500 Hz (kernel.perf_event_max_sample_rate in $sysctl): lower -F or raise the limit" -F 999 -d 1
	echo "$old" >"$sysctl"
else
	skip frequency_above_kernel_limit "needs root to lower $sysctl for a moment"
fi
expect_fail duration_negative 2 "invalid duration" -d -1
expect_fail duration_garbage 2 "invalid duration" -d 5x
expect_fail pid_garbage 2 "invalid PID" -p 12ab
expect_fail pid_and_command 2 "cannot be combined" -p 1 -- true
expect_fail all_and_pid 2 "cannot be combined" -a -p 1
expect_fail unknown_format 2 "unknown format" --format json
expect_fail map_size_too_small 2 "invalid map size" --map-size 1

# These fail before any BPF is loaded, so they hold for any user.
expect_fail nonexistent_pid 1 "no such process: 2147483646" -p 2147483646 -d 1
expect_fail unwritable_output_dir 1 "cannot write output file '/nonexistent-dir/p.pb.gz'" \
	-o /nonexistent-dir/p.pb.gz -d 1
mkdir -p "$TMP/ro" && chmod 0555 "$TMP/ro"
# root ignores directory permissions; a read-only bind mount is refused even to root.
if [ "$(id -u)" = 0 ] && mount --bind -o ro "$TMP/ro" "$TMP/ro" 2>/dev/null &&
	mount -o remount,bind,ro "$TMP/ro" 2>/dev/null; then
	expect_fail readonly_output_dir 1 "Read-only file system" -o "$TMP/ro/p.pb.gz" -d 1
	umount "$TMP/ro"
elif [ "$(id -u)" != 0 ]; then
	expect_fail readonly_output_dir 1 "Permission denied" -o "$TMP/ro/p.pb.gz" -d 1
else
	skip readonly_output_dir "cannot make a read-only bind mount here"
fi

# Without privileges: one line naming what is missing, exit 1.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$CPROF" -d 1 -o /dev/null >"$TMP/out" 2>"$TMP/err")
	rc=$?
	if [ $rc -eq 1 ] && grep -q "needs root, or the capabilities CAP_BPF and CAP_PERFMON" "$TMP/err" &&
		[ "$(wc -l <"$TMP/err")" -eq 1 ]; then ok unprivileged_message; else
		not_ok unprivileged_message "exit $rc: $(cat "$TMP/err")"; fi
else
	skip unprivileged_message "needs root (to drop privileges) and setpriv"
fi
finish
