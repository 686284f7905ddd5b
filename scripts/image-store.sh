# Sourced by build-image.sh and e2e-deploy.sh (needs CACHE): ksched's own buildah image
# store, never the machine-wide one, and the move of an image from it into containerd.
BUILDAH=(buildah --root "$CACHE/storage" --runroot /run/ksched-buildah --storage-driver overlay)

image_exists() { "${BUILDAH[@]}" images --quiet "$1" > /dev/null 2>&1; }

# Imports buildah image IMAGE into the containerd at ADDRESS (namespace k8s.io, where the
# kubelet's CRI looks) as NAME (default IMAGE), through a docker archive.
load_image() { # address image [name]
  local address=$1 image=$2 name=${3:-$2} tar rc=0
  tar=$(mktemp --suffix=.tar)
  { "${BUILDAH[@]}" push --quiet "$image" "docker-archive:$tar:$name" >&2 &&
    ctr --address "$address" -n k8s.io images import "$tar" >&2; } || rc=$?
  rm -f "$tar"
  return "$rc"
}
