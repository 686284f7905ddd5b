#!/usr/bin/env bash
# make bench-chaos: ksched under faults on a fresh local control plane whose apiserver
# keeps an audit log of binding requests (KSCHED_CP_AUDIT=1). 200 one-CPU nodes exactly
# filled by 2,000 pods of 100m, two ksched replicas with leader election, and meanwhile:
# kube-apiserver SIGKILLed and restarted twice (etcd compacted between), 200 random pods
# deleted and 200 new ones created, the leader SIGKILLed once. Passes only when every
# remaining pod is bound, no node is over capacity, no pod has two successful bindings in
# the audit log and a replica still runs with /healthz ok (bench/chaos/chaos_bench.cc).
# Prints the timeline, the settle time and "chaos: PASS" / "chaos: FAIL <reasons>";
# exits non-zero on failure. NODES (default 200; pods = 10 x NODES), CHURN (200) and SEED
# override; FAULTS=apiserver,compact,churn,leader (the default) runs a subset. Output: /tmp/ksched-bench-chaos.out; replica logs and the audit log stay in
# $KSCHED_BENCH_DIR (default /tmp/ksched-bench-chaos) until the next run.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/scripts/control-plane.sh"
DIR=${KSCHED_BENCH_DIR:-/tmp/ksched-bench-chaos}
OUT=/tmp/ksched-bench-chaos.out
for bin in "$BUILD/bench/chaos/chaos_bench" "$BUILD/cmd/ksched/ksched"; do
  [ -x "$bin" ] || { echo "bench-chaos: $bin not built" >&2; exit 2; }
done
bash "$CP" build > /dev/null
trap 'bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM

start=$(date +%s.%N)
KSCHED_CP_AUDIT=1 KSCHED_CP_OWNER_PID=$$ bash "$CP" up "$DIR"
echo "control plane up in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s" | tee "$OUT"
args=(--nodes "${NODES:-200}" --churn "${CHURN:-200}")
[ -z "${SEED:-}" ] || args+=(--seed "$SEED")
[ -z "${FAULTS:-}" ] || args+=(--faults "$FAULTS")
set +e
"$BUILD/bench/chaos/chaos_bench" "$DIR" "$BUILD/cmd/ksched/ksched" "$CP" "${args[@]}" 2> "$DIR/chaos_bench.err" \
  | tee -a "$OUT"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "bench-chaos: failed (exit $rc); logs in $DIR (chaos_bench.err, ksched-*.log, audit.log)" >&2
  tail -5 "$DIR/chaos_bench.err" >&2; }
exit "$rc"
