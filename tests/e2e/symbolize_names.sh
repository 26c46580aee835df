#!/usr/bin/env bash
# Issue 3, case 7: C++ (Itanium) and Rust (legacy and v0) names are shown
# demangled in the folded output and the summary; the pprof keeps the raw
# name as system_name and the readable one as name. mangled_names gives its
# functions Rust and C++ symbol names (no rustc needed); cpp_names is real
# C++ from the compiler (a class template, an overload set).
# tag: quick
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip symbolize_names "$why"
	exit 0
fi

# --- hand-mangled Rust and C++ names --------------------------------------------------
"$CPROF" -F 499 --format folded -o "$TMP/m.folded" -- "$FIX/mangled_names" 1 2>"$TMP/m.err"
check mangled_exit_zero [ $? -eq 0 ]
# Rust v0 (_RNvCs1234_7mycrate8hot_rust) under Rust legacy (_ZN7mycrate4work17h...E).
check rust_v0_and_legacy_demangled grep -qE ';main;mycrate::work;mycrate::hot_rust [0-9]+$' "$TMP/m.folded"
check cpp_demangled grep -qE ';main;mycrate::work;ns::Foo::hot\(int\) [0-9]+$' "$TMP/m.folded"
check no_mangled_in_folded bash -c "! grep -qE '_ZN|_RNv' '$TMP/m.folded'"
check summary_demangled_rust grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +mycrate::hot_rust \(mangled_names\)$' "$TMP/m.err"
# The summary's list shortens demangled names as pprof does (issue 38, item 9).
check summary_demangled_cpp grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +ns::Foo::hot \(mangled_names\)$' "$TMP/m.err"

"$CPROF" -F 499 -o "$TMP/m.pb.gz" -- "$FIX/mangled_names" 1 2>/dev/null
go tool pprof -symbolize=none -raw "$TMP/m.pb.gz" >"$TMP/m.raw" 2>&1
# -raw prints a location's function as "NAME FILE:LINE s=START(SYSTEM_NAME)" when they
# differ (the fixture is built with -g: the file and line of its source, see source_lines.sh).
src=" $ROOT/fixtures/src/mangled_names.c:[0-9]+ s=0"
check pprof_cpp_name_and_system_name grep -qE " ns::Foo::hot\(int\)$src\(_ZN2ns3Foo3hotEi\)" "$TMP/m.raw"
check pprof_rust_v0_name_and_system_name grep -qE " mycrate::hot_rust$src\(_RNvCs1234_7mycrate8hot_rust\)" "$TMP/m.raw"
check pprof_rust_legacy_name_and_system_name grep -qE " mycrate::work$src\(_ZN7mycrate4work17h6b3a7f0d1c9e2a54E\)" "$TMP/m.raw"
check pprof_c_name_only grep -qE " main$src\$" "$TMP/m.raw"

# --- real C++ -------------------------------------------------------------------------
"$CPROF" -F 499 --format folded -o "$TMP/c.folded" -- "$FIX/cpp_names" 1 2>"$TMP/c.err"
check cpp_names_exit_zero [ $? -eq 0 ]
check cpp_template_method grep -qE ';main;shapes::run\(double\);shapes::Accumulator<long>::add\(long, int\) [0-9]+$' "$TMP/c.folded"
check cpp_overload_by_parameters grep -qE ';main;shapes::run\(double\);shapes::mix\(unsigned int\) [0-9]+$' "$TMP/c.folded"
# Issue 38, item 9: the summary lists the function without its template
# arguments and parameters; the profile keeps the whole signature.
check cpp_summary_short_names grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +shapes::Accumulator::add \(cpp_names\)$' "$TMP/c.err"
check cpp_summary_no_signature bash -c "! grep -qE '^ +[0-9.]+% .*(<long>|\\(long)' '$TMP/c.err'"
"$CPROF" -F 499 -o "$TMP/c.pb.gz" -- "$FIX/cpp_names" 1 2>/dev/null
check cpp_pprof_keeps_signature bash -c "go tool pprof -top '$TMP/c.pb.gz' 2>/dev/null | grep -qF 'shapes::Accumulator<long>::add(long, int)'"
finish
