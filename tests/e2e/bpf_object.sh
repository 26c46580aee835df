#!/usr/bin/env bash
# Mechanical checks on the compiled BPF object that keep it loadable on old
# kernels (4.18+) and without kernel BTF; no root needed.
source "$(dirname "$0")/../lib.sh"

obj=$ROOT/.output/bpf-$( [ "$(uname -m)" = aarch64 ] && echo arm64 || echo x86)/profile.bpf.o
if [ ! -f "$obj" ]; then
	not_ok bpf_object_built "$obj missing (run make)"
	exit 1
fi

# No global data: .rodata/.data/.bss maps need Linux 5.2.
if llvm-readelf -S "$obj" | grep -qE ' \.(rodata|data|bss|kconfig)'; then
	not_ok no_global_data "$(llvm-readelf -S "$obj" | grep -E ' \.(rodata|data|bss|kconfig)')"
else ok no_global_data; fi

# No CO-RE relocations: they need /sys/kernel/btf/vmlinux. The .BTF.ext header
# holds core_relo_len at byte 28 when its header is at least 32 bytes long.
ext=$TMP/btf.ext
llvm-objcopy --dump-section .BTF.ext="$ext" "$obj" "$TMP/obj.copy"
hdr_len=$(od -An -tu4 -j4 -N4 "$ext" | tr -d ' ')
relo_len=0
[ "$hdr_len" -ge 32 ] && relo_len=$(od -An -tu4 -j28 -N4 "$ext" | tr -d ' ')
check no_core_relocations [ "$relo_len" -eq 0 ]

# No back-edges (bounded loops need 5.3) and well under 4096 instructions per program.
llvm-objdump -d --no-show-raw-insn "$obj" >"$TMP/dis"
if grep -qE 'goto -[0-9]+' "$TMP/dis"; then
	not_ok no_back_edges "$(grep -E 'goto -' "$TMP/dis" | head -3)"
else ok no_back_edges; fi
max=$(awk '/^Disassembly of section/ { s = $4 } /^ *[0-9]+:/ { n[s]++ } END { m = 0; for (k in n) if (n[k] > m) m = n[k]; print m }' "$TMP/dis")
if [ "$max" -gt 0 ] && [ "$max" -lt 4096 ]; then ok under_4096_insns; else
	not_ok under_4096_insns "largest section has $max instructions"; fi
finish
