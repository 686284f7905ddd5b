#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for ksched's tests and demo:
# etcd (Debian etcd-server) + kube-apiserver 1.20.2 built from Debian's `kubernetes`
# source package. The built binaries are cached outside the repository, keyed by the
# source tarball's sha256, so only the first run pays for the Go build.
#
#   control-plane.sh build            build (or find) kube-apiserver; prints its directory
#   control-plane.sh up [DIR]         start etcd + kube-apiserver, write DIR/kubeconfig
#   control-plane.sh down [DIR]       stop everything started in DIR (by PID)
#   control-plane.sh env [DIR]        print KUBECONFIG=... lines for a shell
#   control-plane.sh stop-apiserver [DIR] / start-apiserver [DIR]   (fault tests)
#   control-plane.sh start-controller-manager [DIR] / stop-controller-manager [DIR]
#       kube-controller-manager 1.20.2 (same cache) with the controllers named in
#       $KSCHED_CP_CONTROLLERS (default persistentvolume-binder: the PV controller that
#       binds claims, for the volume tests); stopped by `down` too
#
# DIR defaults to $KSCHED_CP_DIR or /tmp/ksched-cp. The cache is $KSCHED_CACHE or
# ~/.cache/ksched. KSCHED_CP_AUDIT=1 on `up` also writes an audit log of binding
# requests to DIR/audit.log (kept across stop/start-apiserver; make bench-chaos).
set -euo pipefail

CACHE=${KSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksched}
K8S_VERSION=1.20.2
log() { echo "control-plane: $*" >&2; }
die() { log "error: $*"; exit 1; }

# --- build -----------------------------------------------------------------------------

ensure_deb_src() {
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    local src=/etc/apt/sources.list.d/debian.sources
    [ -f "$src" ] || die "no $src to derive a deb-src entry from; add one for the kubernetes source package"
    sed 's/^Types: deb$/Types: deb-src/' "$src" > /etc/apt/sources.list.d/ksched-deb-src.sources
    apt-get update -qq || true
  fi
}

fetch_source() {
  mkdir -p "$CACHE/src"
  local tarball
  tarball=$(ls "$CACHE"/src/kubernetes_*"$K8S_VERSION".orig.tar.gz 2>/dev/null | head -1 || true)
  if [ -z "$tarball" ]; then
    ensure_deb_src
    log "downloading Debian's kubernetes source package"
    (cd "$CACHE/src" && apt-get source --download-only kubernetes >&2)
    tarball=$(ls "$CACHE"/src/kubernetes_*"$K8S_VERSION".orig.tar.gz | head -1)
  fi
  echo "$tarball"
}

# The binaries the tests and benchmarks run. A cache directory missing some of them (made
# before one was added here) gets only the missing ones built into it.
# KSCHED_K8S_EXTRA adds more (kubelet, for a real node), built into the same directory.
# KSCHED_K8S_BINARIES replaces the default set (`make demo` builds kube-apiserver alone);
# `up` and `start-apiserver` need only kube-apiserver, `start-controller-manager` only
# kube-controller-manager, and build just that when it is missing.
K8S_BINARIES="${KSCHED_K8S_BINARIES:-kube-apiserver kube-scheduler kube-controller-manager} ${KSCHED_K8S_EXTRA:-}"

cmd_build() {
  local tarball sum out b missing="" what=""
  tarball=$(fetch_source)
  sum=$(sha256sum "$tarball" | cut -c1-16)
  out="$CACHE/k8s-$K8S_VERSION-$sum"
  for b in $K8S_BINARIES; do
    [ -x "$out/$b" ] || { missing="$missing $b"; what="$what cmd/$b"; }
  done
  if [ -z "$missing" ]; then
    echo "$out"; return
  fi
  local started=$SECONDS
  log "building$missing $K8S_VERSION from Debian's source package with Go, in one go invocation (first run only:"
  log "  about 7 min for kube-apiserver alone on 2 cores, 3-4 min more per further binary; cached in $CACHE)"
  local work="$CACHE/build"
  rm -rf "$work" && mkdir -p "$work"
  tar xzf "$tarball" -C "$work"
  cd "$work/kubernetes-$K8S_VERSION"
  # Vendored reflect2 v1.0.1 crashes under Go >= 1.18; use Debian's 1.0.2 sources.
  local r=vendor/github.com/modern-go/reflect2
  rm -f $r/*.go $r/*.s
  cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s $r/
  rm -f $r/*_test.go
  mkdir -p .go/src/k8s.io "$CACHE/gocache" "$CACHE/home"
  ln -sfn ../../.. .go/src/k8s.io/kubernetes
  # shellcheck disable=SC2086
  GOPATH=$PWD/.go GOCACHE="$CACHE/gocache" GOPROXY=off CGO_ENABLED=0 HOME="$CACHE/home" \
    make WHAT="${what# }" >&2
  mkdir -p "$out.tmp"
  [ -d "$out" ] && cp -a "$out"/. "$out.tmp/"
  for b in $missing; do cp "_output/bin/$b" "$out.tmp/"; done
  rm -rf "$out" && mv "$out.tmp" "$out"
  cd / && rm -rf "$work"
  log "built$missing in $((SECONDS - started)) s"
  echo "$out"
}

# --- run -------------------------------------------------------------------------------

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A port below the kernel's ephemeral range (where no outgoing connection can be holding
# it: etcd once failed with "address already in use" on one) and not in $1 (taken).
free_port() {
  local p lo=20000 hi=32000 eph_lo _
  if read -r eph_lo _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && [ "$eph_lo" -gt $((lo + 1000)) ]; then
    hi=$((eph_lo - 1))
  fi
  for _ in $(seq 1 200); do
    p=$((lo + RANDOM % (hi - lo)))
    case " ${1:-} " in *" $p "*) continue ;; esac
    port_in_use "$p" || { echo "$p"; return; }
  done
  die "no free loopback port found"
}

make_certs() {
  local d=$1
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=ksched-test-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' > "$d/san.ext"
  openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 3650 -extfile "$d/san.ext" -out "$d/apiserver.crt" 2>/dev/null
  # A client certificate in system:masters, so client-cert auth is testable too.
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin-cert" \
    -keyout "$d/admin.key" -out "$d/admin.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' > "$d/client.ext"
  openssl x509 -req -in "$d/admin.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 3650 -extfile "$d/client.ext" -out "$d/admin.crt" 2>/dev/null
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}

write_kubeconfig() { # file user token
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $DIR/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: local
  context:
    cluster: local
    user: $2
current-context: local
EOF
}

start_apiserver() {
  # shellcheck disable=SC2046
  setsid "$BIN/kube-apiserver" $(cat "$DIR/apiserver.args") > "$DIR/apiserver.log" 2>&1 < /dev/null &
  echo $! > "$DIR/apiserver.pid"
  local i
  for i in $(seq 1 120); do
    if curl -sf --cacert "$DIR/ca.crt" -H "Authorization: Bearer admintoken" \
         "https://127.0.0.1:$API_PORT/readyz" > /dev/null 2>&1; then
      return 0
    fi
    kill -0 "$(cat "$DIR/apiserver.pid")" 2>/dev/null || { tail -20 "$DIR/apiserver.log" >&2; die "kube-apiserver exited"; }
    sleep 0.5
  done
  tail -20 "$DIR/apiserver.log" >&2
  die "kube-apiserver not ready after 60 s"
}

stop_pid() { # pidfile
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

cmd_up() {
  [ -f "$DIR/apiserver.pid" ] && kill -0 "$(cat "$DIR/apiserver.pid")" 2>/dev/null && {
    log "already running in $DIR"; return 0; }
  BIN=$(cmd_build)
  command -v etcd > /dev/null || die "etcd not found (apt-get install etcd-server)"
  rm -rf "$DIR" && mkdir -p "$DIR"
  make_certs "$DIR"
  printf 'admintoken,admin,admin,system:masters\nkschedtoken,ksched,ksched-uid\n' > "$DIR/tokens.csv"
  local etcd_port peer_port attempt healthy=false
  # A port can still be taken between the check and etcd's bind: then try new ones.
  for attempt in 1 2 3; do
    etcd_port=$(free_port); peer_port=$(free_port "$etcd_port"); API_PORT=$(free_port "$etcd_port $peer_port")
    echo "$API_PORT" > "$DIR/apiserver.port"; echo "$etcd_port" > "$DIR/etcd.port"
    rm -rf "$DIR/etcd"
    setsid etcd --data-dir "$DIR/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
      --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-cluster "default=http://127.0.0.1:$peer_port" > "$DIR/etcd.log" 2>&1 < /dev/null &
    echo $! > "$DIR/etcd.pid"
    for _ in $(seq 1 100); do
      if curl -sf "http://127.0.0.1:$etcd_port/health" > /dev/null 2>&1; then healthy=true; break; fi
      kill -0 "$(cat "$DIR/etcd.pid")" 2>/dev/null || break
      sleep 0.1
    done
    $healthy && break
    log "etcd did not start (attempt $attempt): $(tail -1 "$DIR/etcd.log")"
    stop_pid "$DIR/etcd.pid"
  done
  $healthy || die "etcd did not start; see $DIR/etcd.log"
  cat > "$DIR/apiserver.args" <<EOF
--etcd-servers=http://127.0.0.1:$etcd_port --secure-port=$API_PORT --bind-address=127.0.0.1
--advertise-address=127.0.0.1 --tls-cert-file=$DIR/apiserver.crt --tls-private-key-file=$DIR/apiserver.key
--client-ca-file=$DIR/ca.crt --service-account-key-file=$DIR/sa.pub
--service-account-signing-key-file=$DIR/sa.key --service-account-issuer=https://kubernetes.default.svc
--token-auth-file=$DIR/tokens.csv --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24
--endpoint-reconciler-type=none --disable-admission-plugins=ServiceAccount,TaintNodesByCondition
--watch-cache=true
EOF
  # Opt-in audit log for the chaos benchmark, which counts binding requests per pod to
  # show none was bound twice: only pods/binding creates (Metadata: who, which pod, the
  # response code), nothing else. In apiserver.args, so restarts keep it; the log file is
  # appended to, so it spans every apiserver incarnation.
  if [ "${KSCHED_CP_AUDIT:-0}" = 1 ]; then
    cat > "$DIR/audit-policy.yaml" <<'EOP'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create]
  resources: [{group: "", resources: [pods/binding, bindings]}]
- level: None
EOP
    echo "--audit-policy-file=$DIR/audit-policy.yaml --audit-log-path=$DIR/audit.log" >> "$DIR/apiserver.args"
  fi
  start_apiserver
  # When an owner process is named, a reaper stops everything once it is gone, so a
  # crashed test binary never leaves etcd or kube-apiserver behind.
  if [ -n "${KSCHED_CP_OWNER_PID:-}" ]; then
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; bash "$2" down "$3" >/dev/null 2>&1' \
      reaper "$KSCHED_CP_OWNER_PID" "$0" "$DIR" > /dev/null 2>&1 < /dev/null &
    echo $! > "$DIR/reaper.pid"
  fi
  write_kubeconfig "$DIR/kubeconfig" admin admintoken
  write_kubeconfig "$DIR/ksched.kubeconfig" ksched kschedtoken
  log "up: kube-apiserver https://127.0.0.1:$API_PORT (kubeconfig $DIR/kubeconfig)"
}

start_controller_manager() {
  [ -f "$DIR/controller-manager.pid" ] && kill -0 "$(cat "$DIR/controller-manager.pid")" 2>/dev/null && return 0
  local controllers=${KSCHED_CP_CONTROLLERS:-persistentvolume-binder}
  # No serving ports (--port=0 --secure-port=0): readiness is read from the log, where
  # each controller reports `Started "<name>"`.
  setsid "$BIN/kube-controller-manager" --kubeconfig="$DIR/kubeconfig" --controllers="$controllers" \
    --leader-elect=false --port=0 --secure-port=0 --pvclaimbinder-sync-period=1s \
    --service-account-private-key-file="$DIR/sa.key" --root-ca-file="$DIR/ca.crt" \
    > "$DIR/controller-manager.log" 2>&1 < /dev/null &
  echo $! > "$DIR/controller-manager.pid"
  local first=${controllers%%,*} i
  for i in $(seq 1 120); do
    if grep -q "Started \"$first\"" "$DIR/controller-manager.log" 2>/dev/null; then
      log "kube-controller-manager up ($controllers)"
      return 0
    fi
    kill -0 "$(cat "$DIR/controller-manager.pid")" 2>/dev/null || {
      tail -20 "$DIR/controller-manager.log" >&2; die "kube-controller-manager exited"; }
    sleep 0.5
  done
  tail -20 "$DIR/controller-manager.log" >&2
  die "kube-controller-manager did not start $first within 60 s"
}

cmd_down() {
  stop_pid "$DIR/controller-manager.pid"
  stop_pid "$DIR/apiserver.pid"
  stop_pid "$DIR/etcd.pid"
  [ "${BASHPID:-$$}" = "$(cat "$DIR/reaper.pid" 2>/dev/null)" ] || stop_pid "$DIR/reaper.pid"
  log "down: $DIR"
}

cmd_env() {
  echo "KUBECONFIG=$DIR/kubeconfig"
  echo "KSCHED_APISERVER=https://127.0.0.1:$(cat "$DIR/apiserver.port")"
  echo "KSCHED_ETCD=http://127.0.0.1:$(cat "$DIR/etcd.port")"
  echo "KSCHED_CA=$DIR/ca.crt"
}

main() {
  local cmd=${1:-}; shift || true
  DIR=$(realpath -m "${1:-${KSCHED_CP_DIR:-/tmp/ksched-cp}}")
  case "$cmd" in
    build) cmd_build ;;
    up) K8S_BINARIES=kube-apiserver; cmd_up ;;
    down) cmd_down ;;
    env) cmd_env ;;
    stop-apiserver) stop_pid "$DIR/apiserver.pid" ;;
    start-apiserver) K8S_BINARIES=kube-apiserver; BIN=$(cmd_build); API_PORT=$(cat "$DIR/apiserver.port"); start_apiserver ;;
    start-controller-manager) K8S_BINARIES=kube-controller-manager; BIN=$(cmd_build); start_controller_manager ;;
    stop-controller-manager) stop_pid "$DIR/controller-manager.pid" ;;
    *) echo "usage: $0 build|up|down|env|stop-apiserver|start-apiserver|start-controller-manager|stop-controller-manager [DIR]" >&2
       exit 2 ;;
  esac
}
main "$@"
