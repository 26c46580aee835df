#!/usr/bin/env bash
# Issue 37, lines: an unprivileged user's programs whose DWARF line tables
# lie. Root's cprof reads the line table of every program the profile
# names (src/lib/dwarf_line.c), so the user runs three copies of the demo
# workload built with -g, each with a .debug_line of its own making:
#  - garbage: every byte of the section random;
#  - huge: a DWARF 5 unit whose directory count is 2^32 (entries of no bytes);
#  - bomb: a zlib-compressed section that inflates to 250 MB of zeros
#    (about 250 KB on disk), each 4 bytes a unit of length 0;
# and a fourth whose .debug_info (read for inlined functions,
# src/lib/dwarf_inline.c) is random bytes, its line table intact.
# The whole-system run must end near -d, under a memory bound, name the
# functions, and count in its summary what it could not read; a program
# of root's built with -g still gets its lines (the smallest tables are
# read first, so a huge one takes no one else's time).
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_lines "$why"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	skip attack_lines "python3 missing"
	exit 0
fi
if ! attacker_create; then
	skip attack_lines "cannot create the attacker user"
	finish
	exit
fi
DURATION=3
SLACK=3                    # a loaded 2-core machine: the run may end this long after -d
MAX_RSS_KB=$((400 * 1024)) # one bomb inflated at a time (250 MB), freed after

# patch ELF KIND: replaces ELF's .debug_line, or for info its .debug_info (appended at the end).
patch() {
	python3 - "$1" "$2" <<'PY'
import os, struct, sys, zlib
path, kind = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return shoff + i * shentsize
stroff, = struct.unpack_from("<Q", b, sh(shstrndx) + 0x18)
for i in range(shnum):
    name, = struct.unpack_from("<I", b, sh(i))
    if b[stroff + name:].split(b"\0", 1)[0] == (b".debug_info" if kind == "info" else b".debug_line"):
        break
else:
    sys.exit("no such section")
flags, = struct.unpack_from("<Q", b, sh(i) + 8)
if kind in ("garbage", "info"):
    data = os.urandom(64 * 1024)
elif kind == "huge":
    std = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    hdr = bytes([1, 1, 1, 0xfb, 14, 13]) + std + bytes([0]) + b"\xff\xff\xff\xff\x0f" + bytes([0, 0])
    body = struct.pack("<HBBI", 5, 8, 0, len(hdr)) + hdr + bytes([0, 1, 1])
    data = struct.pack("<I", len(body)) + body
else:
    size = 250 << 20
    data = struct.pack("<IIQQ", 1, 0, size, 1) + zlib.compress(bytes(size), 9)
    flags |= 0x800  # SHF_COMPRESSED
struct.pack_into("<QQQ", b, sh(i) + 8, flags, 0, 0)
struct.pack_into("<QQ", b, sh(i) + 0x18, len(b), len(data))
b += data
open(path, "wb").write(b)
PY
}

for kind in garbage huge bomb info; do
	gcc -O1 -g -o "$ATTACKER_DIR/$kind" "$ROOT/fixtures/src/known_tree.c" -lpthread || exit 1
	patch "$ATTACKER_DIR/$kind" "$kind" || exit 1
	chown "$ATTACKER:$ATTACKER" "$ATTACKER_DIR/$kind"
	as_attacker "./$kind" 30 >/dev/null &
	disown
done
"$FIX/known_tree" 30 >/dev/null &
root_prog=$!
sleep 0.5

pid=
RSS=0
t0=$(date +%s%N)
"$CPROF" --no-cache -a -d "$DURATION" -o "$TMP/all.pb.gz" 2>"$TMP/all.log" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ -n "$v" ] && [ "$v" -gt "$RSS" ] && RSS=$v
	sleep 0.1
done
wait "$pid"
RC=$?
WALL=$((($(date +%s%N) - t0) / 1000000))
pkill -KILL -u "$ATTACKER" 2>/dev/null
kill "$root_prog" 2>/dev/null
wait "$root_prog" 2>/dev/null
echo "# exit $RC, wall $WALL ms for -d $DURATION, peak RSS $((RSS / 1024)) MB"
grep "source lines" "$TMP/all.log" | sed 's/^/#   /'

check exit_zero [ "$RC" -eq 0 ]
check ends_near_d [ "$WALL" -le $(((DURATION + SLACK) * 1000)) ]
check rss_bounded [ "$RSS" -le "$MAX_RSS_KB" ]
go tool pprof -lines -top "$TMP/all.pb.gz" >"$TMP/all.lines" 2>/dev/null
check hostile_programs_named grep -qE ' hot_a( |$)' "$TMP/all.lines"
# The smallest tables are read first: root's program keeps its lines whatever the attacker's cost.
check root_program_lines grep -qE " hot_a $ROOT/fixtures/src/known_tree.c:[0-9]+\$" "$TMP/all.lines"
# The huge count is capped; the bomb is read last, its empty units unsupported, or cut off.
check huge_count_capped grep -qE "line table units skipped: .* capped [1-9]" "$TMP/all.log"
check bomb_counted grep -qE "cut off [1-9]|unsupported [1-9]" "$TMP/all.log"
# Random .debug_info: its first unit's length lies, counted; the program keeps its lines.
check random_debug_info_counted grep -qE "units skipped: malformed [1-9]" "$TMP/all.log"
check share_said grep -qE "^cprof: source lines: [0-9]+ of [1-9][0-9]* user samples" "$TMP/all.log"
finish
