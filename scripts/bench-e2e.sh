#!/usr/bin/env bash
# make bench-e2e: nodes + pods created while no scheduler runs, then the scheduler starts;
# time to all bound, throughput, CPU/pod, peak RSS, then the placement checked against
# the pods' constraints ("violations: N").
# Runs ksched (unless KSCHED=0) and kube-scheduler 1.20.2 (unless UPSTREAM=0) built from
# the same Debian source package, each on a fresh control plane with the same qps/burst,
# and prints the ratios. WORKLOAD picks what is created (bench/e2e/workloads.cc holds the
# table of node/pod counts; NODES and PODS override them), QPS the client rate,
# KSCHED_FLAGS extra ksched flags (e.g. --explain-records=0 for an A/B of the decision log),
# LIMIT=1 a third run with bench_noop_binder (binds the same pending pods round-robin, no
# scheduling, through ksched's API client at the same qps: the most any scheduler could
# reach here) and ksched's fraction of it; LIMIT=2 also a fourth run of that binder with a
# pod informer like ksched's watching while it binds (--watch-pods: the API server sends
# every bound pod to one more watcher, as it must for any scheduler) and that fraction:
#   basic (default)     1,000 nodes, 3,000 pods (100m / 500Mi)
#   anti-affinity       1,000 nodes, 1,000 pods with required podAntiAffinity on hostname
#   spread              1,000 nodes in 10 zones, 2,000 pods spread on zone and hostname
#   preferred-affinity  1,000 nodes in 10 zones, 2,000 pods preferring each other's zone
#   replicaset          1,000 nodes in 10 zones, 3,000 pods of one ReplicaSet
#   preemption          500 nodes of 4 CPU each filled with 4 low-priority pods of 900m,
#                       created already bound (no scheduler places them); then 500
#                       high-priority pods of 3000m, each of which must preempt 3 of them
#                       (upstream scheduler_perf's Preemption/500Nodes). A kubelet stand-in
#                       in the bench finishes the victims' graceful deletes. Also prints
#                       the victims (expected 1,500) and how soon each preemptor was bound
#                       after its node's last victim went.
#   gang                the basic workload's pods in 100 gangs of 30: scheduler-plugins'
#                       PodGroup CRD and one PodGroup each, ksched with a Coscheduling
#                       profile (kube-scheduler 1.20.2 has no such plugin: not run). Checks
#                       that every group ends bound whole, and runs the basic workload
#                       with ksched right after for the ratio of the two (BASIC=0 skips it)
#   all                 each of the above in turn
# EXTENDER=1 adds one HTTP extender (tests/fakes/test_extender_main.cc, on loopback) with
# filter and prioritize verbs (nodeCacheCapable, weight 1) to both schedulers' configs:
# every pod is also filtered and scored by it; it rejects no node.
# The scheduler must bind every pod, with no gap of 2 minutes between binds (10 minutes in
# all), else its run ends with "TIMEOUT: ..." and fails. Exits non-zero if a ksched run
# failed, its placement has violations, or it evicted other than the expected victims.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/scripts/control-plane.sh"
QPS=${QPS:-5000}; WORKLOAD=${WORKLOAD:-basic}
DIR=${KSCHED_BENCH_DIR:-/tmp/ksched-bench-e2e}
ALL=(basic anti-affinity spread preferred-affinity replicaset preemption gang)
if [ "$WORKLOAD" = all ]; then
  WORKLOADS=("${ALL[@]}")
elif [[ " ${ALL[*]} " == *" $WORKLOAD "* ]]; then
  WORKLOADS=("$WORKLOAD")
else
  echo "bench-e2e: unknown WORKLOAD=$WORKLOAD (one of: ${ALL[*]} all)" >&2; exit 2
fi
BIN=$(bash "$CP" build)
trap 'bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM

run() { # WORKLOAD NAME SCHEDULER-NAME CMD...  (output in $DIR<tag>.NAME.out; bench_e2e's status)
  local workload=$1 name=$2 sname=$3 rc=0; shift 3
  KSCHED_CP_OWNER_PID=$$ bash "$CP" up "$DIR" 2>/dev/null
  echo "== $name${tag:+ ($workload)}" >&2
  BENCH_SERVER_PIDS="$(cat "$DIR/apiserver.pid") $(cat "$DIR/etcd.pid")" \
    "$BUILD/bench/e2e/bench_e2e" "$DIR/kubeconfig" "${NODES:--}" "${PODS:--}" "$sname" "$workload" -- "$@" \
    | tee "$DIR$tag.$name.out" || rc=$?
  bash "$CP" down "$DIR" >/dev/null 2>&1
  return $rc
}
field() { sed -n "s/$1/\1/p" "$2" | head -1; } # PATTERN-WITH-ONE-GROUP FILE
preemption_figures() { # LABEL FILE: the victims and delays of a run that has them (preemption)
  local victims; victims=$(field '^victims: \([0-9]*\) .*' "$2")
  [ -n "$victims" ] || return 0
  echo "$1 ($w): victims $victims (expected $(field '^victims: .*(expected \([0-9]*\):.*' "$2"));" \
    "bound after its node's last victim went: median $(field '.*removal: median \([0-9]*\) ms.*' "$2") ms," \
    "p90 $(field '.*removal: .*p90 \([0-9]*\) ms.*' "$2") ms, max $(field '.*removal: .*max \([0-9]*\) ms.*' "$2") ms"
}

EXTENDERS=""
if [ "${EXTENDER:-0}" = 1 ]; then
  "$BUILD/tests/ksched_test_extender" > "$DIR.extender.out" 2>&1 &
  EXT_PID=$!
  trap 'kill $EXT_PID 2>/dev/null; bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM
  for _ in $(seq 50); do grep -q listening "$DIR.extender.out" 2>/dev/null && break; sleep 0.1; done
  EXT_ADDR=$(sed -n 's/^listening on //p' "$DIR.extender.out")
  [ -n "$EXT_ADDR" ] || { echo "bench-e2e: the test extender did not start" >&2; exit 1; }
  EXTENDERS="extenders: [{urlPrefix: 'http://$EXT_ADDR', filterVerb: filter, prioritizeVerb: prioritize, weight: 1, nodeCacheCapable: true}]"
  echo "bench-e2e: with an HTTP extender (filter + prioritize) at $EXT_ADDR" >&2
fi

cat > "$DIR.ksched-config.yaml" <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: ksched}]
$EXTENDERS
EOC
cat > "$DIR.ksched-gang-config.yaml" <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: ksched
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
      disabled: [{name: PrioritySort}]
$EXTENDERS
EOC
cat > "$DIR.kube-scheduler-config.yaml" <<EOC
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $DIR/kubeconfig, qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: default-scheduler}]
$EXTENDERS
EOC

failed=()
for w in "${WORKLOADS[@]}"; do
  tag=""; [ "$w" = basic ] || tag=".$w"  # basic keeps the file names it always had
  k_ok=false; u_ok=false
  k_out="/tmp/ksched-bench$tag-ksched.out"; u_out="$DIR$tag.kube-scheduler.out"
  if [ "${KSCHED:-1}" != 0 ]; then
    k_ok=true
    # shellcheck disable=SC2086  # KSCHED_FLAGS is a list of flags
    config="$DIR.ksched-config.yaml"; [ "$w" != gang ] || config="$DIR.ksched-gang-config.yaml"
    run "$w" ksched ksched "$BUILD/cmd/ksched/ksched" --config "$config" \
      --kubeconfig "$DIR/kubeconfig" ${KSCHED_FLAGS:-} || { k_ok=false; failed+=("$w: ksched run failed (see above)"); }
    cp "$DIR$tag.ksched.out" "$k_out"
    v=$(field '^violations: \([0-9]*\)$' "$k_out")
    [ "${v:-0}" = 0 ] || failed+=("$w: ksched's placement has $v violation(s)")
    victims=$(field '^victims: \([0-9]*\) .*' "$k_out")
    expected=$(field '^victims: .*(expected \([0-9]*\):.*' "$k_out")
    ! $k_ok || [ "$victims" = "$expected" ] || failed+=("$w: ksched evicted $victims pods, expected $expected")
  fi

  if [ "$w" = gang ] && $k_ok && [ "${BASIC:-1}" != 0 ]; then
    b_out="$DIR.gang-baseline.ksched.out"
    # shellcheck disable=SC2086
    if tag=".gang-baseline" run basic ksched ksched "$BUILD/cmd/ksched/ksched" --config "$DIR.ksched-config.yaml" \
      --kubeconfig "$DIR/kubeconfig" ${KSCHED_FLAGS:-} >/dev/null; then
      awk -v g="$(field '.*average \([0-9]*\) pods\/s.*' "$k_out")" -v b="$(field '.*average \([0-9]*\) pods\/s.*' "$b_out")" 'BEGIN {
        printf "ratio gang/basic (ksched): throughput %.2f (gang %d pods/s, basic %d pods/s)\n", g/b, g, b }'
    fi
  fi
  if [ "$w" = gang ] && [ "${UPSTREAM:-1}" != 0 ]; then
    echo "bench-e2e: kube-scheduler 1.20.2 has no Coscheduling plugin: not run for the gang workload" >&2
  elif [ "${UPSTREAM:-1}" != 0 ]; then
    run "$w" kube-scheduler default-scheduler "$BIN/kube-scheduler" --config "$DIR.kube-scheduler-config.yaml" \
      --port=0 --secure-port=0 --v=0 && u_ok=true || echo "bench-e2e: the kube-scheduler run failed ($w)" >&2
  fi
  l_out="$DIR$tag.noop-binder.out"; l_ok=false
  lw_out="$DIR$tag.noop-binder-watch.out"; lw_ok=false
  if [ "${LIMIT:-0}" = 1 ] || [ "${LIMIT:-0}" = 2 ]; then
    run "$w" noop-binder ksched "$BUILD/bench/e2e/bench_noop_binder" "$DIR/kubeconfig" ksched "$QPS" && l_ok=true ||
      echo "bench-e2e: the no-op binder run failed ($w)" >&2
  fi
  if [ "${LIMIT:-0}" = 2 ]; then
    run "$w" noop-binder-watch ksched "$BUILD/bench/e2e/bench_noop_binder" "$DIR/kubeconfig" ksched "$QPS" \
      --watch-pods && lw_ok=true || echo "bench-e2e: the no-op binder run with a pod watch failed ($w)" >&2
  fi
  limit_ratio() { # LABEL FILE
    awk -v kt="$(field '.*average \([0-9]*\) pods\/s.*' "$k_out")" \
      -v lt="$(field '.*average \([0-9]*\) pods\/s.*' "$2")" -v w="${tag:+ ($w)}" -v l="$1" 'BEGIN {
      printf "ratio ksched/%s%s: throughput %.2f (ksched %d pods/s, %s %d pods/s)\n", l, w, kt/lt, kt, l, lt }'
  }
  if $k_ok && $l_ok; then limit_ratio "no-op binder" "$l_out"; fi
  if $k_ok && $lw_ok; then limit_ratio "no-op binder with a pod watch" "$lw_out"; fi
  if $k_ok && $u_ok; then
    k_tp=$(field '.*average \([0-9]*\) pods\/s.*' "$k_out")
    u_tp=$(field '.*average \([0-9]*\) pods\/s.*' "$u_out")
    k_cpu=$(field '.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*' "$k_out")
    u_cpu=$(field '.*deferred writes: [0-9]* ms total, \([0-9.]*\) ms per pod.*' "$u_out")
    k_rss=$(field '.*peak RSS: \([0-9.]*\) MB' "$k_out")
    u_rss=$(field '.*peak RSS: \([0-9.]*\) MB' "$u_out")
    awk -v kt="$k_tp" -v ut="$u_tp" -v kc="$k_cpu" -v uc="$u_cpu" -v kr="$k_rss" -v ur="$u_rss" -v w="${tag:+ ($w)}" 'BEGIN {
      printf "ratio ksched/kube-scheduler%s: throughput %.1fx, CPU per pod %.2fx (%.1fx less), peak RSS %.2fx\n",
        w, kt/ut, kc/uc, uc/kc, kr/ur }'
  fi
  if $k_ok; then preemption_figures ksched "$k_out"; fi
  if $u_ok; then preemption_figures kube-scheduler "$u_out"; fi
done

if [ ${#failed[@]} -gt 0 ]; then
  printf 'bench-e2e: %s\n' "${failed[@]}" >&2
  exit 1
fi
