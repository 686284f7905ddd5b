#!/usr/bin/env bash
# The demo: a local control plane (etcd + kube-apiserver 1.20.2), sample nodes and pods
# for schedulerName "ksched", then ksched itself; shows where the pods landed and tears
# everything down (also on Ctrl-C).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/tests/e2e/control-plane.sh"
DIR=${KSCHED_DEMO_DIR:-/tmp/ksched-demo}

cleanup() { bash "$CP" down "$DIR" || true; }
trap cleanup EXIT INT TERM

bash "$CP" up "$DIR"
eval "$(bash "$CP" env "$DIR")"
api() { # METHOD PATH [BODY]
  curl -sS --fail-with-body --cacert "$KSCHED_CA" -H "Authorization: Bearer admintoken" \
    -H "Content-Type: application/json" -X "$1" "$KSCHED_APISERVER$2" ${3:+--data "$3"}
}

echo "== creating 3 nodes and 6 pods (schedulerName: ksched)"
for i in 1 2 3; do
  api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"demo-node-$i\",
    \"labels\":{\"kubernetes.io/hostname\":\"demo-node-$i\",\"topology.kubernetes.io/zone\":\"zone-$((i % 2))\"}},
    \"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},
    \"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}" > /dev/null
done
for i in 1 2 3 4 5 6; do
  api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
    \"metadata\":{\"name\":\"demo-pod-$i\"},\"spec\":{\"schedulerName\":\"ksched\",
    \"containers\":[{\"name\":\"app\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"}}}]}}" > /dev/null
done

echo "== running ksched against $KSCHED_APISERVER"
"$BUILD/cmd/ksched/ksched" --kubeconfig "$DIR/ksched.kubeconfig" --v=1 || {
  echo "ksched exited with an error"; exit 1; }

echo "== pods (NAME NODE)"
api GET /api/v1/namespaces/default/pods | jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "<pending>")"'
