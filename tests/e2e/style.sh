#!/usr/bin/env bash
# House style as a gate: every C file is clang-format clean (.clang-format:
# kernel-like, tabs, 100 columns). Fix with `make format`.
source "$(dirname "$0")/../lib.sh"

if ! command -v clang-format >/dev/null; then
	not_ok clang_format_installed "clang-format missing (./build.sh installs it)"
	exit 1
fi
cd "$ROOT" || exit 1
bad=()
for f in $(make -s --no-print-directory format-files); do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -eq 0 ]; then ok clang_format_clean; else
	not_ok clang_format_clean "not clean (make format): ${bad[*]}"; fi
finish
