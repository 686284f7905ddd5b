#!/usr/bin/env bash
# make bench-client: client CPU per request and req/s, nghttp2 vs libcurl vs cpprestsdk, against a
# real kube-apiserver on loopback.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"
CP="$ROOT/scripts/control-plane.sh"
DIR=${KSCHED_BENCH_DIR:-/tmp/ksched-bench-client}
trap 'bash "$CP" down "$DIR" >/dev/null 2>&1 || true' EXIT INT TERM
bash "$CP" up "$DIR" 2>/dev/null
"$BUILD/bench/client/bench_client" "$DIR/kubeconfig" "${REQUESTS:-3000}"
