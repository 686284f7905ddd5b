#!/usr/bin/env bash
# Builds ksched's container image on this machine without any registry, checks it, and
# loads it into containerd.
#
#   1. Base images: a Debian bookworm root made with debootstrap (minbase) from the
#      machine's own Debian archive (read from its apt sources), committed to ksched's
#      buildah store (scripts/image-store.sh) as docker.io/library/debian:bookworm and, without docs, man pages
#      and locales, as debian:bookworm-slim: the two names the Dockerfile starts from.
#      Cached: the root is made again only when it is older than KSCHED_BASE_MAX_DAYS (7).
#   2. The project's Dockerfile, built with `buildah bud --pull=never` (nothing is
#      fetched from a registry; apt inside the build uses the same archive).
#   3. The library check: the runtime stage must hold exactly what the binary links.
#      Every library `ldd` lists resolves inside the image, and the packages owning the
#      libraries the binary links itself (DT_NEEDED) are exactly the library packages
#      the Dockerfile's runtime stage installs (one missing: the binary may not start, or
#      breaks when a dependency changes; one extra: dead weight in every node's image
#      cache).
#   4. The image is exported and imported into containerd (namespace k8s.io, where the
#      kubelet's CRI looks), and a container of it runs `ksched --version` there.
#
# Usage: scripts/build-image.sh [IMAGE]   (default ksched:latest)
# Environment: KSCHED_CACHE (default ~/.cache/ksched) for the base root, the image store
# (buildah's own, in KSCHED_CACHE/storage: nothing in the machine-wide store is touched)
# and containerd's state; CONTAINERD_ADDRESS to use a running containerd instead of
# starting one. One run at a time (a lock in KSCHED_CACHE/images).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${1:-ksched:latest}
CACHE=${KSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksched}
IMAGES="$CACHE/images"
MAX_DAYS=${KSCHED_BASE_MAX_DAYS:-7}
# shellcheck source=scripts/image-store.sh
source "$ROOT/scripts/image-store.sh"
log() { echo "build-image: $*" >&2; }
die() { echo "build-image: FAILED: $*" >&2; exit 1; }

# What a failed (or finished) run leaves behind is removed on exit: temporary files and
# directories, working containers, a containerd this script started.
TEMPS=()
WORKING=()
CTR_STARTED=""
cleanup() {
  local c
  for c in ${WORKING[@]+"${WORKING[@]}"}; do
    "${BUILDAH[@]}" umount "$c" > /dev/null 2>&1 || true
    "${BUILDAH[@]}" rm "$c" > /dev/null 2>&1 || true
  done
  rm -rf ${TEMPS[@]+"${TEMPS[@]}"}
  if [ -n "$CTR_STARTED" ]; then
    kill "$CTR_STARTED" 2> /dev/null || true
    wait "$CTR_STARTED" 2> /dev/null || true
    rm -rf /run/ksched-containerd
    rmdir /run/containerd 2> /dev/null || true
  fi
}
trap cleanup EXIT

need_packages() { bash "$ROOT/scripts/apt-need.sh" build-image debootstrap buildah containerd runc binutils; }

# The Debian archive this machine's apt uses (deb822 or one-line sources, options such
# as [signed-by=...] allowed); empty if there is none.
debian_mirror() {
  local m
  m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$m" ] || m=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
    /etc/apt/sources.list 2>/dev/null | head -1 || true)
  echo "$m"
}

# Commits directory $1 as image $2 (a scratch container with the tree copied in).
commit_root() {
  local dir=$1 name=$2 ctr tarball
  ctr=$("${BUILDAH[@]}" from scratch)
  WORKING+=("$ctr")
  tarball=$(mktemp "$IMAGES/root.XXXXXX.tar")
  TEMPS+=("$tarball")
  tar -C "$dir" --numeric-owner -cf "$tarball" .
  "${BUILDAH[@]}" add "$ctr" "$tarball" / >/dev/null
  rm -f "$tarball"
  "${BUILDAH[@]}" config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  "${BUILDAH[@]}" commit --quiet --rm "$ctr" "$name" >/dev/null
}

base_images() {
  local root="$IMAGES/rootfs-bookworm" stamp="$IMAGES/rootfs-bookworm.done"
  if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mtime +"$MAX_DAYS")" ]; then
    local mirror
    mirror=$(debian_mirror)
    # Never debootstrap's built-in default archive: only the one this machine's apt uses.
    [ -n "$mirror" ] || die "no Debian archive in this machine's apt sources"
    log "debootstrap bookworm (minbase) from the machine's Debian archive"
    rm -rf "$root" "$stamp" && mkdir -p "$IMAGES"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$IMAGES/debootstrap.log" 2>&1 ||
      { tail -20 "$IMAGES/debootstrap.log" >&2; die "debootstrap (log: $IMAGES/debootstrap.log)"; }
    # As Debian's official images: the machine's apt sources (with security updates),
    # no package cache or lists, no machine identity.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
      rm -f "$root/etc/apt/sources.list"
    fi
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/* "$root"/tmp/*
    : > "$root/etc/machine-id"
    touch "$stamp"
    "${BUILDAH[@]}" rmi --force docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim \
      >/dev/null 2>&1 || true
  fi
  if ! image_exists docker.io/library/debian:bookworm; then
    log "importing debian:bookworm"
    commit_root "$root" docker.io/library/debian:bookworm
  fi
  if ! image_exists docker.io/library/debian:bookworm-slim; then
    log "importing debian:bookworm-slim (no docs, man pages or locales, and dpkg keeps it so)"
    local slim
    slim=$(mktemp -d "$IMAGES/slim.XXXXXX")
    TEMPS+=("$slim")
    cp -a "$root"/. "$slim"/
    cat > "$slim/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
    find "$slim/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
    rm -rf "$slim"/usr/share/man/* "$slim"/usr/share/info/* "$slim"/usr/share/locale/* "$slim"/usr/share/lintian/*
    commit_root "$slim" docker.io/library/debian:bookworm-slim
    rm -rf "$slim"
  fi
}

# The Dockerfile built from the repository, no registry asked, with the compiler cache.
# With KSCHED_PREBUILT (a ksched binary built from this tree on this machine, e.g. `make
# test`'s Release build) the image takes that binary instead of compiling it again.
PREBUILT_ARGS=()
if [ -n "${KSCHED_PREBUILT:-}" ]; then
  [ -x "$KSCHED_PREBUILT" ] || die "KSCHED_PREBUILT=$KSCHED_PREBUILT is not an executable"
  mkdir -p "$ROOT/.prebuilt" && cp "$KSCHED_PREBUILT" "$ROOT/.prebuilt/ksched"
  PREBUILT_ARGS=(--build-arg KSCHED_PREBUILT=.prebuilt/ksched)
fi
bud() { (cd "$ROOT" && "${BUILDAH[@]}" bud --pull=never --isolation chroot --layers \
  --volume "$IMAGES/ccache:/root/.cache/ccache" "${PREBUILT_ARGS[@]}" -f Dockerfile "$@" .); }

build() {
  log "buildah bud -t $IMAGE (Dockerfile; no registry: --pull=never)"
  # The build stage's compiler cache lives on this machine between builds (the stage
  # installs ccache, which CMake uses when present; docker build simply starts cold).
  mkdir -p "$IMAGES/ccache"
  bud -t "localhost/$IMAGE" >&2 || die "buildah bud"
  # The build stage under a name of its own (all its layers are cached: this only tags),
  # so that dropping what no name holds any more (an earlier tree's build stage, ~1 GB
  # each) keeps the layers the next build reuses (the build stage's packages).
  bud --quiet --target build -t localhost/ksched-build-stage:latest > /dev/null || die "buildah bud --target build"
  "${BUILDAH[@]}" rmi --prune > /dev/null 2>&1 || true
  rm -rf "$ROOT/.prebuilt"
}

# The packages the Dockerfile's runtime stage installs: the words after `apt-get install`
# up to the next `&&`, options left out, in the stage after the last FROM.
dockerfile_runtime_packages() {
  awk '/^FROM /{stage = ""} {stage = stage $0 "\n"} END {print stage}' "$ROOT/Dockerfile" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | tr '\n' ' ' |
    grep -oE 'apt-get install [^&]*' | tr ' ' '\n' | grep -vE '^(apt-get|install|-.*|)$' | sort -u
}

check_libraries() {
  log "library check: the runtime stage holds exactly the libraries ksched links"
  local ctr mnt bin=/usr/local/bin/ksched failed=0
  ctr=$("${BUILDAH[@]}" from --pull=never "localhost/$IMAGE")
  WORKING+=("$ctr")
  mnt=$("${BUILDAH[@]}" mount "$ctr")
  # 1. Everything the binary loads, directly or not, resolves inside the image.
  local ldd_out
  ldd_out=$(chroot "$mnt" /usr/bin/ldd "$bin" 2>&1) || { echo "$ldd_out" >&2; failed=1; }
  if grep -q "not found" <<<"$ldd_out"; then
    grep "not found" <<<"$ldd_out" >&2
    log "libraries ksched loads that the image lacks (above)"
    failed=1
  fi
  # 2. The libraries it links itself (DT_NEEDED), by the image's package that owns each,
  #    are exactly the library packages the runtime stage names (libc6, libgcc-s1 and
  #    libstdc++6 come with the base). A library pulled in only through another
  #    package's dependency would break silently when that package changes.
  local needed owners lib path
  needed=$(objdump -p "$mnt$bin" | awk '$1 == "NEEDED" {print $2}')
  owners=$(for lib in $needed; do
      path=$(awk -v l="$lib" '$1 == l && $2 == "=>" {print $3}' <<<"$ldd_out")
      [ -n "$path" ] || { echo "?$lib"; continue; }
      # dpkg knows a file by the path its package shipped (/lib or /usr/lib): the path
      # ldd printed, else its target, else any path ending in the file's name.
      { chroot "$mnt" dpkg -S "$path" 2>/dev/null || chroot "$mnt" dpkg -S "$(chroot "$mnt" readlink -f "$path")" 2>/dev/null ||
        chroot "$mnt" dpkg -S "*/$(basename "$(chroot "$mnt" readlink -f "$path")")" 2>/dev/null || echo "?$lib"; } |
        cut -d: -f1 | head -1
    done | sort -u)
  local linked wanted missing extra
  linked=$(comm -23 <(echo "$owners") <(printf '%s\n' libc6 libgcc-s1 libstdc++6))
  wanted=$(dockerfile_runtime_packages | grep -vx ca-certificates || true)
  [ -n "$wanted" ] || die "no library packages found in the Dockerfile's runtime stage (apt-get install ...)"
  missing=$(comm -23 <(echo "$linked") <(echo "$wanted"))
  extra=$(comm -13 <(echo "$linked") <(echo "$wanted"))
  if [ -n "$missing" ]; then
    log "ksched links libraries of packages the runtime stage does not name:" $missing
    failed=1
  fi
  if [ -n "$extra" ]; then
    log "the runtime stage installs packages ksched does not link:" $extra
    failed=1
  fi
  [ "$failed" = 0 ] || die "library check"
  log "library check: $(wc -w <<<"$needed") linked libraries ($(grep -c '=>' <<<"$ldd_out") loaded), from:" $owners
}

containerd_up() {
  if [ -n "${CONTAINERD_ADDRESS:-}" ]; then return; fi
  local dir="$CACHE/containerd"
  CONTAINERD_ADDRESS=/run/ksched-containerd/containerd.sock
  if [ -S "$CONTAINERD_ADDRESS" ] && ctr --address "$CONTAINERD_ADDRESS" version >/dev/null 2>&1; then return; fi
  mkdir -p "$dir/root" /run/ksched-containerd
  cat > "$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "/run/ksched-containerd/state"
[grpc]
  address = "$CONTAINERD_ADDRESS"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
EOF
  # In a mount namespace of its own where /run/containerd (shim sockets, runc state) is
  # a directory of ours, so nothing lands in a real containerd's.
  mkdir -p "$dir/run-containerd" /run/containerd
  unshare --mount --propagation private sh -c 'mount --bind "$0" /run/containerd && exec "$@"' \
    "$dir/run-containerd" containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 9>&- &
  CTR_STARTED=$!
  for _ in $(seq 1 50); do
    ctr --address "$CONTAINERD_ADDRESS" version >/dev/null 2>&1 && return
    sleep 0.2
  done
  die "containerd did not start (log: $dir/containerd.log)"
}

load_into_containerd() {
  containerd_up
  log "importing into containerd ($CONTAINERD_ADDRESS, namespace k8s.io)"
  load_image "$CONTAINERD_ADDRESS" "localhost/$IMAGE" "docker.io/library/$IMAGE" || die "import into containerd"
  # The container's stdio fifos in a directory both this script and containerd see (a
  # containerd in a private mount namespace has its own /run/containerd).
  local out id="ksched-image-check-$$" fifos
  fifos=$(mktemp -d)
  TEMPS+=("$fifos")
  out=$(ctr --address "$CONTAINERD_ADDRESS" -n k8s.io run --fifo-dir "$fifos" --rm "docker.io/library/$IMAGE" "$id" \
    /usr/local/bin/ksched --version 2>&1) || { echo "$out" >&2; die "the image's ksched did not run in containerd"; }
  log "a container of docker.io/library/$IMAGE in containerd printed: $out"
}

need_packages
mkdir -p "$IMAGES"
exec 9> "$IMAGES/.lock"
flock -n 9 || die "another build-image is running (lock $IMAGES/.lock)"
base_images
build
check_libraries
load_into_containerd
log "OK: docker.io/library/$IMAGE in buildah's storage and containerd (k8s.io)"
