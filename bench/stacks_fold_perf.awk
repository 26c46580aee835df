# SPDX-License-Identifier: MIT
#
# bench/stacks: `perf script -F comm,tid,ip,sym,dso --no-inline` to folded
# stacks in cprof's own form (docs/profile.md, "Folded stacks"), so that one
# reader (bench/stacks_compare.awk) measures both tools alike:
#
#   COMM;ROOT;...;LEAF COUNT        one line per distinct stack, root first
#
# perf prints a sample as a header line "COMM TID" and then one line per
# frame, leaf first, "ADDR SYMBOL (DSO)", and a blank line. Frames become:
#   - kernel frames (addresses from 0xffff...):  SYMBOL_[k], as cprof writes them
#   - a user frame perf could not name, "[unknown] (/path/lib.so)":
#     lib.so+0xADDR, the form of cprof's fallback (module+0xOFFSET); perf's
#     ADDR is a file offset too (the address less the mapping's start, plus
#     the mapping's offset)
#   - "[unknown] ([unknown])", an address in no mapping: [unknown], as cprof
#   - perf's inline expansion, lines ending in "(inlined)", is skipped (cprof
#     does not expand inlined frames, and --no-inline should leave none)
# ";" in a name becomes ":", as in cprof's output. The sample's period is not
# used: both tools are compared in samples.
#
#   awk [-v dsos=FILE] -f stacks_fold_perf.awk SCRIPT_OUTPUT > FOLDED
#
# With dsos=FILE, the paths of the files user frames were in go to FILE, one
# a line (bench/stacks reads their symbol aliases).

# The DSO of a frame line: what the last " (...)" holds.
function dso_of(line,    i) {
	i = match(line, / \([^()]*\)$/)
	return i ? substr(line, i + 2, RLENGTH - 3) : ""
}

function base(path,    n, p) {
	n = split(path, p, "/")
	return p[n]
}

function flush(    stack, i) {
	if (comm == "")
		return
	stack = comm
	for (i = nfr; i >= 1; i--)
		stack = stack ";" fr[i]
	count[stack]++
	comm = ""
	nfr = 0
}

# A header: the comm (which may contain spaces) and the TID.
/^[^ \t]/ {
	flush()
	comm = $0
	sub(/[ \t]+[0-9]+[ \t]*$/, "", comm)
	gsub(/;/, ":", comm)
	next
}

/^[ \t]+[0-9a-f]+ / {
	line = $0
	sub(/^[ \t]+/, "", line)
	if (line ~ / \(inlined\)$/)
		next
	addr = line
	sub(/ .*/, "", addr)
	dso = dso_of(line)
	sym = substr(line, length(addr) + 2)
	if (dso != "")
		sym = substr(sym, 1, length(sym) - length(dso) - 3)
	if (length(addr) == 16 && addr ~ /^ffff/) {
		name = sym "_[k]"
	} else {
		if (dso ~ /^\//)
			files[dso] = 1
		if (sym != "[unknown]")
			name = sym
		else if (dso == "[unknown]" || dso == "")
			name = "[unknown]"
		else
			name = base(dso) "+0x" addr
	}
	gsub(/;/, ":", name)
	fr[++nfr] = name
	next
}

/^[ \t]*$/ { flush() }

END {
	flush()
	for (s in count)
		print s, count[s]
	if (dsos != "")
		for (f in files)
			print f > dsos
}
