#!/usr/bin/env bash
# make bench-e2e: 1,000 nodes + 3,000 pods (100m / 500Mi) created while no scheduler
# runs, then the scheduler starts; time to all bound, throughput, CPU/pod, peak RSS.
# Runs ksched and (unless UPSTREAM=0) kube-scheduler 1.20.2 built from the same Debian
# source package, each on a fresh control plane with the same qps/burst, and prints
# the ratios. NODES, PODS, QPS override the defaults.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/tests/e2e/control-plane.sh"
NODES=${NODES:-1000}; PODS=${PODS:-3000}; QPS=${QPS:-5000}
DIR=${KSCHED_BENCH_DIR:-/tmp/ksched-bench-e2e}
BIN=$(bash "$CP" build)
trap 'bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM

run() { # NAME SCHEDULER-NAME CMD...
  local name=$1 sname=$2; shift 2
  KSCHED_CP_OWNER_PID=$$ bash "$CP" up "$DIR" 2>/dev/null
  echo "== $name" >&2
  BENCH_SERVER_PIDS="$(cat "$DIR/apiserver.pid") $(cat "$DIR/etcd.pid")" \
    "$BUILD/bench/e2e/bench_e2e" "$DIR/kubeconfig" "$NODES" "$PODS" "$sname" -- "$@" | tee "$DIR.$name.out"
  bash "$CP" down "$DIR" >/dev/null 2>&1
}

cat > /tmp/ksched-bench-config.yaml <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: ksched}]
EOC
run ksched ksched "$BUILD/cmd/ksched/ksched" --config /tmp/ksched-bench-config.yaml --kubeconfig "$DIR/kubeconfig"
cp "$DIR.ksched.out" /tmp/ksched-bench-ksched.out

if [ "${UPSTREAM:-1}" != 0 ]; then
  cat > /tmp/kube-scheduler-bench-config.yaml <<EOC
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $DIR/kubeconfig, qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: default-scheduler}]
EOC
  run kube-scheduler default-scheduler "$BIN/kube-scheduler" --config /tmp/kube-scheduler-bench-config.yaml \
    --port=0 --secure-port=0 --v=0
  k_tp=$(sed -n 's/.*average \([0-9]*\) pods\/s.*/\1/p' /tmp/ksched-bench-ksched.out)
  u_tp=$(sed -n 's/.*average \([0-9]*\) pods\/s.*/\1/p' "$DIR.kube-scheduler.out")
  k_cpu=$(sed -n 's/.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*/\1/p' /tmp/ksched-bench-ksched.out)
  u_cpu=$(sed -n 's/.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*/\1/p' "$DIR.kube-scheduler.out")
  k_rss=$(sed -n 's/.*peak RSS: \([0-9.]*\) MB/\1/p' /tmp/ksched-bench-ksched.out)
  u_rss=$(sed -n 's/.*peak RSS: \([0-9.]*\) MB/\1/p' "$DIR.kube-scheduler.out")
  awk -v kt="$k_tp" -v ut="$u_tp" -v kc="$k_cpu" -v uc="$u_cpu" -v kr="$k_rss" -v ur="$u_rss" 'BEGIN {
    printf "ratio ksched/kube-scheduler: throughput %.1fx, CPU per pod %.2fx (%.1fx less), peak RSS %.2fx\n",
      kt/ut, kc/uc, uc/kc, kr/ur }'
fi
