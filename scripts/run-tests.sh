#!/usr/bin/env bash
# Runs ctest in the main build (all tests) and the sanitizer build (unit tests, and the
# API client's integration test, whose HTTP/2 session only a real server exercises), then
# prints one combined "N passed, N failed" line. Exits non-zero on any failure, or if
# either run executed no test.
set -uo pipefail
main=${1:-build}; san=${2:-build-asan}
total_pass=0; total_fail=0; rc=0

run() { # dir label-args...
  local dir=$1; shift
  local log; log=$(mktemp)
  echo "=== ctest in $dir $*"
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" "$@") 2>&1 | tee "$log"
  local line; line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  rm -f "$log"
  if [ -z "$line" ]; then echo "no ctest summary from $dir"; rc=1; return; fi
  local failed total
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  [ "$total" -gt 0 ] || { echo "ctest in $dir ran no test"; rc=1; }
  [ "$failed" -eq 0 ] || rc=1
  total_pass=$((total_pass + total - failed)); total_fail=$((total_fail + failed))
}

start=$(date +%s)
run "$main"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions="$ROOT/tests/lsan.supp" run "$san" -L 'unit|sanitized'
echo "tests took $(( $(date +%s) - start )) s"
echo "${total_pass} passed, ${total_fail} failed"
exit $rc
