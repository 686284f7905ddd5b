#!/usr/bin/env bash
# Runs ctest in the main build (all tests), the sanitizer build (unit tests, and the
# API client's integration test, whose HTTP/2 session only a real server exercises) and,
# when given a third directory, the ThreadSanitizer build (its unit tests), then
# prints one combined "N passed, N failed" line. Exits non-zero on any failure, or if
# either run executed no test. With CI=true the libFuzzer targets run too, 10 s each
# (CI_FUZZ_SECONDS), one result per target, and then the chaos benchmark once (about
# 40 s; CI_CHAOS=0 skips it), one result, and scripts/e2e-deploy.sh (ksched as a pod
# on a one-node cluster; CI_E2E_DEPLOY=0 skips it), one result.
set -uo pipefail
main=${1:-build}; san=${2:-build-asan}; tsan=${3:-}
# etcd stops on a full disk ("no space left on device") and every test after it fails
# for that alone; say so first when the temporary directory is nearly full.
free_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 {print $4}')
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((8 * 1024 * 1024)) ]; then
  echo "run-tests: warning: only $((free_kb / 1024)) MB free in ${TMPDIR:-/tmp}; etcd and the builds need several GB"
fi
total_pass=0; total_fail=0; rc=0
# The names of what failed, printed just before the summary line so that the
# tail of a long CI log says which test it was.
failed_names=()
# GoogleTest's failure lines from the ctest logs (file:line, expected and actual), kept
# for the same tail.
failure_lines=""

run() { # dir label-args...
  local dir=$1; shift
  local log; log=$(mktemp)
  echo "=== ctest in $dir $*"
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" "$@") 2>&1 | tee "$log"
  local line; line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  # ctest lists each failure after "The following tests FAILED:" as
  # "<tab><number> - <name> (<reason>)".
  local name
  while IFS= read -r name; do failed_names+=("$dir: $name"); done < <(
    sed -n '/The following tests FAILED:/,$p' "$log" | sed -nE 's/^[[:space:]]+[0-9]+ - (.*)$/\1/p')
  local fl; fl=$(grep -E -A5 ': Failure$' "$log" | head -60)
  [ -z "$fl" ] || failure_lines+="$fl"$'\n'
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
# The thread-heavy modules' unit tests under ThreadSanitizer (only the targets built
# there, see TSAN_TARGETS in the Makefile).
if [ -n "$tsan" ]; then
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run "$tsan" -L unit
fi
# In CI, each libFuzzer target also runs briefly from its seeds (scripts/fuzz.sh builds
# them with clang in build-fuzz, mostly from ccache): one pass or fail per target.
if [ "${CI:-}" = true ]; then
  log=$(mktemp)
  echo "=== fuzz targets, ${CI_FUZZ_SECONDS:-10} s each"
  FUZZ_SECONDS=${CI_FUZZ_SECONDS:-10} bash "$ROOT/scripts/fuzz.sh" 2>&1 | tee "$log"
  fuzz_rc=${PIPESTATUS[0]}
  fuzz_pass=$(grep -cE '^fuzz [a-z0-9_]+: [0-9]+ runs, 0 crashes$' "$log")
  fuzz_fail=$(grep -cE '^fuzz [a-z0-9_]+: FAILED' "$log")
  while IFS= read -r name; do failed_names+=("$name"); done < <(
    grep -oE '^fuzz [a-z0-9_]+: FAILED' "$log")
  rm -f "$log"
  # A failed build runs no target: count it as one failure.
  if [ "$fuzz_rc" -ne 0 ] && [ "$fuzz_fail" -eq 0 ]; then
    fuzz_fail=1; failed_names+=("fuzz targets: scripts/fuzz.sh exited $fuzz_rc")
  fi
  [ "$fuzz_fail" -eq 0 ] || rc=1
  total_pass=$((total_pass + fuzz_pass)); total_fail=$((total_fail + fuzz_fail))
fi
# One command that counts as one test: it passes when it exits 0 and prints PASS_LINE.
run_one() { # title pass-line command...
  local title=$1 pass=$2 log one_rc; shift 2
  log=$(mktemp)
  echo "=== $title"
  "$@" 2>&1 | tee "$log"
  one_rc=${PIPESTATUS[0]}
  if [ "$one_rc" -eq 0 ] && grep -qx "$pass" "$log"; then
    total_pass=$((total_pass + 1))
  else
    total_fail=$((total_fail + 1)); rc=1
    failed_names+=("$title (exit $one_rc)")
  fi
  rm -f "$log"
}
# Code, tests and docs refer to no work sessions or own tracker numbers (every run, not only CI).
run_one "process references" "process-refs: PASS" bash "$ROOT/scripts/check-process-refs.sh" "$ROOT"
# In CI, the chaos benchmark (scripts/bench-chaos.sh: apiserver and leader killed while two
# replicas schedule an exactly full cluster) runs once on the main build: one pass or fail.
if [ "${CI:-}" = true ] && [ "${CI_CHAOS:-1}" != 0 ]; then
  run_one "chaos benchmark" "chaos: PASS" bash "$ROOT/scripts/bench-chaos.sh" "$(cd "$main" && pwd)"
fi
# In CI (root), ksched deployed as a pod on a one-node cluster of this machine
# (scripts/e2e-deploy.sh: image built with buildah, kubectl apply -f manifests/, probes,
# leader failover; about a minute with warm caches): one pass or fail.
# CI_E2E_DEPLOY=0 skips it. Bounded: on SIGTERM the script's exit trap still tears the
# cluster down.
if [ "${CI:-}" = true ] && [ "${CI_E2E_DEPLOY:-1}" != 0 ]; then
  run_one "e2e-deploy" "e2e-deploy: PASS" timeout -k 60 "${CI_E2E_TIMEOUT:-1200}" bash "$ROOT/scripts/e2e-deploy.sh"
fi
echo "tests took $(( $(date +%s) - start )) s"
# The build stages' times, when the caller recorded them (.ci/run), then this run's.
if [ -n "${KSCHED_STAGE_TIMES:-}" ] && [ -f "$KSCHED_STAGE_TIMES" ]; then
  echo "stage times:"
  sed 's/^/  /' "$KSCHED_STAGE_TIMES"
  printf '  %-22s %5d s\n' "tests" $(( $(date +%s) - start ))
fi
if [ "${#failed_names[@]}" -gt 0 ]; then
  printf '%s' "$failure_lines"
  for name in "${failed_names[@]}"; do echo "FAILED: $name"; done
fi
echo "${total_pass} passed, ${total_fail} failed"
exit $rc
