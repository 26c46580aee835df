#!/usr/bin/env bash
# Issue 37, inlined functions: at a user frame's address, the functions
# the compiler inlined there (DWARF .debug_info) are frames of their own:
# in pprof, further Lines of the frame's Location, innermost first, each
# with the line in its own code (`go tool pprof -raw` and -traces show
# the chain); in folded stacks and the flame graph, frames marked
# " (inlined)" after the symbol's, with --inlines. The summary says what
# share of samples have some; by default (and with --no-lines) frames are
# the symbols only.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip inlines "$why"
	exit 0
fi
if ! command -v go >/dev/null || ! command -v gcc >/dev/null; then
	skip inlines "go (the pprof reader) or gcc missing"
	exit 0
fi
# A chain of three static inline functions in chain(), and twice() inlined
# at two call sites of sites(); -O2 -g, as distributions build.
SRC=$TMP/inl.c
cat >"$SRC" <<'C'
#include <stdlib.h>
static inline __attribute__((always_inline)) unsigned leaf(unsigned x)
{
	for (int i = 0; i < 50; i++)
		x = x * 2654435761u + (x >> 13); /* LEAF */
	return x;
}
static inline __attribute__((always_inline)) unsigned mid(unsigned x)
{
	return leaf(x) ^ 7; /* MID */
}
static inline __attribute__((always_inline)) unsigned top(unsigned x)
{
	return mid(x) + 3; /* TOP */
}
__attribute__((noinline)) unsigned chain(unsigned x)
{
	return top(x); /* CHAIN */
}
static inline __attribute__((always_inline)) unsigned twice(unsigned x)
{
	for (int i = 0; i < 40; i++)
		x = x * 69069u + (x >> 7); /* TWICE */
	return x;
}
__attribute__((noinline)) unsigned sites(unsigned x)
{
	unsigned a = twice(x); /* SITE_A */
	return twice(a ^ 5); /* SITE_B */
}
int main(int argc, char **argv)
{
	double sec = argc > 1 ? atof(argv[1]) : 1;
	unsigned s = 0;

	for (long i = 0; i < (long)(sec * 2e6); i++)
		s += chain(s + i) + sites(s ^ i);
	return s == 1;
}
C
gcc -O2 -g -o "$TMP/inl" "$SRC"
line_of() { grep -n -m1 -F "/* $1 */" "$SRC" | cut -d: -f1; }

# --- pprof: one Location, several Lines, innermost first ----------------------------------
"$CPROF" -F 499 --inlines -o "$TMP/p.pb.gz" -- "$TMP/inl" 1 >/dev/null 2>"$TMP/p.err"
go tool pprof -raw "$TMP/p.pb.gz" 2>/dev/null >"$TMP/p.raw"
# The chain's Lines, each on its own line of -raw's Locations, in this order.
chain_re="M=1 leaf $SRC:$(line_of LEAF) s=0
 +mid $SRC:$(line_of MID) s=0
 +top $SRC:$(line_of TOP) s=0
 +chain $SRC:$(line_of CHAIN) s=0"
check pprof_chain_of_three grep -Pzq "${chain_re//$'\n'/\\n}" "$TMP/p.raw"
check pprof_inlined_at_first_site grep -Pzq \
	"M=1 twice $SRC:$(line_of TWICE) s=0\n +sites $SRC:$(line_of SITE_A) s=0" "$TMP/p.raw"
check pprof_inlined_at_second_site grep -Pzq \
	"M=1 twice $SRC:$(line_of TWICE) s=0\n +sites $SRC:$(line_of SITE_B) s=0" "$TMP/p.raw"
go tool pprof -traces "$TMP/p.pb.gz" 2>/dev/null >"$TMP/p.traces"
check traces_mark_inline grep -Pzq "leaf \(inline\)\n +mid \(inline\)\n +top \(inline\)\n +chain\n" \
	"$TMP/p.traces"
check summary_says_inlined_share \
	grep -qE "^cprof: source lines: .*; inlined functions in [1-9][0-9]* \([0-9.]+%\)" "$TMP/p.err"

# --- folded and the flame graph: frames of their own, marked ------------------------------
"$CPROF" -F 499 --inlines --format folded -o "$TMP/f.folded" -- "$TMP/inl" 1 >/dev/null 2>"$TMP/f.err"
check folded_chain grep -qE ';main;chain;top \(inlined\);mid \(inlined\);leaf \(inlined\) [0-9]+$' \
	"$TMP/f.folded"
check folded_two_sites_one_frame grep -qE ';main;sites;twice \(inlined\) [0-9]+$' "$TMP/f.folded"
check folded_summary_says_inlined grep -qE "inlined functions in [1-9]" "$TMP/f.err"
"$CPROF" -F 499 --inlines -o "$TMP/g.svg" -- "$TMP/inl" 1 >/dev/null 2>"$TMP/g.err"
check svg_marks_inlined grep -q 'leaf (inlined)' "$TMP/g.svg"

# --- off: by default, and --no-lines with --inlines --------------------------------------------------------
"$CPROF" -F 499 --format folded -o "$TMP/n.folded" -- "$TMP/inl" 1 >/dev/null \
	2>"$TMP/n.err"
check no_inlines_folded grep -qE ';main;chain [0-9]+$' "$TMP/n.folded"
check no_inlines_folded_none bash -c "! grep -q 'inlined' '$TMP/n.folded'"
check no_inlines_folded_looks_up_none bash -c "! grep -q 'source lines' '$TMP/n.err'"
"$CPROF" -F 499 -o "$TMP/n.pb.gz" -- "$TMP/inl" 1 >/dev/null 2>"$TMP/n2.err"
go tool pprof -raw "$TMP/n.pb.gz" 2>/dev/null >"$TMP/n.raw"
check no_inlines_pprof_symbol_line grep -qE "M=1 chain $SRC:$(line_of LEAF) s=0" "$TMP/n.raw"
check no_inlines_pprof_no_chain bash -c "! grep -qE '^ +mid ' '$TMP/n.raw'"
"$CPROF" -F 499 --inlines --no-lines -o "$TMP/l.pb.gz" -- "$TMP/inl" 1 >/dev/null 2>"$TMP/l.err"
go tool pprof -raw "$TMP/l.pb.gz" 2>/dev/null >"$TMP/l.raw"
check no_lines_no_inlines bash -c "! grep -qE '^ +mid ' '$TMP/l.raw'"
finish
