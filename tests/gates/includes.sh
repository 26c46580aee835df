#!/usr/bin/env bash
# The floors of src/ as a gate (docs/design.md, "Floors"): a folder
# includes only itself and the folders of lower floors, never one above
# (an include that runs back) nor another folder of its own floor
# (sideways); no folder and no file with its headers (x.c, x.h and
# x_internal.h as one)
# is part of an include cycle. Each offence is printed as file:line. The
# checker is first run on copies of the tree with a backward include, a
# sideways one and a cycle planted, each of which it must refuse.
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! command -v python3 >/dev/null; then
	not_ok includes_python3 "python3 missing"
	exit 1
fi

# check_tree DIR: the checker over DIR/src (and DIR/bpf for the headers
# shared with the BPF programs); offences on stderr, one a line; 1 if any.
check_tree() {
	python3 - "$1" "$ROOT/docs/design.md" <<'EOF'
import os, re, sys

root, design = sys.argv[1], sys.argv[2]
# The floors, from docs/design.md's table ("| 3 | `src/unwind/` | ..."):
# bpf/ and .output/ (what the Makefile generates) as bpf and gen, src/ as ".".
floor = {}
row = re.compile(r"^\| (\d+) \| `(bpf/|\.output/|src/(?:\w+/)?)` \|")
with open(design) as fh:
    for line in fh:
        m = row.match(line)
        if m:
            name = {"bpf/": "bpf", ".output/": "gen", "src/": "."}.get(m.group(2), m.group(2)[4:-1])
            floor[name] = int(m.group(1))
if not floor:
    sys.exit(f"{design}: no table of floors")
# What the Makefile generates (not in the tree): the BPF skeletons and
# objects belong to the sample stage that loads them; the rest are facts.
GENERATED = [(re.compile(r".*\.skel\.h$|.*\.bpf\.gz\.inc$"), "sample"),
             (re.compile(r"version\.h$|table_builder\.h$|symbol_loader\.h$|flamegraph_\w+\.inc$"),
              "gen")]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
src = os.path.join(root, "src")
bad = []


def folder_of(path):
    d = os.path.dirname(os.path.relpath(path, src))
    return d if d else "."


def resolve(including, name):
    """(folder, path or None) of an include, the compiler's search order."""
    for cand in (os.path.join(os.path.dirname(including), name), os.path.join(src, name)):
        if os.path.isfile(cand):
            return folder_of(cand), os.path.normpath(cand)
    if os.path.isfile(os.path.join(root, "bpf", name)):
        return "bpf", None
    for pattern, f in GENERATED:
        if pattern.match(name):
            return f, None
    return None, None


def module(rel):
    """x.c, x.h and x_internal.h (x's pieces share its state through it) are one module."""
    m = os.path.splitext(rel)[0]
    return m[:-len("_internal")] if m.endswith("_internal") else m


files = sorted(os.path.join(d, n) for d, _, ns in os.walk(src) for n in ns
               if n.endswith((".c", ".h")))
folders = {folder_of(f) for f in files}
for f in sorted(folders - set(floor)):
    bad.append(f"src/{f}/: a folder without a floor (add it to the table of docs/design.md)")
fedges, medges = {}, {}
for f in files:
    rel = os.path.relpath(f, root)
    a = folder_of(f)
    with open(f, errors="replace") as fh:
        for ln, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            where = f"{rel}:{ln}: #include \"{m.group(1)}\""
            b, path = resolve(f, m.group(1))
            if b is None:
                bad.append(f"{where}: not found in src/ or bpf/, nor made by the Makefile")
                continue
            if path:
                src_mod, dst_mod = module(rel), module(os.path.relpath(path, root))
                if src_mod != dst_mod:
                    medges.setdefault(src_mod, {}).setdefault(dst_mod, where)
            if a == b or a not in floor or b not in floor:
                continue
            fedges.setdefault(a, {}).setdefault(b, where)
            if floor[b] > floor[a]:
                bad.append(f"{where}: runs back, from {a}/ up to {b}/")
            elif floor[b] == floor[a]:
                bad.append(f"{where}: sideways, from {a}/ to {b}/ on the same floor")


def cycles(edges, what):
    """Tarjan's strongly connected components: each of more than one node is a cycle."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in out:
        # One shortest way round, from the first of the component back to it.
        start, prev, todo = comp[0], {}, [comp[0]]
        while todo and start not in prev:
            v = todo.pop(0)
            for w in sorted(edges.get(v, {})):
                if w in comp and w not in prev:
                    prev[w] = v
                    todo.append(w)
        way, w = [], start
        while True:
            way.append(edges[prev[w]][w])
            w = prev[w]
            if w == start:
                break
        bad.append(f"a cycle of {what}: " + "; ".join(reversed(way)))


cycles(fedges, "folders")
cycles(medges, "files")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# plant NAME FILE LINE TEXT: a copy of the tree with TEXT as FILE's line
# LINE; the checker must refuse it, naming FILE:LINE.
plant() {
	local name=$1 file=$2 line=$3 text=$4 tree=$TMP/$1 out
	mkdir -p "$tree/bpf"
	cp -r "$ROOT/src" "$tree/"
	cp "$ROOT"/bpf/*.h "$tree/bpf/"
	sed -i "${line}i $text" "$tree/$file"
	if out=$(check_tree "$tree" 2>&1); then
		not_ok "includes_refuses_$name" "the checker passed $file:$line: $text"
	elif ! grep -q "$file:$line:" <<<"$out"; then
		not_ok "includes_refuses_$name" "refused, but without naming $file:$line: $out"
	else
		ok "includes_refuses_$name"
		echo "includes_refuses_$name: $out" >&2
	fi
}

cd "$ROOT" || exit 1
plant backward src/lib/array.c 2 '#include "deliver/upload.h"'
plant sideways src/store/kept_image.c 2 '#include "net/url.h"'
plant generated_object src/lib/log.c 2 '#include "sampler.skel.h"'
plant file_cycle src/net/url.h 2 '#include "net/proxy.h"'
if out=$(check_tree "$ROOT" 2>&1); then
	ok includes_follow_the_floors
else
	echo "$out" >&2
	not_ok includes_follow_the_floors "$(echo "$out" | head -n 3 | paste -sd ';')"
fi
finish
