#!/usr/bin/env bash
# make e2e-deploy: ksched deployed as users deploy it, on a one-node cluster on this machine.
#
# Everything runs inside a network namespace this script creates (ksched-e2e), so every
# address any component, pod or probe talks to is this script's own:
#   - node address 10.201.0.1 (a veth inside the namespace); pods on a bridge (cni0,
#     10.202.0.0/24, Debian's CNI bridge + host-local plugins) behind it;
#   - etcd on the namespace's loopback; kube-apiserver 1.20.2 on :443, advertising the
#     node address; the `kubernetes` Service's ClusterIP 10.0.0.1 is also an address of
#     the namespace, so a pod's in-cluster config (KUBERNETES_SERVICE_HOST=10.0.0.1:443)
#     reaches the apiserver directly: it stands in for kube-proxy for that one Service;
#   - kube-controller-manager 1.20.2 (Deployments, ReplicaSets, ServiceAccount tokens,
#     garbage collection), kube-scheduler 1.20.2 as the default scheduler (it places
#     ksched's own pods), a kubelet 1.20.2 on containerd (Debian's, CRI) with runc, and
#     the pause image built from the source package's build/pause;
#   - kubectl 1.20.2 from the same source package.
# The Kubernetes binaries come from tests/e2e/control-plane.sh's cache (built once).
#
# Then: the image (scripts/build-image.sh into this cluster's containerd),
# `kubectl apply -f manifests/` unchanged (the image reference is ksched:latest, the
# name the image is loaded under), the Deployment Available (probes on 10259 pass), one
# replica holding Lease kube-system/ksched, pods with schedulerName ksched Running on
# the node, the leader pod deleted, the other replica taking over and scheduling the
# next pods. Everything is torn down at the end (KEEP=1 leaves it up for a look).
#
# Usage: scripts/e2e-deploy.sh [DIR]   (DIR default /tmp/ksched-e2e; must be root)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(realpath -m "${1:-/tmp/ksched-e2e}")
NS=ksched-e2e
NODE=ksched-node
NODE_IP=10.201.0.1
CLUSTER_IP=10.0.0.1
POD_CIDR=10.202.0.0/24
PAUSE=localhost/ksched/pause:3.2
SOCK=/run/ksched-e2e/containerd.sock
START=$(date +%s)
step() { echo "e2e-deploy [$(( $(date +%s) - START )) s]: $*" >&2; }
die() {
  echo "e2e-deploy: FAILED: $*" >&2
  diagnose || true
  exit 1
}
[ "$(id -u)" = 0 ] || { echo "e2e-deploy: needs root (network namespace, containerd, kubelet)" >&2; exit 2; }

in_ns() { nsenter --net="/run/netns/$NS" "$@"; }
k() { in_ns "$BIN/kubectl" --kubeconfig "$DIR/admin.kubeconfig" "$@"; }

# --- packages and binaries ---------------------------------------------------------------

need_packages() {
  bash "$ROOT/scripts/apt-need.sh" e2e-deploy containerd runc containernetworking-plugins buildah debootstrap \
    iproute2 util-linux gcc libc6-dev etcd-server openssl curl
}

# The pause container of the same source package (build/pause/linux/pause.c), static, in
# an image of its own: the sandbox every pod's namespaces hang on.
pause_image() {
  if ctr --address "$SOCK" -n k8s.io images ls -q | grep -qx "$PAUSE"; then return; fi
  step "building the pause image from the source package's build/pause"
  local tarball src work
  tarball=$(ls "${KSCHED_CACHE:-$HOME/.cache/ksched}"/src/kubernetes_*1.20.2.orig.tar.gz | head -1)
  work=$(mktemp -d)
  tar -xzf "$tarball" -C "$work" --wildcards '*/build/pause/linux/pause.c'
  src=$(find "$work" -name pause.c | head -1)
  mkdir -p "$work/root"
  gcc -Os -static -Wall -Werror -DVERSION=3.2-ksched -o "$work/root/pause" "$src"
  strip "$work/root/pause"
  local c
  c=$(buildah --storage-driver overlay from scratch)
  buildah --storage-driver overlay copy "$c" "$work/root/pause" /pause >/dev/null
  buildah --storage-driver overlay config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  buildah --storage-driver overlay commit --quiet --rm "$c" "$PAUSE" >/dev/null
  buildah --storage-driver overlay push --quiet "$PAUSE" "docker-archive:$work/pause.tar:$PAUSE" >&2
  ctr --address "$SOCK" -n k8s.io images import "$work/pause.tar" >&2
  rm -rf "$work"
}

# --- the namespace and the node ---------------------------------------------------------

netns_up() {
  step "network namespace $NS: node $NODE_IP, ClusterIP $CLUSTER_IP, pods $POD_CIDR"
  ip netns add "$NS"
  in_ns ip link set lo up
  in_ns ip link add kn0 type veth peer name kn1
  in_ns ip addr add "$NODE_IP/24" dev kn0
  in_ns ip addr add "$CLUSTER_IP/32" dev kn0
  in_ns ip link set kn0 up
  in_ns ip link set kn1 up
  in_ns ip route add default dev kn0 2>/dev/null || true
}

certs() {
  local d=$DIR/pki
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=ksched-e2e-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:%s,IP:%s,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
    "$CLUSTER_IP" "$NODE_IP" > "$d/san.ext"
  openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 30 -extfile "$d/san.ext" -out "$d/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  # Static tokens: the admin (kubectl, controller-manager, kube-scheduler) and the
  # kubelet (system:masters too: no Node authorizer in this one-node cluster).
  printf 'admintoken,admin,admin,system:masters\nkubelettoken,system:node:%s,kubelet,system:masters\n' "$NODE" \
    > "$d/tokens.csv"
  local who token
  for who in admin kubelet; do
    token=${who}token
    cat > "$DIR/$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$NODE_IP:443", certificate-authority: "$d/ca.crt"}
users:
- name: $who
  user: {token: $token}
contexts:
- name: e2e
  context: {cluster: e2e, user: $who}
current-context: e2e
EOF
  done
}

# Starts a process inside the namespace, logging to DIR/logs/NAME.log, pid in DIR/pids.
start() {
  local name=$1; shift
  mkdir -p "$DIR/logs" "$DIR/pids"
  # The process writes its own pid (nsenter and setsid may fork on the way).
  nsenter --net="/run/netns/$NS" setsid bash -c 'echo $$ > "$0"; exec "$@"' "$DIR/pids/$name" "$@" \
    > "$DIR/logs/$name.log" 2>&1 < /dev/null &
  disown
  local i
  for ((i = 0; i < 50; i++)); do [ -s "$DIR/pids/$name" ] && return; sleep 0.1; done
  die "$name did not start"
}

wait_for() { # what seconds command...
  local what=$1 secs=$2 i; shift 2
  step "waiting for $what (up to $secs s)"
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" > /dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "$what: not within $secs s"
}

control_plane_up() {
  local etcd_dir=$DIR/etcd
  start etcd etcd --data-dir "$etcd_dir" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
    --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380
  wait_for "etcd" 30 in_ns curl -sf http://127.0.0.1:2379/health
  local p=$DIR/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=443 --advertise-address="$NODE_IP" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --token-auth-file="$p/tokens.csv" \
    --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true
  wait_for "kube-apiserver /readyz" 90 in_ns curl -sf --cacert "$p/ca.crt" -H "Authorization: Bearer admintoken" \
    "https://$NODE_IP:443/readyz"
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$DIR/admin.kubeconfig" \
    --controllers=deployment,replicaset,serviceaccount,serviceaccount-token,garbagecollector,nodelifecycle \
    --leader-elect=false --port=0 --secure-port=0 --service-account-private-key-file="$p/sa.key" \
    --root-ca-file="$p/ca.crt"
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$DIR/admin.kubeconfig" --leader-elect=false \
    --port=0 --secure-port=0
}

containerd_up() {
  mkdir -p "$DIR/containerd" "$DIR/cni" /run/ksched-e2e
  ip netns list | awk '{print $1}' | grep '^cni-' > "$DIR/netns-before" || true
  cat > "$DIR/cni/10-ksched-e2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "ksched-e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$DIR/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  cat > "$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "/run/ksched-e2e/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  # Never below containerd's own oom_score_adj: the kubelet asks -998 for every sandbox,
  # which needs CAP_SYS_RESOURCE, which the machines this runs on do not grant root.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
EOF
  start containerd containerd --config "$DIR/containerd/config.toml"
  wait_for "containerd" 30 ctr --address "$SOCK" version
}

kubelet_up() {
  mkdir -p "$DIR/kubelet"
  cat > "$DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
resolvConf: /etc/resolv.conf
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
  start kubelet "$BIN/kubelet" --config="$DIR/kubelet/config.yaml" --kubeconfig="$DIR/kubelet.kubeconfig" \
    --root-dir="$DIR/kubelet/root" --cert-dir="$DIR/kubelet/pki" --hostname-override="$NODE" \
    --node-ip="$NODE_IP" --container-runtime=remote --container-runtime-endpoint="unix://$SOCK" \
    --pod-infra-container-image="$PAUSE" --oom-score-adj=0 --v=1
  wait_for "node $NODE Ready" 120 node_ready
}
node_ready() { [ "$(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }

# --- diagnosis and teardown ---------------------------------------------------------------

diagnose() {
  [ -n "${BIN:-}" ] && [ -f "$DIR/admin.kubeconfig" ] || return 0
  echo "---- kubectl get pods,nodes -A -o wide" >&2
  k get pods,nodes -A -o wide >&2 || true
  echo "---- kubectl -n kube-system describe deploy/ksched pods -l app.kubernetes.io/name=ksched" >&2
  k -n kube-system describe deploy/ksched >&2 || true
  k -n kube-system describe pods -l app.kubernetes.io/name=ksched >&2 || true
  local p
  for p in $(k -n kube-system get pods -l app.kubernetes.io/name=ksched -o name 2>/dev/null); do
    echo "---- kubectl -n kube-system logs $p" >&2
    k -n kube-system logs "$p" --tail=40 >&2 || true
  done
  echo "---- kubectl get events -A" >&2
  k get events -A --sort-by=.lastTimestamp 2>/dev/null | tail -30 >&2 || true
  for p in kubelet kube-controller-manager kube-scheduler containerd; do
    echo "---- $p (last lines)" >&2
    tail -8 "$DIR/logs/$p.log" >&2 2>/dev/null || true
  done
}

teardown() {
  [ "${KEEP:-0}" = 1 ] && { step "KEEP=1: left up (kubectl: nsenter --net=/run/netns/$NS $BIN/kubectl --kubeconfig $DIR/admin.kubeconfig)"; return; }
  step "tearing down"
  local name pid
  # The kubelet first, so it restarts nothing; then every container and sandbox.
  for name in kubelet kube-scheduler kube-controller-manager; do
    [ -f "$DIR/pids/$name" ] && kill "$(cat "$DIR/pids/$name")" 2>/dev/null || true
  done
  if ctr --address "$SOCK" version > /dev/null 2>&1; then
    local t
    for t in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$SOCK" -n k8s.io tasks kill -s SIGKILL "$t" > /dev/null 2>&1 || true
    done
    sleep 1
    for t in $(ctr --address "$SOCK" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$SOCK" -n k8s.io tasks rm -f "$t" > /dev/null 2>&1 || true
      ctr --address "$SOCK" -n k8s.io containers rm "$t" > /dev/null 2>&1 || true
    done
  fi
  for name in containerd kube-apiserver etcd; do
    [ -f "$DIR/pids/$name" ] && kill "$(cat "$DIR/pids/$name")" 2>/dev/null || true
  done
  sleep 1
  pkill -9 -f "containerd-shim-runc-v2 -namespace k8s.io .*-address $SOCK" 2>/dev/null || true
  for name in kubelet kube-scheduler kube-controller-manager containerd kube-apiserver etcd; do
    [ -f "$DIR/pids/$name" ] && kill -9 "$(cat "$DIR/pids/$name")" 2>/dev/null || true
  done
  # Mounts the kubelet and containerd left under DIR and containerd's state (volumes,
  # rootfs, shm), deepest first.
  awk -v d="$DIR/" -v s=/run/ksched-e2e/ 'index($2, d) == 1 || index($2, s) == 1 {print $2}' /proc/mounts |
    sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  # Pod network namespaces (named cni-* by containerd) that were not there before this
  # cluster's containerd started, then our own.
  local n
  for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^cni-'); do
    grep -qx "$n" "$DIR/netns-before" 2>/dev/null || ip netns del "$n" 2>/dev/null || true
  done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf /run/ksched-e2e 2>/dev/null || true
}

# --- the checks -------------------------------------------------------------------------------

# A pod with schedulerName ksched, running the pause image.
create_pod() { # name
  k apply -f - > /dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {app: e2e-deploy}}
spec:
  schedulerName: ksched
  terminationGracePeriodSeconds: 1
  containers:
  - {name: pause, image: $PAUSE, imagePullPolicy: Never, resources: {requests: {cpu: 10m, memory: 8Mi}}}
EOF
}
pod_running() { # name
  [ "$(k get pod "$1" -o jsonpath='{.status.phase}/{.spec.nodeName}')" = "Running/$NODE" ]
}
scheduled_by_ksched() { # name: the Scheduled event's reporting controller is ksched
  k get events --field-selector "involvedObject.name=$1,reason=Scheduled" \
    -o jsonpath='{.items[*].reportingComponent}{.items[*].source.component}' | grep -q ksched
}
lease_holder() { k -n kube-system get lease ksched -o jsonpath='{.spec.holderIdentity}'; }
holder_is() { [ "$(lease_holder)" != "" ] && [[ "$(lease_holder)" == "$1"_* ]]; }
holder_is_not() { local h; h=$(lease_holder); [ -n "$h" ] && [[ "$h" != "$1"_* ]] && k -n kube-system get pod "${h%%_*}" > /dev/null; }

main() {
  need_packages
  step "Kubernetes 1.20.2 binaries (tests/e2e/control-plane.sh build; first run builds kubelet and kubectl)"
  BIN=$(KSCHED_K8S_EXTRA="kubelet kubectl" bash "$ROOT/tests/e2e/control-plane.sh" build)
  if ip netns list | grep -qw "$NS"; then
    step "a cluster of an earlier run is still up: tearing it down first"
    KEEP=0 teardown
  fi
  rm -rf "$DIR" && mkdir -p "$DIR"
  trap teardown EXIT
  netns_up
  certs
  control_plane_up
  containerd_up
  pause_image
  step "the ksched image (scripts/build-image.sh into this cluster's containerd)"
  CONTAINERD_ADDRESS=$SOCK bash "$ROOT/scripts/build-image.sh" ksched:latest
  kubelet_up

  step "kubectl apply -f manifests/ (unchanged: image ksched:latest)"
  k apply -f "$ROOT/manifests/" >&2
  step "waiting for Deployment kube-system/ksched to be Available (startup/readiness probes on 10259)"
  k -n kube-system rollout status deploy/ksched --timeout=180s >&2 || die "Deployment not Available"
  k -n kube-system wait deploy/ksched --for=condition=Available --timeout=60s >&2 || die "Deployment not Available"
  step "waiting for a replica to hold Lease kube-system/ksched (up to 60 s)"
  local leader="" i
  for ((i = 0; i < 120; i++)); do
    leader=$(lease_holder); leader=${leader%%_*}
    [ -n "$leader" ] && k -n kube-system get pod "$leader" > /dev/null 2>&1 && break
    leader=""; sleep 0.5
  done
  [ -n "$leader" ] || die "no ksched replica holds Lease kube-system/ksched (holder: '$(lease_holder)')"
  step "leader: $leader ($(k -n kube-system get pods -l app.kubernetes.io/name=ksched -o name | wc -l) replicas)"

  for i in 1 2 3; do create_pod "e2e-before-$i"; done
  for i in 1 2 3; do
    wait_for "pod e2e-before-$i Running on $NODE" 90 pod_running "e2e-before-$i"
    scheduled_by_ksched "e2e-before-$i" || die "pod e2e-before-$i has no Scheduled event from ksched"
  done
  k get events --field-selector "involvedObject.name=e2e-before-1,reason=Scheduled" >&2

  step "deleting the leader pod $leader"
  k -n kube-system delete pod "$leader" --wait=false >&2
  wait_for "the other replica to take Lease kube-system/ksched" 90 holder_is_not "$leader"
  local new_leader; new_leader=$(lease_holder); new_leader=${new_leader%%_*}
  step "new leader: $new_leader"
  for i in 1 2 3; do create_pod "e2e-after-$i"; done
  for i in 1 2 3; do
    wait_for "pod e2e-after-$i Running on $NODE" 90 pod_running "e2e-after-$i"
    scheduled_by_ksched "e2e-after-$i" || die "pod e2e-after-$i has no Scheduled event from ksched"
  done
  k -n kube-system rollout status deploy/ksched --timeout=180s >&2 || die "Deployment not Available again after the leader's deletion"
  step "PASS: image built and loaded, Deployment Available, leader $leader, 3 pods Running; leader deleted, $new_leader took over, 3 more pods Running ($(( $(date +%s) - START )) s)"
  echo "e2e-deploy: PASS"
}
main "$@"
