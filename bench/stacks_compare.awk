# SPDX-License-Identifier: MIT
#
# bench/stacks: compares cprof's user stacks with perf's, both as folded
# stacks (cprof's --format folded; perf's through bench/stacks_fold_perf.awk):
#
#   awk -v comm=COMM [-v edges=FILE] -f stacks_compare.awk ALIASES RANGES CPROF PERF
#
# ALIASES: "NAME CANONICAL" lines, the other names of a function (same
# address in the same file: glibc's __memcpy_avx512_unaligned_erms is
# __memmove_avx512_unaligned_erms); each tool picks one of them its own way.
# RANGES: the functions of the files, named or not, from their unwind tables
# (.eh_frame): "F MODULE START END" for each FDE and "L MODULE OFFSET VADDR
# SIZE" for each PT_LOAD, numbers in decimal, the F lines of each MODULE
# sorted by START.
#
# Only samples of the process named COMM count, each line weighted by its
# count. Prints one line:
#
#   SAMPLES_CPROF SAMPLES_PERF ROOT%_CPROF ROOT%_PERF MAX_EDGE_DIFF EDGES_OVER_1 EDGES MAX_LEAF_DIFF
#
# and, with -v edges=FILE, every edge of weight >= 1% in either tool to FILE
# as "DIFF CPROF% PERF% CALLER -> CALLEE", largest difference first.
# MAX_LEAF_DIFF is the largest difference in the share of samples whose
# leaf (innermost user frame) is a function, over those of 1% or more: the
# leaf needs no unwinding, so this is how far the two runs' profiles differ
# anyway (the run-to-run noise), the floor under MAX_EDGE_DIFF.
#
# Frames (only user frames: kernel frames, "_[k]", are dropped) are compared
# by name: a version suffix (@@GLIBC_2.34) is dropped, an alias becomes its
# canonical name, a C++ name loses what only cprof prints of it (cxx_base).
# A frame no symbol named, "module+0xOFFSET", is an address, not a function
# (two samples in one unnamed function have different ones): it becomes
# "[module:0xSTART]", START the address of the function that holds it, from
# the FDE that covers it, or "[module]" when none does (or the module is not
# in RANGES). So stripped code (all of gzip, xz's and sqlite's internals)
# still compares function by function. Both tools print a caller's frame as
# its return address minus 1, inside the call, so no frame needs adjusting,
# and both print file offsets (perf's are relative to the mapping's start
# plus its file offset), which go through the PT_LOADs to the ELF addresses
# the FDEs use (they differ in non-PIE programs such as python3.11).
#
# A sample reaches a thread root when its outermost user frame (only that
# one is looked at) is where a thread's stack begins:
#   _start                   a program's entry (the executable's or ld.so's)
#   _dl_start_user           ld.so's code that runs the constructors
#   __libc_start_main*       glibc's start (also __libc_start_main_impl)
#   __libc_start_call_main   the frame below it
#   main                     when nothing is above it
#   start_thread, clone, clone3, thread_start   a thread's start
# and, in a stripped program, an unnamed outermost frame ("[module...]")
# whose callee is __libc_start_main* or _dl_start: that frame is _start, the
# only caller of those two. A stack that ends anywhere else was cut short.

# mawk has no strtonum.
function hex(s,    i, v) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}

function tohex(v,    s) {
	s = ""
	do {
		s = substr("0123456789abcdef", v % 16 + 1, 1) s
		v = int(v / 16)
	} while (v > 0)
	return "0x" s
}

# The start of the function of MODULE that holds ADDR, or -1: a binary
# search of its FDEs.
function fde_start(mod, addr,    lo, hi, mid) {
	lo = 1
	hi = nfde[mod]
	while (lo <= hi) {
		mid = int((lo + hi) / 2)
		if (addr < fstart[mod, mid])
			hi = mid - 1
		else if (addr >= fend[mod, mid])
			lo = mid + 1
		else
			return fstart[mod, mid]
	}
	return -1
}

# A file offset of MODULE as an ELF address, or -1.
function to_vaddr(mod, off,    i) {
	for (i = 1; i <= nload[mod]; i++)
		if (off >= loff[mod, i] && off < loff[mod, i] + lsize[mod, i])
			return off - loff[mod, i] + lvaddr[mod, i]
	return -1
}

function unnamed(f,    mod, a, st) {
	mod = f
	sub(/\+0x[0-9a-f]+$/, "", mod)
	a = to_vaddr(mod, hex(substr(f, length(mod) + 4)))
	st = a < 0 ? -1 : fde_start(mod, a)
	return st < 0 ? "[" mod "]" : "[" mod ":" tohex(st) "]"
}

# Where a demangled C++ name's own name begins: after its return type,
# which cprof prints for template functions ("void std::sort<...>(...)")
# and perf does not. That is after the last space outside brackets, not
# counting the spaces and brackets of an operator's own name (operator new,
# operator<< <char>, operator()).
function after_return_type(f,    i, c, depth, start, n) {
	depth = 0
	start = 1
	n = length(f)
	for (i = 1; i <= n; i++) {
		c = substr(f, i, 1)
		if (substr(f, i, 8) == "operator") {
			i += 8
			while (i <= n && index("<>=!+-*/%^&|~,[]()", substr(f, i, 1)))
				i++
			if (substr(f, i, 1) == " " && substr(f, i + 1, 1) ~ /[A-Za-z_<]/)
				i++
			i--
			continue
		}
		if (c ~ /[<({[]/)
			depth++
		else if (c ~ /[>)}\]]/)
			depth--
		else if (c == " " && depth == 0)
			start = i + 1
	}
	return substr(f, start)
}

# A demangled C++ name without its return type, parameters, qualifiers and
# clone suffixes: cprof prints them (void foo<int>(int) const [clone
# .isra.0]), perf does not (foo<int>). The last balanced "(...)" is cut,
# with what follows it, unless it is the name of operator() itself.
function cxx_base(f,    i, depth, c, base) {
	sub(/( \[clone [^]]*\])+$/, "", f)
	sub(/( (const|volatile)| ?&&?)+$/, "", f)
	if (f !~ /\)$/)
		return f
	depth = 0
	for (i = length(f); i > 0; i--) {
		c = substr(f, i, 1)
		if (c == ")")
			depth++
		else if (c == "(" && --depth == 0)
			break
	}
	base = substr(f, 1, i - 1)
	if (i <= 1 || base ~ /operator$/)
		return f
	return after_return_type(base)
}

function canon(f,    key) {
	key = f
	if (key in canon_of)
		return canon_of[key]
	sub(/@.*$/, "", f)
	if (f in alias)
		f = alias[f]
	if (f ~ /\+0x[0-9a-f]+$/)
		f = unnamed(f)
	else if (f ~ /[)&t]( \[clone [^]]*\])*$/)
		f = cxx_base(f)
	canon_of[key] = f
	return f
}

BEGIN {
	ROOTS = "^(_start|_dl_start_user|__libc_start_main.*|__libc_start_call_main|main|" \
		"start_thread|clone|clone3|thread_start)$"
}

function is_root(outer, callee) {
	if (outer ~ ROOTS)
		return 1
	return outer ~ /^\[.+\]$/ && outer != "[unknown]" && callee ~ /^(__libc_start_main.*|_dl_start)$/
}

FILENAME == ARGV[1] {
	alias[$1] = $2
	next
}

FILENAME == ARGV[2] && $1 == "F" {
	n = ++nfde[$2]
	fstart[$2, n] = $3
	fend[$2, n] = $4
	next
}

FILENAME == ARGV[2] && $1 == "L" {
	n = ++nload[$2]
	loff[$2, n] = $3
	lvaddr[$2, n] = $4
	lsize[$2, n] = $5
	next
}

FILENAME == ARGV[2] { next }

FNR == 1 { tool = (FILENAME == ARGV[3]) ? "cprof" : "perf" }

{
	n = $NF
	line = $0
	sub(/ [0-9]+$/, "", line)
	k = split(line, raw, ";")
	if (raw[1] != comm)
		next
	samples[tool] += n
	nu = 0
	for (i = 2; i <= k; i++)
		if (raw[i] !~ /_\[k\]$/)
			fr[++nu] = canon(raw[i])
	if (nu > 0 && is_root(fr[1], nu > 1 ? fr[2] : ""))
		rooted[tool] += n
	leaf = nu > 0 ? fr[nu] : "(no user frame)"
	lw[tool, leaf] += n
	leaves[leaf] = 1
	# Each edge once per sample, however often recursion repeats it.
	split("", seen)
	for (i = 1; i < nu; i++) {
		e = fr[i] " -> " fr[i + 1]
		if (!(e in seen)) {
			seen[e] = 1
			w[tool, e] += n
			all[e] = 1
		}
	}
}

function pct(t, e) { return samples[t] ? 100 * w[t, e] / samples[t] : 0 }

function leaf_diff(    l, c, p, d, worst) {
	worst = 0
	for (l in leaves) {
		c = samples["cprof"] ? 100 * lw["cprof", l] / samples["cprof"] : 0
		p = samples["perf"] ? 100 * lw["perf", l] / samples["perf"] : 0
		d = c > p ? c - p : p - c
		if ((c >= 1 || p >= 1) && d > worst)
			worst = d
	}
	return worst
}

END {
	worst = 0
	for (e in all) {
		c = pct("cprof", e)
		p = pct("perf", e)
		if (c < 1 && p < 1)
			continue
		d = c > p ? c - p : p - c
		considered++
		if (d > 1)
			over++
		if (d > worst)
			worst = d
		if (edges != "")
			printf "%.2f %.2f %.2f %s\n", d, c, p, e | ("sort -rn > " edges)
	}
	printf "%d %d %.1f %.1f %.1f %d %d %.1f\n", samples["cprof"], samples["perf"],
		samples["cprof"] ? 100 * rooted["cprof"] / samples["cprof"] : 0,
		samples["perf"] ? 100 * rooted["perf"] / samples["perf"] : 0, worst, over, considered,
		leaf_diff()
}
