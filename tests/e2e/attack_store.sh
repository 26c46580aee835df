#!/usr/bin/env bash
# Issue 32, item 5: a store that a local user cannot poison. An attacker
# runs copies of root's program (nofp_gcc, root-owned, 0755) while root
# profiles them (as cprof -a would) into a store of root's, then root profiles
# its own program with the same store:
#  (a) the copy has hot_a renamed pwn_a (same length, same build ID and
#      size): root's profile names hot_a, never pwn_a;
#  (b) the copy's CIEs say CFA = SP+64 where it is SP+8: root's stacks still
#      reach main through work and mid;
#  (c) a program of 1.8M function symbols (74 MB as kept symbols), run by
#      the attacker and then by root: the store stays under its 64 MB cap,
#      the cap is said in the summary, and root's earlier entries survive.
# Main's cprof (keyed by build ID and size, capped only at start) fails all three.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/attacker.sh"

if ! why=$(can_bpf 2>&1); then
	skip attack_store "$why"
	exit 0
fi
if [ ! -e "$FIX/nofp_gcc" ] || ! command -v python3 >/dev/null || ! command -v gcc >/dev/null; then
	skip attack_store "$FIX/nofp_gcc not built (make fixtures), or no python3 or gcc"
	exit 0
fi
if ! attacker_create 2>"$TMP/attacker.err"; then
	skip attack_store "$(cat "$TMP/attacker.err")"
	finish
	exit 0
fi
CAP=$((64 << 20))
# Root's own program: a copy of root's, only root may write it.
mkdir -m 0755 "$TMP/root"
install -m 0755 "$FIX/nofp_gcc" "$TMP/root/nofp_gcc"

# attacker_copy NAME: nofp_gcc as the attacker's own file, $ATTACKER_DIR/NAME.
attacker_copy() {
	install -o "$ATTACKER" -g "$ATTACKER" -m 0755 "$FIX/nofp_gcc" "$ATTACKER_DIR/$1"
}

# under_attack STORE NAME PROGRAM: the attacker runs PROGRAM for 3 s while root's
# cprof profiles it (-d 2) into STORE; the profile in NAME.folded, the log in NAME.log.
# -p rather than -a: the store sees the same, and other users' work on a shared
# machine (other tests) does not slow it down.
under_attack() {
	local store=$1 name=$2 prog=$3 pid=""
	as_attacker "$prog" 3 &
	for _ in $(seq 50); do
		pid=$(pgrep -u "$ATTACKER" -n -f "^$prog") && break
		sleep 0.1
	done
	"$CPROF" -v -p "$pid" -d 2 -F 499 --cache-dir "$store" --format folded \
		-o "$TMP/$name.folded" 2>"$TMP/$name.log"
	wait
}

# genuine STORE NAME: root profiles its own program for 2 s with STORE.
genuine() {
	"$CPROF" -v -F 499 --cache-dir "$1" --format folded -o "$TMP/$2.folded" \
		-- "$TMP/root/nofp_gcc" 2 >/dev/null 2>"$TMP/$2.log"
}

# whole NAME: the share of samples under main;work;mid, the fixture's whole stack.
whole() {
	awk '{ n = $NF; total += n } /;main;work;mid;/ { hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$TMP/$1.folded"
}

# (a) A function renamed in the attacker's copy.
attacker_copy pwn
python3 - "$ATTACKER_DIR/pwn" <<'EOF'
import sys
b = open(sys.argv[1], 'rb').read()
assert b.count(b'\0hot_a\0') >= 1
open(sys.argv[1], 'wb').write(b.replace(b'\0hot_a\0', b'\0pwn_a\0'))
EOF
under_attack "$TMP/store_a" attack_a "$ATTACKER_DIR/pwn"
check names_attack_ran grep -q pwn_a "$TMP/attack_a.folded"
genuine "$TMP/store_a" genuine_a
check names_genuine_hot_a grep -q ';hot_a ' "$TMP/genuine_a.folded"
check names_genuine_never_pwn_a bash -c "! grep -q pwn_a '$TMP/genuine_a.folded'"

# (b) The CFA offset of the CIEs of the attacker's copy changed: SP+8 -> SP+64.
attacker_copy cfa
python3 - "$ATTACKER_DIR/cfa" <<'EOF'
import struct, sys
path = sys.argv[1]
b = bytearray(open(path, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
entsize, num, strndx = struct.unpack_from('<HHH', b, 0x3a)
sec = lambda i: struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * entsize)
names = sec(strndx)[4]
for i in range(num):
    s = sec(i)
    if b[names + s[0]:names + s[0] + 10] == b'.eh_frame\0':
        # Every CIE's initial instructions: DW_CFA_def_cfa rsp, 8.
        at = b.find(b'\x0c\x07\x08', s[4], s[4] + s[5])
        while at >= 0:
            b[at + 2] = 0x40
            at = b.find(b'\x0c\x07\x08', at + 3, s[4] + s[5])
open(path, 'wb').write(b)
EOF
under_attack "$TMP/store_b" attack_b "$ATTACKER_DIR/cfa"
genuine "$TMP/store_b" genuine_b
w=$(whole genuine_b)
echo "# root's samples under main;work;mid after the attack: $w%"
if within "$w" 97 5; then ok cfa_genuine_whole_stacks; else
	not_ok cfa_genuine_whole_stacks "under main;work;mid: $w% (97% without the attack)"; fi

# (c) 1.8M function symbols: 74 MB kept, past the 64 MB cap.
cat >"$TMP/huge.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
/* 2 MB of code that the symbols added below name a byte each. */
__asm__(".text\n.globl huge_base\n.type huge_base, %function\nhuge_base:\n"
	".fill 2000000, 1, 0xc3\n.size huge_base, 2000000\n");
static volatile unsigned long sink;
int main(int argc, char **argv)
{
	struct timespec ts;
	double end = 0, now;

	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
		end = end ? end : now + (argc > 1 ? atof(argv[1]) : 3);
	} while (now < end);
	return 0;
}
EOF
gcc -O2 -o "$TMP/root/huge" "$TMP/huge.c"
python3 - "$TMP/root/huge" 1800000 <<'EOF'
# N more function symbols in the ELF's .symtab, one a byte from huge_base.
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
entsize, num, strndx = struct.unpack_from('<HHH', b, 0x3a)
sec = lambda i: list(struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * entsize))
names = sec(strndx)[4]
idx = {bytes(b[names + sec(i)[0]:b.index(0, names + sec(i)[0])]): i for i in range(num)}
st, ss = idx[b'.symtab'], idx[b'.strtab']
S, T = sec(st), sec(ss)
syms = bytes(b[S[4]:S[4] + S[5]])
strs = bytearray(b[T[4]:T[4] + T[5]])
for o in range(0, len(syms), 24):
    nm, _, _, ndx, val, _ = struct.unpack_from('<IBBHQQ', syms, o)
    if strs[nm:strs.index(0, nm)] == b'huge_base':
        base, shndx = val, ndx
new = bytearray()
for i in range(n):
    new += struct.pack('<IBBHQQ', len(strs), 0x12, 0, shndx, base + i, 1)
    strs += b'h%07d\0' % i
def put(data):
    b.extend(b'\0' * (-len(b) % 8))
    b.extend(data)
    return len(b) - len(data)
T[4], T[5] = put(strs), len(strs)
S[4], S[5] = put(syms + new), len(syms) + len(new)
struct.pack_into('<IIQQQQIIQQ', b, shoff + ss * entsize, *T)
struct.pack_into('<IIQQQQIIQQ', b, shoff + st * entsize, *S)
open(path, 'wb').write(b)
EOF
install -o "$ATTACKER" -g "$ATTACKER" -m 0755 "$TMP/root/huge" "$ATTACKER_DIR/huge"
# store_bytes: the bytes of the store's files.
store_bytes() { find "$TMP/store_c" -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }'; }
genuine "$TMP/store_c" before_c
under_attack "$TMP/store_c" attack_c "$ATTACKER_DIR/huge"
check huge_attack_ran grep -q "huge: 18000[0-9]* function symbols" "$TMP/attack_c.log"
n=$(store_bytes)
echo "# the store after the attacker's run: $n bytes"
if [ "$n" -le "$CAP" ]; then ok huge_attacker_store_within_cap; else
	not_ok huge_attacker_store_within_cap "$n bytes in the store after the attacker's run"; fi
"$CPROF" -v -F 499 --cache-dir "$TMP/store_c" --format folded -o "$TMP/root_c.folded" \
	-- "$TMP/root/huge" 2 >/dev/null 2>"$TMP/root_c.err"
n=$(store_bytes)
echo "# the store after root's run: $n bytes"
if [ "$n" -le "$CAP" ]; then ok huge_root_store_within_cap; else
	not_ok huge_root_store_within_cap "$n bytes in the store after root's run"; fi
check huge_cap_in_summary grep -q "not kept for later runs: past the cache directory's size cap" \
	"$TMP/root_c.err"
genuine "$TMP/store_c" after_c
check huge_genuine_symbols_survive \
	grep -q "nofp_gcc: [0-9]* function symbols, read back from the store" "$TMP/after_c.log"
check huge_genuine_tables_survive bash -c "grep -q 'table store: [1-9][0-9]* read' '$TMP/after_c.log'"
finish
