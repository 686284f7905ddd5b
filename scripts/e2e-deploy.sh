#!/usr/bin/env bash
# make e2e-deploy: ksched deployed as users deploy it, on a one-node cluster on this machine.
#
# The cluster runs inside a network namespace this script creates (ksched-e2e): both ends
# of its veth are inside it, so every address a component, pod or probe talks to is the
# script's own and nothing of the cluster can reach out:
#   - node address 10.201.0.1; pods on a bridge (cni0, 10.202.0.0/24, Debian's CNI bridge
#     + host-local plugins) behind it;
#   - etcd on the namespace's loopback; kube-apiserver 1.20.2 on :443, advertising the
#     node address; the `kubernetes` Service's ClusterIP 10.0.0.1 is also an address of
#     the namespace, so a pod's in-cluster config (KUBERNETES_SERVICE_HOST=10.0.0.1:443)
#     reaches the apiserver directly: it stands in for kube-proxy for that one Service;
#   - kube-controller-manager 1.20.2 (Deployments, ReplicaSets, ServiceAccount tokens,
#     node lifecycle, garbage collection), kube-scheduler 1.20.2 as the default scheduler
#     (it places ksched's own pods), a kubelet 1.20.2 on containerd (Debian's, CRI) with
#     runc, and the pause image built from the source package's build/pause;
#   - kubectl 1.20.2 from the same source package.
# The kubelet and containerd also share a private mount namespace in which /var/log,
# /var/lib/cni and /run/containerd are this run's own directories, so neither writes
# into (or cleans up) a real kubelet's or containerd's files on the machine. The kernel
# settings the kubelet changes (vm.overcommit_memory, kernel.panic, ...) are restored at
# the end. Only the build steps go outside: the Kubernetes binaries (tests/harness/
# control-plane.sh's cache: built once from Debian's source package) and the image
# (scripts/build-image.sh: debootstrap and apt use the machine's Debian archive, as apt
# does).
#
# The checks: the image (scripts/build-image.sh into this cluster's containerd),
# `kubectl apply -f manifests/` unchanged (the image reference is ksched:latest, the
# name the image is loaded under), the Deployment Available (probes on 10259 pass), one
# replica holding Lease kube-system/ksched, pods with schedulerName ksched Running on
# the node with ksched's Scheduled event, the leader pod deleted, the other replica
# taking over and scheduling the next pods. A failure prints the cluster's state, the
# ksched pods' descriptions and logs, and the components' logs. Everything is torn down
# at the end (KEEP=1 leaves it up for a look). One run at a time (a lock).
#
# Usage: scripts/e2e-deploy.sh [DIR]   (DIR default /tmp/ksched-e2e; must be root)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(realpath -m "${1:-/tmp/ksched-e2e}")
CACHE=${KSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksched}
NS=ksched-e2e
RUN=/run/ksched-e2e
MNT=$RUN/mnt
NODE=ksched-node
NODE_IP=10.201.0.1
CLUSTER_IP=10.0.0.1
POD_CIDR=10.202.0.0/24
PAUSE=localhost/ksched/pause:3.2
SOCK=$RUN/containerd.sock
MARK=.ksched-e2e-dir
# What the kubelet's setupKernelTunables writes (pkg/kubelet/cm/container_manager_linux.go).
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"
START=$(date +%s)
BIN=""
step() { echo "e2e-deploy [$(( $(date +%s) - START )) s]: $*" >&2; }
die() { echo "e2e-deploy: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "e2e-deploy: needs root (network namespace, containerd, kubelet)" >&2; exit 2; }

in_ns() { nsenter --net="/run/netns/$NS" "$@"; }
k() {
  in_ns "$BIN/kubectl" --kubeconfig "$DIR/admin.kubeconfig" --cache-dir "$DIR/kube-cache" --request-timeout=15s "$@"
}
# shellcheck source=scripts/image-store.sh
source "$ROOT/scripts/image-store.sh"

need_packages() {
  bash "$ROOT/scripts/apt-need.sh" e2e-deploy containerd runc containernetworking-plugins buildah debootstrap \
    iproute2 util-linux gcc libc6-dev etcd-server openssl curl
}

# The pause container of the same source package (build/pause/linux/pause.c), static, in
# an image of its own (kept in the build's image store): the sandbox every pod's
# namespaces hang on.
pause_image() {
  if ! image_exists "$PAUSE"; then
    step "building the pause image from the source package's build/pause"
    local work tarball src c
    work=$(mktemp -d)
    tarball=$(ls "$CACHE"/src/kubernetes_*1.20.2.orig.tar.gz | head -1)
    tar -xzf "$tarball" -C "$work" --wildcards '*/build/pause/linux/pause.c'
    src=$(find "$work" -name pause.c | head -1)
    mkdir -p "$work/root"
    gcc -Os -static -Wall -Werror -DVERSION=3.2-ksched -o "$work/root/pause" "$src"
    strip "$work/root/pause"
    c=$("${BUILDAH[@]}" from scratch)
    "${BUILDAH[@]}" copy "$c" "$work/root/pause" /pause > /dev/null
    "${BUILDAH[@]}" config --entrypoint '["/pause"]' --user 65535:65535 "$c"
    "${BUILDAH[@]}" commit --quiet --rm "$c" "$PAUSE" > /dev/null
    rm -rf "$work"
  fi
  load_image "$SOCK" "$PAUSE"
}

# --- the namespaces and the node ---------------------------------------------------------

namespaces_up() {
  step "network namespace $NS: node $NODE_IP, ClusterIP $CLUSTER_IP, pods $POD_CIDR"
  ip netns add "$NS"
  in_ns ip link set lo up
  in_ns ip link add kn0 type veth peer name kn1
  in_ns ip addr add "$NODE_IP/24" dev kn0
  in_ns ip addr add "$CLUSTER_IP/32" dev kn0
  in_ns ip link set kn0 up
  in_ns ip link set kn1 up
  # The private mount namespace of the kubelet and containerd, held by a bind mount of
  # its nsfs file on a private mount point.
  mkdir -p "$RUN" "$DIR/node/log" "$DIR/node/cni" "$DIR/node/run-containerd"
  mount --bind "$RUN" "$RUN"
  mount --make-private "$RUN"
  touch "$MNT"
  unshare --mount="$MNT" --propagation private true
  nsenter --mount="$MNT" mount --bind "$DIR/node/log" /var/log
  mkdir -p /var/lib/cni
  nsenter --mount="$MNT" mount --bind "$DIR/node/cni" /var/lib/cni
  mkdir -p /run/containerd
  nsenter --mount="$MNT" mount --bind "$DIR/node/run-containerd" /run/containerd
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
  local who
  for who in admin kubelet; do
    cat > "$DIR/$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$NODE_IP:443", certificate-authority: "$d/ca.crt"}
users:
- name: $who
  user: {token: ${who}token}
contexts:
- name: e2e
  context: {cluster: e2e, user: $who}
current-context: e2e
EOF
  done
}

# Starts NAME: the command, inside the network namespace (and with --node, in the node's
# mount namespace too), logging to DIR/logs/NAME.log.
start() {
  local name=$1 enter=(nsenter --net="/run/netns/$NS"); shift
  if [ "$1" = --node ]; then enter+=(--mount="$MNT"); shift; fi
  mkdir -p "$DIR/logs"
  "${enter[@]}" setsid "$@" > "$DIR/logs/$name.log" 2>&1 < /dev/null 9>&- &
  disown
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
  start etcd etcd --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
    --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380
  wait_for "etcd" 30 in_ns curl -sf http://127.0.0.1:2379/health
  local p=$DIR/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=443 --advertise-address="$NODE_IP" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --token-auth-file="$p/tokens.csv" \
    --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --kubelet-preferred-address-types=InternalIP
  wait_for "kube-apiserver /readyz" 90 apiserver_ready
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$DIR/admin.kubeconfig" \
    --controllers=deployment,replicaset,serviceaccount,serviceaccount-token,garbagecollector,nodelifecycle \
    --leader-elect=false --port=0 --secure-port=0 --service-account-private-key-file="$p/sa.key" \
    --root-ca-file="$p/ca.crt"
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$DIR/admin.kubeconfig" --leader-elect=false \
    --port=0 --secure-port=0
}
apiserver_ready() {
  in_ns curl -sf -m 5 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer admintoken" "https://$NODE_IP:443/readyz"
}

containerd_up() {
  mkdir -p "$DIR/containerd" "$DIR/cni"
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
state = "$RUN/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  # Never below containerd's own oom_score_adj: the kubelet asks -998 for every sandbox,
  # which needs CAP_SYS_RESOURCE, which the machines this runs on do not grant root.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state directory, not in the machine's /run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$RUN/runc"
EOF
  start containerd --node containerd --config "$DIR/containerd/config.toml"
  wait_for "containerd" 30 ctr --address "$SOCK" version
}

kubelet_up() {
  mkdir -p "$DIR/kubelet"
  local k v
  for k in $SYSCTLS; do v=$(sysctl -n "$k") && echo "$k=$v"; done > "$DIR/sysctls.saved"
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
  start kubelet --node "$BIN/kubelet" --config="$DIR/kubelet/config.yaml" --kubeconfig="$DIR/kubelet.kubeconfig" \
    --root-dir="$DIR/kubelet/root" --cert-dir="$DIR/kubelet/pki" --hostname-override="$NODE" \
    --node-ip="$NODE_IP" --container-runtime=remote --container-runtime-endpoint="unix://$SOCK" \
    --pod-infra-container-image="$PAUSE" --oom-score-adj=0 --v=1
  wait_for "node $NODE Ready" 120 node_ready
}
node_ready() { [ "$(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }

# --- diagnosis and teardown ---------------------------------------------------------------

diagnose() {
  echo "==== e2e-deploy: what the cluster looked like" >&2
  if [ -n "$BIN" ] && [ -e "/run/netns/$NS" ] && apiserver_ready > /dev/null 2>&1; then
    echo "---- kubectl get pods,nodes -A -o wide" >&2
    k get pods,nodes -A -o wide >&2 || true
    echo "---- kubectl -n kube-system describe deploy/ksched, pods -l app.kubernetes.io/name=ksched" >&2
    k -n kube-system describe deploy/ksched >&2 || true
    k -n kube-system describe pods -l app.kubernetes.io/name=ksched >&2 || true
    local p
    for p in $(k -n kube-system get pods -l app.kubernetes.io/name=ksched -o name 2>/dev/null); do
      echo "---- kubectl -n kube-system logs $p (and --previous)" >&2
      k -n kube-system logs "$p" --tail=40 >&2 || true
      k -n kube-system logs "$p" --tail=20 --previous >&2 2>/dev/null || true
    done
    echo "---- kubectl get events -A" >&2
    k get events -A --sort-by=.lastTimestamp 2>/dev/null | tail -30 >&2 || true
  else
    echo "(the apiserver does not answer: no kubectl output)" >&2
  fi
  local f
  for f in "$DIR"/logs/*.log; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f" .log) (last lines)" >&2
    tail -25 "$f" >&2 || true
  done
}

# Stops everything of a run in DIR (or of an earlier run left up): the processes in the
# network namespace (every component, containerd's shims), the containers (by runc's
# state under RUN), the mounts, the namespaces, and restores the kernel settings.
teardown() {
  step "tearing down"
  local pids t
  if [ -e "/run/netns/$NS" ]; then
    pids=$(ip netns pids "$NS" 2>/dev/null || true)
    # The kubelet first, so it restarts nothing; then every container, while containerd
    # still answers.
    for t in $pids; do
      [ "$(cat "/proc/$t/comm" 2>/dev/null)" = kubelet ] && kill "$t" 2>/dev/null || true
    done
    if ctr --address "$SOCK" version > /dev/null 2>&1; then
      for t in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
        ctr --address "$SOCK" -n k8s.io tasks kill -s SIGKILL "$t" > /dev/null 2>&1 || true
      done
    fi
  fi
  # Whatever containerd did not stop (its shims already gone): by runc's own state.
  if [ -d "$RUN/runc/k8s.io" ]; then
    for t in $(runc --root "$RUN/runc/k8s.io" list -q 2>/dev/null); do
      runc --root "$RUN/runc/k8s.io" kill --all "$t" KILL > /dev/null 2>&1 || true
      runc --root "$RUN/runc/k8s.io" delete --force "$t" > /dev/null 2>&1 || true
    done
  fi
  if [ -e "/run/netns/$NS" ]; then
    pids=$(ip netns pids "$NS" 2>/dev/null || true)
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
    for t in 1 2 3 4 5 6 7 8 9 10; do
      pids=$(ip netns pids "$NS" 2>/dev/null || true)
      [ -n "$pids" ] || break
      sleep 0.3
    done
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
  fi
  # The node's mount namespace dies with its last process and its nsfs mount; mounts on
  # the machine under DIR and RUN (if any were made there), deepest first.
  umount "$MNT" 2>/dev/null || true
  awk -v d="$DIR/" -v r="$RUN/" 'index($2, d) == 1 || index($2, r) == 1 {print $2}' /proc/mounts |
    sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  umount -l "$RUN" 2>/dev/null || true
  rm -rf "$RUN" 2>/dev/null || true
  # The mount points namespaces_up made on the machine, if nothing else uses them.
  rmdir /run/containerd /var/lib/cni 2>/dev/null || true
  if [ -f "$DIR/sysctls.saved" ]; then
    sysctl -q -p "$DIR/sysctls.saved" > /dev/null 2>&1 || step "could not restore $(tr '\n' ' ' < "$DIR/sysctls.saved")"
    rm -f "$DIR/sysctls.saved"
  fi
}

on_exit() {
  local rc=$?
  if [ "$rc" != 0 ]; then diagnose || true; fi
  if [ "${KEEP:-0}" = 1 ]; then
    step "KEEP=1: left up (kubectl: nsenter --net=/run/netns/$NS $BIN/kubectl --kubeconfig $DIR/admin.kubeconfig; stop: KEEP=0 $0 --down)"
  else
    teardown
  fi
  exit "$rc"
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
scheduled_by_ksched() { # name: its Scheduled event comes from ksched (events.k8s.io reportingController)
  k get events --field-selector "involvedObject.name=$1,reason=Scheduled" \
    -o jsonpath='{range .items[*]}{.reportingComponent}{"\n"}{end}' | grep -qx ksched
}
lease_holder() { k -n kube-system get lease ksched -o jsonpath='{.spec.holderIdentity}'; }
# The holder is a live ksched pod other than $1 (identities are "<pod name>_<uuid>").
holder_is_not() {
  local h; h=$(lease_holder)
  [ -n "$h" ] && [[ "$h" == *_* ]] && [[ "$h" != "$1"_* ]] && k -n kube-system get pod "${h%%_*}" > /dev/null
}
pods_scheduled_and_running() { # prefix
  local i
  for i in 1 2 3; do create_pod "$1-$i"; done
  for i in 1 2 3; do
    wait_for "pod $1-$i Running on $NODE" 90 pod_running "$1-$i"
    wait_for "pod $1-$i's Scheduled event from ksched" 15 scheduled_by_ksched "$1-$i"
  done
}

main() {
  if [ "${1:-}" = --down ]; then shift; DIR=$(realpath -m "${1:-/tmp/ksched-e2e}"); teardown; return; fi
  need_packages
  mkdir -p "$CACHE"
  exec 9> "$CACHE/e2e-deploy.lock"
  flock -n 9 || die "another e2e-deploy is running (lock $CACHE/e2e-deploy.lock)"
  if [ -e "$DIR" ] && [ ! -f "$DIR/$MARK" ]; then
    die "$DIR exists and is not an e2e-deploy directory: name another"
  fi
  if [ -e "/run/netns/$NS" ] || [ -e "$RUN" ]; then
    step "a cluster of an earlier run is still up: tearing it down first"
    teardown
  fi
  step "Kubernetes 1.20.2 binaries (scripts/control-plane.sh build; a first run builds kubelet and kubectl)"
  BIN=$(KSCHED_K8S_EXTRA="kubelet kubectl" bash "$ROOT/scripts/control-plane.sh" build)
  rm -rf "$DIR" && mkdir -p "$DIR" && touch "$DIR/$MARK"
  trap on_exit EXIT
  trap 'exit 143' TERM INT
  namespaces_up
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
  wait_for "a ksched replica to hold Lease kube-system/ksched" 60 holder_is_not "(none)"
  local leader; leader=$(lease_holder); leader=${leader%%_*}
  step "leader: $leader ($(k -n kube-system get pods -l app.kubernetes.io/name=ksched -o name | wc -l) replicas)"

  pods_scheduled_and_running e2e-before
  k get events --field-selector "involvedObject.name=e2e-before-1,reason=Scheduled" >&2

  step "deleting the leader pod $leader"
  k -n kube-system delete pod "$leader" --wait=false >&2
  wait_for "the other replica to take Lease kube-system/ksched" 90 holder_is_not "$leader"
  local new_leader; new_leader=$(lease_holder); new_leader=${new_leader%%_*}
  step "new leader: $new_leader"
  pods_scheduled_and_running e2e-after
  k -n kube-system rollout status deploy/ksched --timeout=180s >&2 || die "Deployment not Available again after the leader's deletion"
  step "PASS: image built and loaded, Deployment Available, leader $leader, 3 pods Running; leader deleted, $new_leader took over, 3 more pods Running ($(( $(date +%s) - START )) s)"
  echo "e2e-deploy: PASS"
}
main "$@"
