#!/usr/bin/env bash
# Mechanical checks on the compiled BPF objects (one per target architecture)
# that keep them loadable on old kernels (4.18+) and without kernel BTF; no
# root needed. Kernels below 5.10 cannot be booted from Debian's archive
# (qemu/run), so these checks stand in for them.
# tag: quick
source "$(dirname "$0")/../lib.sh"

# What Linux 4.18 knows (include/uapi/linux/bpf.h at v4.18): helpers up to
# BPF_FUNC_get_current_cgroup_id, map types up to BPF_MAP_TYPE_SOCKHASH.
# The unwinder's object (bpf/unwinder.bpf.c) needs 5.5: helpers up to
# BPF_FUNC_probe_read_kernel_str, map types up to BPF_MAP_TYPE_DEVMAP_HASH,
# bounded loops and JMP32 allowed.
MAX_HELPER_4_18=80
MAX_MAP_TYPE_4_18=18
MAX_HELPER_5_5=115
# Helpers beyond a floor that an object may call in a program user space
# loads only after probing the kernel for them: bpf_loop (181, Linux 5.17)
# in cprof_walk_loop, whose 5.5 counterpart cprof_walk unrolls its frames;
# bpf_get_current_task_btf (158, 5.11) and bpf_find_vma (180, 5.17) in
# cprof_walk_file, the walk by file, which older kernels go without.
OPTIONAL_HELPERS_4_18=""
OPTIONAL_HELPERS_5_5="158 180 181"
MAX_MAP_TYPE_5_5=25

# map_types OBJ: "NAME TYPE" for every map of OBJ's .maps section: the BTF
# variable's struct has a member `type` pointing to an array of TYPE elements
# (libbpf's __uint(type, ...)).
map_types() {
	bpftool btf dump file "$1" | awk '
		function ref(s) { return match(s, /type_id=[0-9]+/) ? substr(s, RSTART + 8, RLENGTH - 8) : "" }
		/^\[[0-9]+\]/ {
			cur = substr($1, 2, length($1) - 2); kind[cur] = $2; to[cur] = ref($0)
			if (match($0, /nr_elems=[0-9]+/)) elems[cur] = substr($0, RSTART + 9, RLENGTH - 9)
			inmaps = ($2 == "DATASEC" && $3 == "'\''.maps'\''")
			next
		}
		inmaps && /\(VAR / { n = $NF; gsub(/[^A-Za-z0-9_]/, "", n); var[ref($0)] = n; next }
		kind[cur] == "STRUCT" && $1 == "'\''type'\''" { member[cur] = ref($0) }
		END { for (v in var) print var[v], elems[to[member[to[v]]]] }'
}

# insns OBJ: "SECTION OPCODE SRC_REG IMM" for every instruction, from the raw
# bytes llvm-objdump prints (code, dst:4|src:4, off:16, imm:32 little-endian).
insns() {
	llvm-objdump -d "$1" | awk '
		function hex(s,  i, n) {
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		/^Disassembly of section/ { sec = $4; sub(/:$/, "", sec) }
		/^ *[0-9]+:\t/ {
			split($0, f, "\t"); split(f[2], b, " ")
			imm = hex(b[8] b[7] b[6] b[5]); if (imm >= 2^31) imm -= 2^32
			print sec, b[1], int(hex(b[2]) / 16), imm
		}'
}

# check_object NAME OBJ FLOOR: FLOOR is 4_18 (the sampler) or 5_5 (the unwinder).
check_object() {
	local arch=$1 obj=$2 floor=$3 bad max_helper max_map optional
	max_helper=MAX_HELPER_$floor max_helper=${!max_helper}
	optional=OPTIONAL_HELPERS_$floor optional=${!optional}
	max_map=MAX_MAP_TYPE_$floor max_map=${!max_map}

	# No global data: .rodata/.data/.bss maps need Linux 5.2.
	if llvm-readelf -S "$obj" | grep -qE ' \.(rodata|data|bss|kconfig)'; then
		not_ok "${arch}_no_global_data" "$(llvm-readelf -S "$obj" | grep -E ' \.(rodata|data|bss|kconfig)')"
	else ok "${arch}_no_global_data"; fi

	# No CO-RE relocations: they need /sys/kernel/btf/vmlinux. The .BTF.ext header
	# holds core_relo_len at byte 28 when its header is at least 32 bytes long.
	local ext=$TMP/$arch.btf.ext hdr_len relo_len=0
	llvm-objcopy --dump-section .BTF.ext="$ext" "$obj" "$TMP/$arch.obj.copy"
	hdr_len=$(od -An -tu4 -j4 -N4 "$ext" | tr -d ' ')
	[ "$hdr_len" -ge 32 ] && relo_len=$(od -An -tu4 -j28 -N4 "$ext" | tr -d ' ')
	check "${arch}_no_core_relocations" [ "$relo_len" -eq 0 ]

	if [ "$floor" = 4_18 ]; then
		# No back-edges (bounded loops need 5.3) and well under 4096 instructions per program.
		llvm-objdump -d --no-show-raw-insn "$obj" >"$TMP/$arch.dis"
		if grep -qE 'goto -[0-9]+' "$TMP/$arch.dis"; then
			not_ok "${arch}_no_back_edges" "$(grep -E 'goto -' "$TMP/$arch.dis" | head -3)"
		else ok "${arch}_no_back_edges"; fi
		local max
		max=$(awk '/^Disassembly of section/ { s = $4 } /^ *[0-9]+:/ { n[s]++ } END { m = 0; for (k in n) if (n[k] > m) m = n[k]; print m }' "$TMP/$arch.dis")
		if [ "$max" -gt 0 ] && [ "$max" -lt 4096 ]; then ok "${arch}_under_4096_insns"; else
			not_ok "${arch}_under_4096_insns" "largest section has $max instructions"; fi
	fi

	insns "$obj" >"$TMP/$arch.insns"
	# Helper calls (opcode 0x85, src_reg 0) by id; src_reg 2 is a kfunc call,
	# which needs kernel BTF (and 5.13). BPF-to-BPF calls (src_reg 1) are 4.16.
	bad=$(awk -v max="$max_helper" -v opt=" $optional " '$2 == "85" && ($3 == 2 || ($3 == 0 && ($4 < 1 || $4 > max) && index(opt, " " $4 " ") == 0)) {
		print $1 ": " ($3 == 2 ? "kfunc call" : "helper " $4) }' "$TMP/$arch.insns" | sort -u | paste -sd';')
	if [ -z "$bad" ] && grep -q '^[^ ]* 85 0 ' "$TMP/$arch.insns"; then ok "${arch}_helpers_in_$floor"; else
		not_ok "${arch}_helpers_in_$floor" "not in Linux $floor (max helper id $max_helper): ${bad:-no helper call found}"; fi

	# The original instruction set: no JMP32 class (5.1), no atomic operation
	# but add without fetch (the classic XADD; the others need 5.12).
	bad=$(awk -v jmp32="$([ "$floor" = 4_18 ] && echo 0 || echo 1)" '
		!jmp32 && $2 ~ /[6e]$/ { print $1 ": jmp32 opcode 0x" $2 }
		($2 == "c3" || $2 == "db") && $4 != 0 { print $1 ": atomic opcode 0x" $2 " imm " $4 }' \
		"$TMP/$arch.insns" | sort -u | head -3 | paste -sd';')
	if [ -z "$bad" ]; then ok "${arch}_instructions_in_$floor"; else
		not_ok "${arch}_instructions_in_$floor" "$bad"; fi

	# Map types, from the maps' BTF.
	map_types "$obj" >"$TMP/$arch.maps"
	bad=$(awk -v max="$max_map" '$2 == "" || $2 < 1 || $2 > max { print $1 " (type " $2 ")" }' \
		"$TMP/$arch.maps" | paste -sd';')
	if [ -s "$TMP/$arch.maps" ] && [ -z "$bad" ]; then ok "${arch}_map_types_in_$floor"; else
		not_ok "${arch}_map_types_in_$floor" "not in Linux $floor (max map type $max_map): ${bad:-no map found}"; fi

	# Program types, from the section names libbpf maps them from: perf_event
	# (BPF_PROG_TYPE_PERF_EVENT, 4.9), tracepoint/ (TRACEPOINT, 4.7),
	# kprobe/ and kretprobe/ (KPROBE, 4.1); .text holds only subprograms
	# (BPF-to-BPF calls, 4.16). fentry/, tp_btf/ and the like need kernel BTF.
	bad=$(llvm-readelf -S -W "$obj" | awk '$0 ~ / AX / { for (i = 1; i <= NF; i++) if ($i == "PROGBITS") print $(i - 1) }' |
		grep -vE '^(\.text|perf_event|(tracepoint|kprobe|kretprobe)/.+)$' | paste -sd' ')
	if [ -z "$bad" ]; then ok "${arch}_program_types_in_$floor"; else
		not_ok "${arch}_program_types_in_$floor" "sections of program types without $floor or BTF-free support: $bad"; fi
}

host_arch=$([ "$(uname -m)" = aarch64 ] && echo arm64 || echo x86)
for arch in x86 arm64; do
	for obj_floor in sampler:4_18 unwinder:5_5; do
		name=${obj_floor%%:*} floor=${obj_floor#*:}
		obj=$ROOT/.output/bpf-$arch/$name.bpf.o
		label=$arch
		[ "$name" = sampler ] || label=${arch}_$name
		if [ -f "$obj" ]; then
			check_object "$label" "$obj" "$floor"
		elif [ "$arch" = "$host_arch" ]; then
			not_ok "${label}_bpf_object_built" "$obj missing (run make)"
		else
			skip "${label}_bpf_object" "$obj not built (make arm64 builds it)"
		fi
	done
done

# bpf_calls TRACE: "CMD RET FRAMES" for every bpf(2) call of an `strace -f -k
# -e raw=bpf` trace: the command's number, the result (-1 on failure) and
# the functions of the call's stack, comma-joined (strace prints the stack
# after the call's last line, its "resumed" half when the call was split).
bpf_calls() {
	awk '
		function flush() { if (cur != "") print cur, (frames == "" ? "-" : frames); cur = ""; frames = "" }
		/^ > / { if (match($0, /\([A-Za-z0-9_.]+\+/)) frames = frames (frames == "" ? "" : ",") substr($0, RSTART + 1, RLENGTH - 2); next }
		{ flush() }
		function num(s,  i, n) {
			if (s !~ /^0x/) return s + 0
			for (i = 3; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		match($0, /bpf\((0x)?[0-9a-f]+,/) { cmd[$1] = num(substr($0, RSTART + 4, RLENGTH - 5)) }
		/ = -?[0-9a-fx]+/ && (/bpf\(/ || /<\.\.\. bpf resumed>/) {
			r = $0; sub(/.* = /, "", r); sub(/ .*/, "", r); cur = cmd[$1] " " (r == "-1" ? -1 : 0)
		}
		END { flush() }' "$1"
}

# User space as on 4.18: cprof run with CPROF_KERNEL_AS=4.18 under strace
# issues no bpf(2) command 4.18 lacks (tests/gates/bpf_commands.txt), but
# those libbpf probes the real kernel for and does without on 4.18.
check_user_commands() {
	local table=$ROOT/tests/gates/bpf_commands.txt bad
	if ! why=$(can_bpf 2>&1); then
		skip user_bpf_commands_in_4_18 "$why"
		return
	fi
	if ! command -v strace >/dev/null; then
		skip user_bpf_commands_in_4_18 "no strace (./build.sh test installs it)"
		return
	fi
	if ! CPROF_KERNEL_AS=4.18 strace -f -qq -k -e trace=bpf -e raw=bpf -o "$TMP/bpf.trace" \
		"$CPROF" -F 499 -d 3 -o "$TMP/as.pb.gz" -- "$FIX/known_tree" 1 1 >/dev/null 2>"$TMP/as.err" ||
		[ ! -s "$TMP/as.pb.gz" ]; then
		not_ok user_bpf_commands_in_4_18 "cprof as on 4.18 under strace failed: $(grep -m1 '^cprof: ' "$TMP/as.err")"
		return
	fi
	bpf_calls "$TMP/bpf.trace" >"$TMP/bpf.calls"
	bad=$(awk 'NR == FNR { if ($1 !~ /^#/ && NF >= 4) { name[$1] = $2; since[$1] = $3; via[$1] = $4 }; next }
		function newer(v,  p) { split(v, p, "."); return p[1] * 1000 + p[2] > 4018 }
		!($1 in name) { print "command " $1 " not in bpf_commands.txt"; next }
		!newer(since[$1]) { next }
		# A probe of libbpf: it fails on 4.18, and libbpf does without.
		$3 ~ /(^|,)feat_supported(,|$)/ { next }
		via[$1] != "-" && index("," $3 ",", "," via[$1] ",") { next }
		{ print name[$1] " (" since[$1] ") from " substr($3, 1, 100) }' "$table" "$TMP/bpf.calls" |
		sort | uniq -c | sed 's/^ *//' | head -5 | paste -sd';')
	if ! grep -q '^5 ' "$TMP/bpf.calls"; then
		not_ok user_bpf_commands_in_4_18 "no BPF_PROG_LOAD in the trace: $(head -c 200 "$TMP/bpf.trace")"
	elif [ -n "$bad" ]; then
		not_ok user_bpf_commands_in_4_18 "commands Linux 4.18 lacks: $bad"
	else ok user_bpf_commands_in_4_18; fi
}
check_user_commands
finish
