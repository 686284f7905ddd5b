#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in a clang + ASan/UBSan build and runs each
# for FUZZ_SECONDS (default 60). Prints one line per target,
#   fuzz <target>: <runs> runs, 0 crashes
# or, when a target crashes (or times out, or runs out of memory),
#   fuzz <target>: FAILED, crashing input: <path>
# with the end of its log, then "fuzz: N passed, N failed". Exits non-zero on any failure.
#
# Each target starts from a copy of its seeds (tests/data/fuzz/<target>/) in
# $BUILD/corpus/<target>/, which keeps what earlier runs found; nothing is written into
# the source tree. Crashing inputs go to $BUILD/crashes/<target>/.
#
# Environment: FUZZ_SECONDS, FUZZ_TARGETS (space-separated subset), BUILD (default
# build-fuzz), JOBS (build parallelism, default nproc).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build-fuzz}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}
ALL_TARGETS="fuzz_pod_decode fuzz_node_decode fuzz_workloads_decode fuzz_resource_decode fuzz_api_status fuzz_lease
  fuzz_quantity fuzz_selector fuzz_cel fuzz_kubeconfig fuzz_base64 fuzz_config_loader fuzz_http_request
  fuzz_cluster_files fuzz_extender_decode"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
# ccache hits across clones, as in the Makefile.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

# Inputs larger than a realistic object only slow the search down; the YAML targets get
# room for deep nesting (yaml-cpp's depth limit is reached with a few thousand brackets).
max_len() {
  case $1 in
    fuzz_quantity) echo 256 ;;
    fuzz_selector | fuzz_cel | fuzz_api_status | fuzz_lease | fuzz_base64) echo 4096 ;;
    fuzz_config_loader | fuzz_kubeconfig | fuzz_http_request | fuzz_cluster_files) echo 65536 ;;
    *) echo 32768 ;;
  esac
}
dict() {
  case $1 in
    fuzz_*_decode | fuzz_api_status | fuzz_lease) echo "$ROOT/tests/fuzz/json.dict" ;;
    fuzz_config_loader | fuzz_kubeconfig | fuzz_cluster_files) echo "$ROOT/tests/fuzz/yaml.dict" ;;
    fuzz_http_request) echo "$ROOT/tests/fuzz/http.dict" ;;
    fuzz_cel) echo "$ROOT/tests/fuzz/cel.dict" ;;
  esac
}

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (libFuzzer needs clang)"; exit 1; }
mkdir -p "$BUILD/logs"
build_log="$BUILD/logs/build.log"
echo "=== building fuzz targets in $BUILD (log: $build_log)"
build_start=$(date +%s)
if ! { cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCHED_FUZZ=ON &&
       cmake --build "$BUILD" -j"$JOBS" --target fuzz_targets; } >"$build_log" 2>&1; then
  tail -n 60 "$build_log"
  echo "fuzz: build failed"
  exit 1
fi
echo "built in $(( $(date +%s) - build_start )) s; each target runs ${SECONDS_PER_TARGET} s"

pass=0; fail=0
for target in $TARGETS; do
  bin="$BUILD/tests/fuzz/$target"
  corpus="$BUILD/corpus/$target"
  crashes="$BUILD/crashes/$target"
  log="$BUILD/logs/$target.log"
  mkdir -p "$corpus" "$crashes"
  cp -n "tests/data/fuzz/$target/"* "$corpus/" 2>/dev/null || true
  args=(-max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -max_len="$(max_len "$target")"
        -artifact_prefix="$crashes/" -print_final_stats=1)
  d=$(dict "$target")
  [ -n "$d" ] && args+=(-dict="$d")
  "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  runs=$(sed -nE 's/^Done ([0-9]+) runs in .*/\1/p' "$log" | tail -1)
  if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
    echo "fuzz $target: $runs runs, 0 crashes"
    pass=$((pass + 1))
  else
    input=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -1)
    echo "fuzz $target: FAILED (exit $rc), crashing input: ${input:-none written, see $log}"
    echo "--- end of $log"
    tail -n 40 "$log"
    echo "---"
    fail=$((fail + 1))
  fi
done
echo "fuzz: ${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ]
