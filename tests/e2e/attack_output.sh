#!/usr/bin/env bash
# The output file against an unprivileged local user (issue 32, items 1, 2
# and 10): what the attacker plants at the name root passes to -o (a link to
# a root-only file or to a block device, a FIFO, a link flipped in and out
# of existence) must neither replace the victim, nor block cprof, nor hand
# it the profile; the profile is written 0600. Also what must keep working:
# /dev/stdout, >(...), root's own links.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_output "$why"
	exit 0
fi
attacker_create 2>"$TMP/why" || {
	skip attack_output "$(cat "$TMP/why")"
	finish
	exit
}

# The victim: a root-only file with known content, in a directory only root enters.
mkdir -m 0700 "$TMP/root"
VICTIM=$TMP/root/victim
make_victim() {
	rm -f "$VICTIM"
	printf 'root secret: do not replace\n' >"$VICTIM"
	chmod 0600 "$VICTIM"
	VICTIM_SUM=$(sha256sum <"$VICTIM")
}
# Byte-identical, still 0600 and root's, still a regular file.
victim_intact() {
	[ -f "$VICTIM" ] && [ ! -L "$VICTIM" ] && [ "$(stat -c '%a %u' "$VICTIM")" = "600 0" ] &&
		[ "$(sha256sum <"$VICTIM")" = "$VICTIM_SUM" ]
}
make_victim

# A /tmp-like directory (sticky, world-writable) and a group-writable one the
# attacker shares with root (its group, as as_attacker runs with it).
mkdir -m 1777 "$TMP/sticky"
mkdir -m 0775 "$TMP/shared"
chgrp "$ATTACKER_UID" "$TMP/shared"

# run_cprof OUT [ARGS...]: a short profile of `true` written to OUT; its stderr in $TMP/err.
run_cprof() {
	local out=$1
	shift
	timeout -s KILL "${LIMIT:-30}" "$CPROF" "$@" -o "$out" -- true >"$TMP/out" 2>"$TMP/err"
}
# One line, naming the output and the link's owner.
refused_link() {
	[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "cannot write output file '$1'.*symbolic link owned by uid $ATTACKER_UID" "$TMP/err"
}

# --- 1. the attacker's link to a root-only file, at the output's name -----------------------
# symlink_case NAME DIR PROTECTED_SYMLINKS
symlink_case() {
	local name=$1 out=$2/prof.pb.gz rc
	rm -f "$out"
	as_attacker ln -s "$VICTIM" "$out"
	with_sysctl fs.protected_symlinks "$3" run_cprof "$out"
	rc=$?
	if ! victim_intact; then
		not_ok "$name" "the victim was replaced: $(stat -c '%a %U %s bytes' "$VICTIM" 2>&1), exit $rc"
		make_victim
	elif [ $rc -eq 0 ] || ! refused_link "$out"; then
		not_ok "$name" "exit $rc: $(head -c 300 "$TMP/err")"
	elif [ "$(readlink "$out")" != "$VICTIM" ]; then
		not_ok "$name" "the attacker's link was changed: $(ls -l "$out")"
	else
		ok "$name"
	fi
	rm -f "$out"
}
symlink_case link_to_victim_sticky_dir_protected_symlinks_0 "$TMP/sticky" 0
symlink_case link_to_victim_sticky_dir_protected_symlinks_1 "$TMP/sticky" 1
symlink_case link_to_victim_shared_dir_protected_symlinks_0 "$TMP/shared" 0
symlink_case link_to_victim_shared_dir_protected_symlinks_1 "$TMP/shared" 1

# The attacker's link as a directory on the path (d -> root's private
# directory, -o .../d/victim): the name is the operator's, the directory the
# attacker's choice. e9effb9 and main until now followed it and replaced the
# victim; root's own directory link is still followed.
as_attacker ln -s "$TMP/root" "$TMP/sticky/dir"
run_cprof "$TMP/sticky/dir/victim"
rc=$?
if ! victim_intact; then
	not_ok dir_link_on_path_refused "the victim was replaced: $(stat -c '%a %U %s bytes' "$VICTIM" 2>&1), exit $rc"
	make_victim
elif [ $rc -eq 0 ] || [ "$(wc -l <"$TMP/err")" -ne 1 ] ||
	! grep -q "cannot write output file '$TMP/sticky/dir/victim': a directory on its path, 'dir', is a symbolic link owned by uid $ATTACKER_UID" "$TMP/err"; then
	not_ok dir_link_on_path_refused "exit $rc: $(head -c 300 "$TMP/err")"
else
	ok dir_link_on_path_refused
fi
rm -f "$TMP/sticky/dir"
mkdir -m 0700 "$TMP/root/out"
ln -s "$TMP/root/out" "$TMP/sticky/rootdir"
run_cprof "$TMP/sticky/rootdir/own.pb.gz"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/root/out/own.pb.gz" ]; then ok own_dir_link_on_path_followed; else
	not_ok own_dir_link_on_path_followed "exit $rc: $(head -c 300 "$TMP/err")"; fi
rm -rf "$TMP/sticky/rootdir" "$TMP/root/out"

# Root's own link in a directory the attacker can rewrite may be swapped for
# the attacker's between looking and following: it is replaced, not followed.
ln -s "$VICTIM" "$TMP/shared/own.pb.gz"
run_cprof "$TMP/shared/own.pb.gz"
rc=$?
if victim_intact && [ $rc -eq 0 ] && [ -f "$TMP/shared/own.pb.gz" ] && [ ! -L "$TMP/shared/own.pb.gz" ]; then
	ok own_link_in_shared_dir_replaced_not_followed
else
	not_ok own_link_in_shared_dir_replaced_not_followed "exit $rc, victim $(victim_intact && echo intact || echo replaced), $(ls -l "$TMP/shared/own.pb.gz" 2>&1)"
	make_victim
fi

# --- 2. the attacker's link to a block device ----------------------------------------------
truncate -s 1M "$TMP/disk.img"
printf 'disk content' | dd of="$TMP/disk.img" conv=notrunc status=none
if dev=$(losetup --find --show "$TMP/disk.img" 2>"$TMP/why"); then
	before=$(sha256sum <"$dev")
	as_attacker ln -s "$dev" "$TMP/sticky/dev.pb.gz"
	with_sysctl fs.protected_symlinks 0 run_cprof "$TMP/sticky/dev.pb.gz"
	rc=$?
	after=$(sha256sum <"$dev")
	losetup -d "$dev"
	if [ "$before" != "$after" ]; then
		not_ok link_to_block_device_untouched "the profile was written over $dev (exit $rc)"
	elif [ $rc -eq 0 ] || ! refused_link "$TMP/sticky/dev.pb.gz"; then
		not_ok link_to_block_device_untouched "exit $rc: $(head -c 300 "$TMP/err")"
	else
		ok link_to_block_device_untouched
	fi
else
	skip link_to_block_device_untouched "no loop device: $(head -c 200 "$TMP/why")"
fi

# --- 3. the race: the name flipped between a file and a link to the victim ----------------
# With protected_symlinks=1 in a sticky directory, an open() through the
# attacker's link is refused; a resolving of the path by readlink() is not.
# The attacker swaps its file and its link with renameat2(RENAME_EXCHANGE),
# so the name is never absent, and makes the link again should root remove it.
case $(uname -m) in
x86_64) RENAMEAT2=316 ;;
aarch64) RENAMEAT2=276 ;;
*) RENAMEAT2="" ;;
esac
race() {
	local i rc bad="" runs=40 stop=$TMP/stop-flipper name=$TMP/sticky/race.pb.gz
	rm -f "$stop"
	as_attacker perl -e 'my ($v, $n, $stop, $nr) = @ARGV; my $f = "$n.file"; my $end = time + 120;
		while (time < $end && !-e $stop) {
			for (1..200) {
				next if $nr && syscall($nr, -100, $n, -100, $f, 2) == 0;
				# Not both there (root took the name): a file and a link again.
				unlink($f); open(my $h, ">", $f); close $h;
				symlink($v, $n); unlink($n) unless $nr;
			}
		}' "$VICTIM" "$name" "$stop" "$RENAMEAT2" &
	local flipper=$!
	sleep 0.2
	for ((i = 1; i <= runs; i++)); do
		run_cprof "$name"
		rc=$?
		if ! victim_intact; then
			bad="the victim was replaced in run $i of $runs (exit $rc)"
			break
		fi
		# A profile written there is root's (the attacker cannot move it): away with it.
		[ "$(stat -c %u "$name" 2>/dev/null)" = 0 ] && rm -f "$name"
	done
	touch "$stop"
	wait "$flipper"
	if [ -n "$bad" ]; then
		not_ok race_link_flipped_victim_intact "$bad"
		make_victim
	else
		ok race_link_flipped_victim_intact
	fi
}
with_sysctl fs.protected_symlinks 1 race
# Nothing of cprof's left beside the name.
leftover=$(find "$TMP/sticky" "$TMP/shared" -name '*.cprof-*' | head -3)
if [ -z "$leftover" ]; then ok no_temporary_files_left; else
	not_ok no_temporary_files_left "$leftover"; fi

# --- 4. a FIFO at the output's name ---------------------------------------------------------
# elapsed_run OUT ARGS...: run_cprof, its exit status in $rc and wall seconds in $secs.
elapsed_run() {
	local t0
	t0=$(date +%s.%N)
	run_cprof "$@"
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
# The attacker's, with no reader: refused at once, never waited on.
as_attacker mkfifo -m 0666 "$TMP/sticky/fifo.pb.gz"
LIMIT=10 elapsed_run "$TMP/sticky/fifo.pb.gz"
if [ $rc -ne 0 ] && [ $rc -ne 137 ] && awk -v s="$secs" 'BEGIN { exit !(s < 5) }' &&
	[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "FIFO owned by uid $ATTACKER_UID" "$TMP/err"; then
	ok attacker_fifo_refused_promptly
else
	not_ok attacker_fifo_refused_promptly "exit $rc after ${secs}s (137: killed after 10 s): $(head -c 300 "$TMP/err")"
fi
# The attacker's, with the attacker reading: it gets no byte of the profile.
as_attacker sh -c "exec timeout 8 cat '$TMP/sticky/fifo.pb.gz' >got" &
reader=$!
sleep 0.5
run_cprof "$TMP/sticky/fifo.pb.gz" -d 1
rc=$?
wait "$reader"
got=$(stat -c %s "$ATTACKER_DIR/got" 2>/dev/null || echo 0)
if [ "$got" -eq 0 ] && [ $rc -ne 0 ]; then ok attacker_fifo_reader_gets_nothing; else
	not_ok attacker_fifo_reader_gets_nothing "the attacker read $got bytes; exit $rc"; fi
# Root's own FIFO with no reader: a clear error at once, and SIGTERM is never swallowed.
mkfifo -m 0600 "$TMP/root/fifo"
# alive PID: running, not a zombie waiting to be reaped.
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
"$CPROF" -d 30 -o "$TMP/root/fifo" >/dev/null 2>"$TMP/err" &
pid=$!
sleep 1
# Unless it already ended (as it should: the FIFO is no wait).
alive "$pid" && kill -TERM "$pid"
for ((i = 0; i < 30; i++)); do alive "$pid" || break; sleep 0.1; done
if alive "$pid"; then
	not_ok own_fifo_no_reader_and_sigterm "still running 4 s after start, 3 s after SIGTERM: $(head -c 200 "$TMP/err")"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
else
	wait "$pid"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "FIFO that no process reads" "$TMP/err"; then
		ok own_fifo_no_reader_and_sigterm
	else
		not_ok own_fifo_no_reader_and_sigterm "exit $rc: $(head -c 300 "$TMP/err")"
	fi
fi

# --- 5. the profile is 0600, new or replacing a 0644 file -----------------------------------
mkdir "$TMP/mode"
run_cprof "$TMP/mode/new.pb.gz"
check profile_mode_0600_new [ "$(stat -c %a "$TMP/mode/new.pb.gz")" = 600 ]
touch "$TMP/mode/old.pb.gz" && chmod 0644 "$TMP/mode/old.pb.gz"
run_cprof "$TMP/mode/old.pb.gz"
check profile_mode_0600_replacing [ "$(stat -c %a "$TMP/mode/old.pb.gz")" = 600 ]

# --- what keeps working --------------------------------------------------------------------
# /dev/stdout, a link of root's in /dev to a descriptor: written through, never replaced.
"$CPROF" --format folded -o /dev/stdout -- true >"$TMP/stdout.folded" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ -L /dev/stdout ]; then ok dev_stdout_to_file; else
	not_ok dev_stdout_to_file "exit $rc: $(head -c 300 "$TMP/err")"; fi
# The shell's >(...): /dev/fd/N, a pipe.
"$CPROF" -o >(cat >"$TMP/procsub.pb.gz") -- true 2>"$TMP/err"
rc=$?
sleep 0.5
if [ $rc -eq 0 ] && gzip -t "$TMP/procsub.pb.gz" 2>/dev/null; then ok process_substitution; else
	not_ok process_substitution "exit $rc: $(head -c 300 "$TMP/err")"; fi
# Root's own link in root's own directory names the file replaced; the link stays.
printf 'old' >"$TMP/root/target.pb.gz"
ln -s target.pb.gz "$TMP/root/link.pb.gz"
run_cprof "$TMP/root/link.pb.gz"
rc=$?
if [ $rc -eq 0 ] && [ -L "$TMP/root/link.pb.gz" ] && gzip -t "$TMP/root/target.pb.gz" 2>/dev/null; then
	ok own_link_in_own_dir_written_through
else
	not_ok own_link_in_own_dir_written_through "exit $rc: $(head -c 300 "$TMP/err")"
fi
finish
