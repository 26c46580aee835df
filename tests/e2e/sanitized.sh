#!/usr/bin/env bash
# The end-to-end scenarios again, with cprof built with AddressSanitizer,
# LeakSanitizer and UBSan (FLAVOR=asan). Every check is reported with an
# asan_ prefix, and any sanitizer report at all fails the run. upload_tls
# puts TLS (mbedTLS and tls.c), the proxy-free https path and its refusals
# under the sanitizers; symbolize_debuginfod the debuginfod fetches, their
# worker threads and each hostile server's answer.
source "$(dirname "$0")/../lib.sh"

if ! why=$(can_bpf 2>&1); then
	skip sanitized "$why"
	exit 0
fi
cd "$ROOT" || exit 1
unset MAKEFLAGS MAKELEVEL MFLAGS
if ! make --no-print-directory -s FLAVOR=asan .output/asan/cprof >"$TMP/build.log" 2>&1; then
	not_ok asan_cprof_built "$(tail -5 "$TMP/build.log")"
	exit 1
fi
mkdir -p "$TMP/reports"
export CPROF=$ROOT/.output/asan/cprof
export ASAN_OPTIONS=log_path=$TMP/reports/asan:detect_leaks=1:abort_on_error=0
export CPROF_RSS_LIMIT_KB=786432
export UBSAN_OPTIONS=log_path=$TMP/reports/ubsan:print_stacktrace=1:halt_on_error=1
for t in profile kernel system faults symbolize_exited upload_tls symbolize_debuginfod; do
	bash "tests/e2e/$t.sh" 2>"$TMP/$t.err" | sed -e 's/^ok /ok asan_/' -e 's/^not ok /not ok asan_/' \
		-e 's/^skip /skip asan_/'
done
reports=$(find "$TMP/reports" -type f | head -3)
if [ -z "$reports" ]; then ok sanitizer_reports_zero; else
	not_ok sanitizer_reports_zero "$(head -c 600 $reports | tr '\n' ' ')"; fi
finish
