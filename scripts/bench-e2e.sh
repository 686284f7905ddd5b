#!/usr/bin/env bash
# make bench-e2e: nodes + pods created while no scheduler runs, then the scheduler starts;
# time to all bound, throughput, CPU/pod, peak RSS, then the placement checked against
# the pods' constraints ("violations: N").
# Runs ksched and (unless UPSTREAM=0) kube-scheduler 1.20.2 built from the same Debian
# source package, each on a fresh control plane with the same qps/burst, and prints
# the ratios. WORKLOAD picks what is created (bench/e2e/workloads.cc holds the table of
# node/pod counts; NODES and PODS override them), QPS the client rate:
#   basic (default)     1,000 nodes, 3,000 pods (100m / 500Mi)
#   anti-affinity       1,000 nodes, 1,000 pods with required podAntiAffinity on hostname
#   spread              1,000 nodes in 10 zones, 2,000 pods spread on zone and hostname
#   preferred-affinity  1,000 nodes in 10 zones, 2,000 pods preferring each other's zone
#   replicaset          1,000 nodes in 10 zones, 3,000 pods of one ReplicaSet
#   all                 each of the above in turn
# Exits non-zero if ksched's placement has violations.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/tests/e2e/control-plane.sh"
QPS=${QPS:-5000}; WORKLOAD=${WORKLOAD:-basic}
DIR=${KSCHED_BENCH_DIR:-/tmp/ksched-bench-e2e}
ALL=(basic anti-affinity spread preferred-affinity replicaset)
if [ "$WORKLOAD" = all ]; then
  WORKLOADS=("${ALL[@]}")
elif [[ " ${ALL[*]} " == *" $WORKLOAD "* ]]; then
  WORKLOADS=("$WORKLOAD")
else
  echo "bench-e2e: unknown WORKLOAD=$WORKLOAD (one of: ${ALL[*]} all)" >&2; exit 2
fi
BIN=$(bash "$CP" build)
trap 'bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM

run() { # WORKLOAD NAME SCHEDULER-NAME CMD...  (output in $DIR<tag>.NAME.out)
  local workload=$1 name=$2 sname=$3; shift 3
  KSCHED_CP_OWNER_PID=$$ bash "$CP" up "$DIR" 2>/dev/null
  echo "== $name${tag:+ ($workload)}" >&2
  BENCH_SERVER_PIDS="$(cat "$DIR/apiserver.pid") $(cat "$DIR/etcd.pid")" \
    "$BUILD/bench/e2e/bench_e2e" "$DIR/kubeconfig" "${NODES:--}" "${PODS:--}" "$sname" "$workload" -- "$@" \
    | tee "$DIR$tag.$name.out"
  bash "$CP" down "$DIR" >/dev/null 2>&1
}

cat > /tmp/ksched-bench-config.yaml <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: ksched}]
EOC
cat > /tmp/kube-scheduler-bench-config.yaml <<EOC
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $DIR/kubeconfig, qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: default-scheduler}]
EOC

violated=()
for w in "${WORKLOADS[@]}"; do
  tag=""; [ "$w" = basic ] || tag=".$w"  # basic keeps the file names it always had
  run "$w" ksched ksched "$BUILD/cmd/ksched/ksched" --config /tmp/ksched-bench-config.yaml --kubeconfig "$DIR/kubeconfig"
  cp "$DIR$tag.ksched.out" "/tmp/ksched-bench$tag-ksched.out"
  k_out="/tmp/ksched-bench$tag-ksched.out"
  v=$(sed -n 's/^violations: \([0-9]*\)$/\1/p' "$k_out")
  [ "${v:-0}" = 0 ] || violated+=("$w: $v")

  if [ "${UPSTREAM:-1}" != 0 ]; then
    run "$w" kube-scheduler default-scheduler "$BIN/kube-scheduler" --config /tmp/kube-scheduler-bench-config.yaml \
      --port=0 --secure-port=0 --v=0
    u_out="$DIR$tag.kube-scheduler.out"
    k_tp=$(sed -n 's/.*average \([0-9]*\) pods\/s.*/\1/p' "$k_out")
    u_tp=$(sed -n 's/.*average \([0-9]*\) pods\/s.*/\1/p' "$u_out")
    k_cpu=$(sed -n 's/.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*/\1/p' "$k_out")
    u_cpu=$(sed -n 's/.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*/\1/p' "$u_out")
    k_rss=$(sed -n 's/.*peak RSS: \([0-9.]*\) MB/\1/p' "$k_out")
    u_rss=$(sed -n 's/.*peak RSS: \([0-9.]*\) MB/\1/p' "$u_out")
    awk -v kt="$k_tp" -v ut="$u_tp" -v kc="$k_cpu" -v uc="$u_cpu" -v kr="$k_rss" -v ur="$u_rss" -v w="${tag:+ ($w)}" 'BEGIN {
      printf "ratio ksched/kube-scheduler%s: throughput %.1fx, CPU per pod %.2fx (%.1fx less), peak RSS %.2fx\n",
        w, kt/ut, kc/uc, uc/kc, kr/ur }'
  fi
done

if [ ${#violated[@]} -gt 0 ]; then
  echo "bench-e2e: ksched's placement has violations: ${violated[*]}" >&2
  exit 1
fi
