#!/usr/bin/env bash
# cprof's CFI reader (src/unwind/cfi_entries.c, cfi_program.c) against
# binutils as the oracle: for real files of both architectures, every row
# tests/tools/cfi_dump prints for .eh_frame (and for .debug_frame where a
# file has one) must be the row `readelf --debug-dump=frames-interp` prints,
# FDE by FDE. Both outputs are brought to one canonical form first (below),
# which keeps every rule and drops only what the two print differently.
# tag: quick
source "$(dirname "$0")/../lib.sh"

cd "$ROOT" || exit 1
unset MAKEFLAGS MAKELEVEL MFLAGS
# make's target is the relative path: an absolute one matches no rule.
DUMP=.output/$(uname -m)/cfi_dump
if ! make --no-print-directory -s "$DUMP" >"$TMP/build.log" 2>&1; then
	not_ok cfi_dump_built "$(tail -5 "$TMP/build.log")"
	exit 1
fi
if ! command -v readelf >/dev/null; then
	skip cfi_readelf "readelf not installed (binutils)"
	exit 0
fi

# Register names as readelf prints them (binutils dwarf.c, dwarf_regnames_x86_64
# and _aarch64) and as cfi_dump does, to DWARF numbers: the names of the two
# machines differ, so one table serves both. Both sides then write "rN", or
# "ra" for the CIE's return-address column (readelf's header calls it "ra"
# whatever its number), in cfi_dump's order: by number, the return address last.
REGS_AWK='
function names(  i, x) {
	split("rax rdx rcx rbx rsi rdi rbp rsp", x, " ")
	for (i = 1; i <= 8; i++) num[x[i]] = i - 1
	num["rip"] = 16
	for (i = 0; i <= 15; i++) num["xmm" i] = 17 + i
	for (i = 0; i <= 7; i++) { num["st" i] = 33 + i; num["mm" i] = 41 + i; num["k" i] = 118 + i }
	split("rflags es cs ss ds fs gs", x, " ")
	for (i = 1; i <= 7; i++) num[x[i]] = 48 + i
	num["fs.base"] = 58; num["gs.base"] = 59; num["tr"] = 62; num["ldtr"] = 63
	num["mxcsr"] = 64; num["fcw"] = 65; num["fsw"] = 66
	for (i = 16; i <= 31; i++) num["xmm" i] = 67 + i - 16
	for (i = 0; i <= 30; i++) num["x" i] = i
	num["sp"] = 31; num["elr"] = 33; num["vg"] = 46; num["ffr"] = 47
	for (i = 0; i <= 15; i++) num["p" i] = 48 + i
	for (i = 0; i <= 31; i++) { num["v" i] = 64 + i; num["z" i] = 96 + i }
}
BEGIN { names() }
# canon(NAME, RA): "ra", "rN", or "?NAME" for a name neither tool prints.
function canon(name, ra,  n) {
	if (name == "ra") return "ra"
	if (name in num) n = num[name]
	else if (name ~ /^r[0-9]+$/) n = substr(name, 2) + 0
	else return "?" name
	return n == ra ? "ra" : "r" n
}
# cfa(TEXT, RA): "exp", "none", or the register canonical, then the signed offset.
function cfa(t, ra) {
	if (t == "exp" || t == "none") return t
	if (!match(t, /[+-][0-9]+$/)) return "?" t
	return canon(substr(t, 1, RSTART - 1), ra) substr(t, RSTART)
}
# rule(TEXT, RA): the rule of a register, kept as is unless it names a register (DW_CFA_register).
function rule(t, ra,  c) {
	c = substr(t, 1, 1)
	if (t == "s" || t == "exp" || t == "vexp" || c == "c" || t ~ /^v[+-]/) return t
	return canon(t, ra)
}
# 16 hex digits, as a string: "00000000000011e4" must not compare as the number 11e4.
function pad(hex) { hex = "" hex; while (length(hex) < 16) hex = "0" hex; return hex }
'

# readelf -h -wN --debug-dump=frames-interp, one section, to canonical lines
#   BEGIN..END LOC CFA REG=RULE...
# and "MACHINE ROWS ROWS-WITH-EXPRESSIONS ROWS-PAST-THE-END" into the file stats.
# Its quirks: a DW_CFA_register rule prints as two words, "r1 (rdx)"; "u" is
# both no rule and DW_CFA_undefined (cfi_dump leaves both out); an FDE without
# instructions gets no rows (the CIE's initial row holds: it is printed under
# the CIE); several rows may share a LOC (the last holds); a row at or past the
# FDE's end covers nothing (cfi_dump clamps there).
READELF_AWK="$REGS_AWK"'
function flush(  i) {
	if (kind == "cie") {
		ciera[cie] = ra
		cierow[cie] = nrows ? content[nrows] : " none"
	} else if (kind == "fde" && begin < end) {
		if (!nrows && (fcie in cierow)) { loc[1] = begin; content[1] = cierow[fcie]; nrows = 1 }
		for (i = 1; i <= nrows; i++) {
			if (loc[i] >= end) { past++; continue }
			if (i < nrows && loc[i + 1] == loc[i]) continue
			print begin ".." end " " loc[i] content[i]
			rows++
			if (content[i] ~ /exp/) exprs++
		}
	}
	kind = ""; nrows = 0; header = 0
}
/^ *Machine:/ { machine = $NF }
/^Contents of the / { flush(); insec = ($4 == want); next }
!insec { next }
$4 == "CIE" {
	flush(); kind = "cie"; cie = $1; ra = -1
	for (i = 5; i <= NF; i++) if ($i ~ /^ra=/) ra = substr($i, 4) + 0
	next
}
$4 == "FDE" {
	flush(); kind = "fde"; fcie = substr($5, 5)
	split(substr($6, 4), r, /\.\./); begin = pad(r[1]); end = pad(r[2])
	ra = (fcie in ciera) ? ciera[fcie] : -1
	next
}
$1 == "LOC" && $2 == "CFA" {
	# The columns, and their order in a canonical line (an insertion sort, once per FDE).
	header = 1; ncols = NF - 2
	for (i = 1; i <= ncols; i++) {
		cn[i] = canon($(i + 2), ra)
		key = cn[i] == "ra" ? 1e9 : substr(cn[i], 2) + 0
		for (j = i - 1; j >= 1 && ckey[j] > key; j--) { ckey[j + 1] = ckey[j]; ord[j + 1] = ord[j] }
		ckey[j + 1] = key; ord[j + 1] = i
	}
	next
}
kind != "" && header && $1 ~ /^[0-9a-f]+$/ && $2 != "ZERO" {
	# Words, with "(name)" joined to the register number before it.
	nw = 0
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^\(.*\)$/ && nw) continue
		w[++nw] = $i
	}
	if (nw != ncols + 2) { print "?bad row: " $0; next }
	out = " " cfa(w[2], ra)
	for (j = 1; j <= ncols; j++) {
		i = ord[j]
		if (w[i + 2] != "u") out = out " " cn[i] "=" rule(w[i + 2], ra)
	}
	nrows++
	loc[nrows] = pad(w[1])
	content[nrows] = out
	next
}
END { flush(); print machine, rows + 0, exprs + 0, past + 0 > stats }
'

# cfi_dump's rows to the same lines, and "FDES SIGNED-ROWS" into the file stats.
# "ra_signed" (AArch64 pointer authentication) has no column in readelf's
# table: those rows go to the file ra_out instead, compared on their own.
DUMP_AWK="$REGS_AWK"'
/^FDE / { split($2, r, /\.\./); begin = r[1]; end = r[2]; fdes++; next }
/^bad entry/ { print "?" $0; next }
$2 == "error" { print begin ".." end " " $0; next }
{
	out = begin ".." end " " $1 " " cfa($2, -1)
	for (i = 3; i <= NF; i++) {
		if ($i == "ra_signed") { signed++; print begin ".." end " " $1 > ra_out; continue }
		eq = index($i, "=")
		name = substr($i, 1, eq - 1)
		if (!(name in cn)) cn[name] = canon(name, -1)
		out = out " " cn[name] "=" rule(substr($i, eq + 1), -1)
	}
	print out
}
END { print fdes + 0, signed + 0 > stats; printf "" > ra_out }
'

# The AArch64 return-address signing state, which readelf's table has no
# column for, from its raw listing (--debug-dump=frames): a row is signed when
# an odd number of DW_CFA_AARCH64_negate_ra_state ran before it, with
# remember/restore_state saving and restoring the state as they do the rules.
# Prints "BEGIN..END LOC" for each signed row, as DUMP_AWK does into ra_out.
RA_STATE_AWK="$REGS_AWK"'
function record() { if (loc < end) { if (!(loc in st)) at[++n] = loc; st[loc] = signed } }
function flush(  i) {
	if (kind == "cie") ciesigned[cie] = signed
	if (kind == "fde") {
		record()
		for (i = 1; i <= n; i++) if (st[at[i]]) print begin ".." end " " at[i]
	}
	kind = ""; n = 0; depth = 0; split("", st)
}
/^Contents of the / { flush(); insec = ($4 == want); next }
!insec { next }
$4 == "CIE" { flush(); kind = "cie"; cie = $1; signed = 0; next }
$4 == "FDE" {
	flush(); kind = "fde"
	split(substr($6, 4), r, /\.\./); begin = pad(r[1]); end = pad(r[2]); loc = begin
	signed = ciesigned[substr($5, 5)] + 0
	next
}
$1 == "DW_CFA_AARCH64_negate_ra_state" { signed = !signed; next }
$1 == "DW_CFA_remember_state" { stack[++depth] = signed; next }
$1 == "DW_CFA_restore_state" { if (depth) signed = stack[depth--]; next }
kind == "fde" && $1 ~ /^DW_CFA_advance_loc[124]?:$/ { record(); loc = pad($NF); next }
kind == "fde" && $1 == "DW_CFA_set_loc:" { record(); loc = pad($2); next }
END { flush() }
'

# The normalizers themselves, on readelf's quirks: the same rows as readelf
# and as cfi_dump print them must give the same lines, and the right ones.
cat >"$TMP/quirks.readelf" <<'EOF'
  Machine:                           Advanced Micro Devices X86-64
Contents of the .eh_frame section:


00000000 0000000000000014 00000000 CIE "zR" cf=1 df=-8 ra=16
   LOC           CFA      ra    
0000000000000000 rsp+8    c-8   

00000018 0000000000000014 0000001c FDE cie=00000000 pc=0000000000001000..0000000000001010

00000030 0000000000000024 00000034 FDE cie=00000000 pc=0000000000001010..0000000000001020
   LOC           CFA      rbx   r12   ra    xmm19 
0000000000001010 rsp+8    u     u     c-8   u     
0000000000001011 rsp+16   r1 (rdx) u     c-8   u     
0000000000001011 rsp+24   r1 (rdx) s     c-8   c-40  
0000000000001018 exp      u     v-16  r16 (rip) c-40  
0000000000001020 rsp+8    u     u     c-8   u     

00000058 ZERO terminator
EOF
cat >"$TMP/quirks.dump" <<'EOF'
FDE 0000000000001000..0000000000001010
0000000000001000 rsp+8 ra=c-8
FDE 0000000000001010..0000000000001020
0000000000001010 rsp+8 ra=c-8
0000000000001011 rsp+24 rbx=rdx r12=s r70=c-40 ra=c-8
0000000000001018 exp r12=v-16 r70=c-40 ra=ra
EOF
cat >"$TMP/quirks.want" <<'EOF'
0000000000001000..0000000000001010 0000000000001000 r7+8 ra=c-8
0000000000001010..0000000000001020 0000000000001010 r7+8 ra=c-8
0000000000001010..0000000000001020 0000000000001011 r7+24 r3=r1 r12=s r70=c-40 ra=c-8
0000000000001010..0000000000001020 0000000000001018 exp r12=v-16 r70=c-40 ra=ra
EOF
awk -v want=.eh_frame -v stats="$TMP/quirks.stats" "$READELF_AWK" "$TMP/quirks.readelf" >"$TMP/quirks.re"
awk -v stats=/dev/null -v ra_out=/dev/null "$DUMP_AWK" "$TMP/quirks.dump" >"$TMP/quirks.cd"
if cmp -s "$TMP/quirks.re" "$TMP/quirks.want" && cmp -s "$TMP/quirks.cd" "$TMP/quirks.want" &&
	[ "$(cat "$TMP/quirks.stats")" = "X86-64 4 1 1" ]; then
	ok normalizers_readelf_quirks
else
	not_ok normalizers_readelf_quirks "readelf: $(tr '\n' '|' <"$TMP/quirks.re") cfi_dump: $(tr '\n' '|' \
		<"$TMP/quirks.cd") stats: $(cat "$TMP/quirks.stats")"
fi

total_sections=0 total_fdes=0 total_rows=0
# show_diff NAME WANT GOT WHAT: fails NAME with the first differing lines.
show_diff() {
	not_ok "$1" "$4 differ (- readelf, + cfi_dump): $(diff "$2" "$3" | grep '^[<>]' | head -6 |
		sed 's/^</-/; s/^>/+/' | tr '\n' ' ')"
	diff "$2" "$3" | head -40 >&2
}

# compare NAME FILE SECTION: cfi_dump FILE SECTION against readelf, row by row.
compare() {
	local name=$1 file=$2 section=$3 out=$TMP/$1 machine rows exprs past fdes signed
	if ! "$DUMP" "$file" "$section" >"$out.dump" 2>"$out.dump.err"; then
		not_ok "$name" "cfi_dump $file $section failed: $(head -c 300 "$out.dump.err")"
		return
	fi
	readelf -h -wN --debug-dump=frames-interp "$file" 2>"$out.readelf.err" |
		awk -v want=".$section" -v stats="$out.re.stats" "$READELF_AWK" >"$out.want"
	awk -v stats="$out.cd.stats" -v ra_out="$out.ra.got" "$DUMP_AWK" "$out.dump" >"$out.got"
	read -r machine rows exprs past <"$out.re.stats"
	read -r fdes signed <"$out.cd.stats"
	if [ "$machine" = AArch64 ]; then
		readelf -wN --debug-dump=frames "$file" 2>/dev/null |
			awk -v want=".$section" "$RA_STATE_AWK" >"$out.ra.want"
	else
		cp "$out.ra.got" "$out.ra.want"
	fi
	if [ "$rows" -eq 0 ]; then
		not_ok "$name" "readelf printed no rows for .$section of $file"
	elif ! cmp -s "$out.want" "$out.got"; then
		show_diff "$name" "$out.want" "$out.got" "$file .$section: rows"
	elif ! cmp -s "$out.ra.want" "$out.ra.got"; then
		show_diff "$name" "$out.ra.want" "$out.ra.got" "$file .$section: rows with a signed return address"
	else
		ok "$name"
		total_sections=$((total_sections + 1)) total_fdes=$((total_fdes + fdes))
		total_rows=$((total_rows + rows))
	fi
	echo "$name: $file .$section ($machine): $fdes FDEs, $rows rows compared ($exprs with an" \
		"expression$([ "$signed" = 0 ] || echo ", $signed with a signed return address"))$(
		[ "$past" = 0 ] || echo "; $past readelf rows at or past an FDE end left out")" >&2
}

# compare_if NAME FILE SECTION: compare, or skip when FILE is not there.
compare_if() {
	if [ -e "$2" ]; then compare "$@"; else skip "$1" "${2:-file} not found"; fi
}

# built NAME CMD...: runs the build command; says skip (a missing toolchain) when it fails.
built() {
	local name=$1
	shift
	"$@" >"$TMP/$name.build" 2>&1 && return 0
	skip "$name" "could not build: $(head -c 300 "$TMP/$name.build" | tr '\n' ' ')"
	return 1
}

# cie_has NAME FILE SECTION PATTERN: the section's raw listing matches PATTERN
# (that the file really has what the test is about).
cie_has() {
	readelf -wN --debug-dump=frames "$2" 2>/dev/null |
		awk -v want=".$3" '/^Contents of the / { insec = ($4 == want) } insec' | grep -Eq "$4" &&
		return 0
	not_ok "$1" "$2 .$3 has no '$4': the build did not make what the test needs"
	return 1
}

# --- x86_64: the fixtures and this system's libraries -----------------------------
[ -d "$FIX" ] || skip fixtures "$FIX not built (make fixtures)"
for f in "$FIX"/*; do
	[ -f "$f" ] && [ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
	# Debug files keep .eh_frame's header with no bytes (NOBITS).
	readelf -SW "$f" 2>/dev/null | grep -Eq ' \.eh_frame +PROGBITS' || continue
	compare "fixture_$(basename "$f")" "$f" eh_frame
done
lib=/lib/x86_64-linux-gnu
compare_if libc "$lib/libc.so.6" eh_frame
compare_if libstdcxx "$lib/libstdc++.so.6" eh_frame
compare_if libm "$lib/libm.so.6" eh_frame
compare_if ld_linux "$lib/ld-linux-x86-64.so.2" eh_frame
compare_if python3 "$(readlink -f /usr/bin/python3.11)" eh_frame
# OpenSSL's perlasm: DW_CFA_def_cfa_expression and DW_CFA_expression by hand.
compare_if libcrypto "$lib/libcrypto.so.3" eh_frame
# libgcrypt's amd64 assembly: DW_CFA_def_cfa_register after an expression.
compare_if libgcrypt "$lib/libgcrypt.so.20" eh_frame

# --- built here: every opcode the assemblers write, and .debug_frame -------------
# Every DW_CFA opcode that readelf interprets: the directives GNU as and LLVM's
# assembler turn into opcodes (advance_loc/1/2/4 by the distances between
# them), the rest as raw bytes (.cfi_escape): def_cfa_expression, expression,
# val_expression, GNU_args_size, offset_extended_sf, def_cfa_sf,
# def_cfa_offset_sf, val_offset/_sf, GNU_negative_offset_extended,
# offset_extended; nested remember_state; a signal frame ("zRS", and "S"
# without 'z' in .debug_frame), a personality and LSDA ("zPLR"); on AArch64
# negate_ra_state and the B key ("zRB"). Both sections of each.
cat >"$TMP/ops_x86.S" <<'EOF'
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl	f_ops
f_ops:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.skip	100
	.cfi_offset %rbx, -24
	.cfi_offset 70, -40
	.cfi_offset %rip, -32
	.skip	1000
	.cfi_remember_state
	.cfi_restore %rbx
	.cfi_restore 70
	.cfi_restore %rip
	.cfi_undefined %r12
	.cfi_same_value %r13
	.cfi_register %r14, %r15
	nop
	.cfi_remember_state
	.cfi_def_cfa %rsp, 24
	.cfi_val_offset %r14, -48
	nop
	.cfi_restore_state
	nop
	.cfi_restore_state
	.skip	70000
	.cfi_escape 0x0f, 3, 0x77, 0x08, 0x06
	nop
	.cfi_escape 0x10, 0x03, 2, 0x76, 0x10
	.cfi_escape 0x16, 0x0c, 2, 0x77, 0x20
	.cfi_escape 0x2e, 0x10
	nop
	.cfi_def_cfa %rbp, 16
	.cfi_escape 0x11, 0x0d, 0x7d
	.cfi_escape 0x12, 0x06, 0x7e
	nop
	.cfi_escape 0x13, 0x7c
	.cfi_escape 0x15, 0x0e, 0x7f
	.cfi_escape 0x14, 0x0f, 0x02
	.cfi_escape 0x2f, 0x03, 0x02
	.cfi_escape 0x05, 0x0c, 0x03
	.cfi_escape 0x00
	nop
	.cfi_escape 0x0a, 0x0b
	ret
	.cfi_endproc

f_signal:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa %rsp, 160
	.cfi_offset %rip, -8
	nop
	.cfi_escape 0x0f, 4, 0x77, 0xa0, 0x01, 0x06
	nop
	ret
	.cfi_endproc

f_lsda:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.pers
	.cfi_lsda 0x1b, .Llsda
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pop	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc

pers:	ret
	.section .data.DW.ref.pers, "aw", @progbits
	.align	8
DW.ref.pers:
	.quad	pers
	.section .gcc_except_table, "a", @progbits
.Llsda:
	.byte	0xff, 0xff, 0x01, 0x00
EOF
cat >"$TMP/ops_a64.S" <<'EOF'
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl	f_ops
f_ops:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset w30, -24
	.cfi_offset w29, -32
	mov	x29, sp
	.cfi_def_cfa w29, 32
	.skip	400
	.cfi_offset x19, -8
	.cfi_offset d8, -16
	.cfi_remember_state
	.cfi_restore x19
	.cfi_restore d8
	.cfi_undefined x20
	.cfi_same_value x21
	.cfi_register x22, x23
	.cfi_negate_ra_state
	nop
	.cfi_remember_state
	.cfi_def_cfa sp, 48
	.cfi_escape 0x14, 22, 2
	nop
	.cfi_restore_state
	nop
	.cfi_restore_state
	.skip	300000
	.cfi_escape 0x0f, 3, 0x8f, 0x10, 0x06
	nop
	.cfi_escape 0x10, 19, 2, 0x8f, 0x08
	.cfi_escape 0x16, 20, 2, 0x8f, 0x18
	.cfi_escape 0x2e, 0x10
	nop
	.cfi_def_cfa x29, 32
	.cfi_escape 0x11, 21, 0x7e
	.cfi_escape 0x12, 29, 0x78
	nop
	.cfi_escape 0x13, 0x74
	.cfi_escape 0x15, 22, 0x7f
	.cfi_escape 0x2f, 23, 0x04
	.cfi_escape 0x05, 24, 0x06
	ldp	x29, x30, [sp], #32
	.cfi_restore w30
	.cfi_restore w29
	.cfi_def_cfa sp, 0
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc

f_bkey:
	.cfi_startproc
	.cfi_b_key_frame
	pacibsp
	.cfi_negate_ra_state
	str	x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset w30, -16
	ldr	x30, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_restore w30
	autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc

f_signal:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa sp, 608
	.cfi_offset x30, -8
	nop
	ret
	.cfi_endproc
EOF
# Compiled C: saved registers, a frame pointer, a variable-length array, a big frame.
cat >"$TMP/frames.c" <<'EOF'
volatile int sink;
__attribute__((noinline)) int leaf(int a) { return a * 3 + sink; }
__attribute__((noinline)) int saves(int a, int b, int c, int d)
{
	int x = leaf(a), y = leaf(b), z = leaf(c), w = leaf(d);
	return leaf(x + y) + leaf(z + w) + x * y * z * w;
}
__attribute__((noinline)) int vla(int n)
{
	char buf[n + 1];
	for (int i = 0; i <= n; i++)
		buf[i] = (char)leaf(i);
	return leaf(buf[n / 2]) + saves(n, n, n, n);
}
__attribute__((noinline)) int big(int n)
{
	volatile char buf[5000];
	buf[n] = 1;
	return buf[n / 2] + vla(n);
}
int main(int argc, char **argv) { (void)argv; return big(argc) & 1; }
EOF

x=$TMP/ops_x86
if built asm_x86 gcc -c "$x.S" -o "$x.o" && built asm_x86 gcc -nostdlib -static -Wl,-e,f_ops "$x.o" -o "$x"; then
	cie_has asm_x86_eh_frame "$x" eh_frame '"zPLR"' && cie_has asm_x86_eh_frame "$x" eh_frame '"zRS"' &&
		compare asm_x86_eh_frame "$x" eh_frame
	cie_has asm_x86_debug_frame "$x" debug_frame 'Augmentation: +"S"' &&
		compare asm_x86_debug_frame "$x" debug_frame
fi
# .debug_frame alone (no asynchronous unwind tables): CIE versions 1 (GNU as's
# default), 3 and 4 (address and segment sizes), and 64-bit lengths (clang).
c=$TMP/frames.c
for v in 1:-O2 3:-O0 4:-O2; do
	x=$TMP/gcc_debug_frame_v${v%%:*}
	built "${x##*/}" gcc -g "${v#*:}" -fno-asynchronous-unwind-tables -Wa,--gdwarf-cie-version="${v%%:*}" \
		"$c" -o "$x" && cie_has "${x##*/}" "$x" debug_frame "Version: +${v%%:*}\$" &&
		compare "${x##*/}" "$x" debug_frame
done
x=$TMP/clang_debug_frame_dwarf64
built "${x##*/}" clang -g -gdwarf-5 -gdwarf64 -O2 -fno-asynchronous-unwind-tables "$c" -o "$x" &&
	cie_has "${x##*/}" "$x" debug_frame '^0+ [0-9a-f]+ f{16} CIE' && compare "${x##*/}" "$x" debug_frame

# --- arm64 --------------------------------------------------------------------------
a64=(--target=aarch64-linux-gnu -march=armv8.3-a -ffreestanding)
x=$TMP/ops_a64
if built asm_a64 clang "${a64[@]}" -c "$x.S" -o "$x.o" && built asm_a64 ld.lld -static -e f_ops "$x.o" -o "$x"; then
	cie_has asm_a64_eh_frame "$x" eh_frame '"zRB"' && compare asm_a64_eh_frame "$x" eh_frame
	compare asm_a64_debug_frame "$x" debug_frame
fi
# a64_c NAME SECTION PATTERN CLANG-FLAGS...: frames.c for AArch64, linked bare (no
# C library); its SECTION must have PATTERN.
a64_c() {
	local name=$1 section=$2 pattern=$3 x=$TMP/$1
	shift 3
	built "$name" clang "${a64[@]}" "$@" -c "$c" -o "$x.o" &&
		built "$name" ld.lld -static -e main --unresolved-symbols=ignore-all "$x.o" -o "$x" &&
		cie_has "$name" "$x" "$section" "$pattern" && compare "$name" "$x" "$section"
}
a64_c a64_c_eh_frame_pac eh_frame '"zRB"' -O2 -funwind-tables -mbranch-protection=pac-ret+b-key
a64_c a64_c_debug_frame_pac debug_frame negate_ra_state -O2 -g -fno-unwind-tables \
	-fno-asynchronous-unwind-tables -mbranch-protection=pac-ret
a64_c a64_c_debug_frame_dwarf64 debug_frame '^0+ [0-9a-f]+ f{16} CIE' -O0 -g -gdwarf-5 -gdwarf64 \
	-fno-unwind-tables -fno-asynchronous-unwind-tables

# GCC's arm64 runtime libraries (Debian's libgcc-12-dev-arm64-cross, unpacked for
# the cross build: libgcc, libgcc_eh, libatomic, libgomp, the sanitizers' large
# C++ runtimes...), all their archives linked into one file, as nothing else
# here was compiled by GCC for arm64.
cross=$ROOT/third_party/src/libgcc-12-dev-arm64-cross/usr/lib/gcc-cross/aarch64-linux-gnu/12
x=$TMP/a64_libgcc_cross
if ! compgen -G "$cross/lib*.a" >/dev/null; then
	skip "${x##*/}" "no archives in $cross (./build.sh arm64 unpacks them)"
elif built "${x##*/}" ld.lld -m aarch64linux -static -e 0 --unresolved-symbols=ignore-all \
	--noinhibit-exec -z muldefs --whole-archive "$cross"/lib*.a -o "$x"; then
	compare "${x##*/}" "$x" eh_frame
fi
# cprof's own arm64 build (musl, clang) and what the QEMU guests run.
compare_if arm64_cprof "$ROOT/.output/arm64/cprof" eh_frame
for f in "$ROOT"/.output/arm64/fixtures/* "$ROOT/.output/arm64/toolchain/lib/libc.so"; do
	[ -f "$f" ] && readelf -SW "$f" 2>/dev/null | grep -Eq ' \.eh_frame +PROGBITS' || continue
	compare "arm64_$(basename "$f")" "$f" eh_frame
done

echo "total: $total_sections sections equal: $total_fdes FDEs, $total_rows rows" >&2
finish
