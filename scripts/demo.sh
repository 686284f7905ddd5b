#!/usr/bin/env bash
# make demo: a local control plane (etcd + kube-apiserver 1.20.2), ksched running as the
# least-privileged "ksched" user, sample nodes and pods that exercise the default
# plugins, a table of where each pod went (or why not), `ksched explain` on the pod that
# fits nowhere, then a node that lets it in, live, and explain again. Everything is torn down at the end (also on Ctrl-C).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/scripts/control-plane.sh"
DIR=${KSCHED_DEMO_DIR:-/tmp/ksched-demo}
KSCHED_PID=""

cleanup() {
  [ -n "$KSCHED_PID" ] && kill "$KSCHED_PID" 2>/dev/null && wait "$KSCHED_PID" 2>/dev/null || true
  bash "$CP" down "$DIR" || true
}
trap cleanup EXIT INT TERM

KSCHED_CP_OWNER_PID=$$ bash "$CP" up "$DIR"
eval "$(bash "$CP" env "$DIR")"
api() { # METHOD PATH [BODY] [CONTENT-TYPE]
  curl -sS --fail-with-body --cacert "$KSCHED_CA" -H "Authorization: Bearer admintoken" \
    -H "Content-Type: ${4:-application/json}" -X "$1" "$KSCHED_APISERVER$2" ${3:+--data-binary "$3"}
}
# Creates every object of a multi-document YAML file (the kinds our manifests use).
apply() {
  local doc kind ns path
  while IFS= read -r -d $'\x1e' doc; do
    kind=$(sed -n 's/^kind: *//p' <<<"$doc" | head -1)
    ns=$(sed -n 's/^  namespace: *//p' <<<"$doc" | head -1)
    case "$kind" in
      ServiceAccount) path=/api/v1/namespaces/$ns/serviceaccounts ;;
      ClusterRole) path=/apis/rbac.authorization.k8s.io/v1/clusterroles ;;
      ClusterRoleBinding) path=/apis/rbac.authorization.k8s.io/v1/clusterrolebindings ;;
      Role) path=/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/roles ;;
      RoleBinding) path=/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/rolebindings ;;
      "") continue ;;
      *) echo "apply: unsupported kind $kind" >&2; return 1 ;;
    esac
    api POST "$path" "$doc" application/yaml > /dev/null
  done < <(awk '/^---$/ {printf "\x1e"; next} {print} END {printf "\x1e"}' "$1")
}
node() { # NAME CPU MEMORY ZONE [TAINT-JSON]
  api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",
    \"labels\":{\"kubernetes.io/hostname\":\"$1\",\"topology.kubernetes.io/zone\":\"$4\"}},
    \"spec\":{\"taints\":[${5:-}]},
    \"status\":{\"capacity\":{\"cpu\":\"$2\",\"memory\":\"$3\",\"pods\":\"110\"},
    \"allocatable\":{\"cpu\":\"$2\",\"memory\":\"$3\",\"pods\":\"110\"}}}" > /dev/null
}
pod() { # NAME CPU [EXTRA-SPEC-JSON]
  api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
    \"metadata\":{\"name\":\"$1\"},\"spec\":{\"schedulerName\":\"ksched\",${3:+$3,}
    \"containers\":[{\"name\":\"app\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"$2\",\"memory\":\"256Mi\"}}}]}}" > /dev/null
}
table() {
  printf '%-16s %-12s %s\n' POD NODE "REASON (PodScheduled=False)"
  api GET /api/v1/namespaces/default/pods | jq -r '.items[] |
    [.metadata.name, (.spec.nodeName // "<pending>"),
     ((.status.conditions // []) | map(select(.type=="PodScheduled" and .status=="False")) | .[0].message // "")]
    | @tsv' | while IFS=$'\t' read -r n nd msg; do printf '%-16s %-12s %s\n' "$n" "$nd" "$msg"; done
}

echo "== RBAC for the ksched user (manifests/rbac.yaml)"
apply "$ROOT/manifests/rbac.yaml"

echo "== nodes: two small, one large, one tainted gpu node, in two zones"
node small-a 2 4Gi zone-a
node small-b 2 4Gi zone-b
node large-a 8 32Gi zone-a
node gpu-b 8 32Gi zone-b '{"key":"dedicated","value":"gpu","effect":"NoSchedule"}'

echo "== starting ksched (as user ksched, config manifests/examples/demo-config.yaml)"
"$BUILD/cmd/ksched/ksched" --config "$ROOT/manifests/examples/demo-config.yaml" \
  --kubeconfig "$DIR/ksched.kubeconfig" --secure-port "${KSCHED_PORT:-10259}" --bind-address 127.0.0.1 \
  --v=2 > "$DIR/ksched.log" 2>&1 &
KSCHED_PID=$!

echo "== pods"
pod web-1 500m
pod web-2 500m
pod web-3 500m
pod gpu-job 1 '"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}],"nodeSelector":{"kubernetes.io/hostname":"gpu-b"}'
pod zone-b-only 250m '"nodeSelector":{"topology.kubernetes.io/zone":"zone-b"}'
pod too-big 12
sleep 3
table

PORT=${KSCHED_PORT:-10259}
printf 'admintoken\n' > "$DIR/explain-token"
explain() { # [NAMESPACE/NAME]
  "$BUILD/cmd/ksched/ksched" explain --server "https://127.0.0.1:$PORT" --insecure-skip-tls-verify \
    --token-file "$DIR/explain-token" "$@"
}
echo
echo "== ksched explain: every pending pod, then why too-big fits nowhere"
explain
echo
explain default/too-big

echo
echo "== adding node huge-a (16 cpu): too-big should be scheduled within a couple of seconds"
node huge-a 16 64Gi zone-a
for _ in $(seq 1 20); do
  [ "$(api GET /api/v1/namespaces/default/pods/too-big | jq -r '.spec.nodeName // ""')" = huge-a ] && break
  sleep 0.25
done
table
echo
echo "== ksched explain default/too-big, now that it is scheduled"
explain default/too-big

echo
echo "== events"
api GET /apis/events.k8s.io/v1/namespaces/default/events |
  jq -r '.items[] | "\(.type)\t\(.reason)\t\(.regarding.name)\t\(.note)"' | sort -k3,3 -s | head -20
echo
echo "== https://127.0.0.1:$PORT/healthz (anonymous): $(curl -sk "https://127.0.0.1:$PORT/healthz")"
echo "== /metrics without a token: HTTP $(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT/metrics")"
echo "== /metrics with an authorized token (TokenReview + SubjectAccessReview), scheduler_* samples:"
curl -sk -H "Authorization: Bearer admintoken" "https://127.0.0.1:$PORT/metrics" |
  grep -E '^scheduler_(schedule_attempts_total|pending_pods|cache_size|pod_scheduling_attempts_count)' | head -12
echo
echo "== ksched log (last lines, $DIR/ksched.log)"
tail -5 "$DIR/ksched.log"
kill -TERM "$KSCHED_PID"; wait "$KSCHED_PID" && echo "ksched exited cleanly on SIGTERM"
KSCHED_PID=""
