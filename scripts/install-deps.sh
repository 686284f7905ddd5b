#!/usr/bin/env bash
# Installs everything ksched needs to build, test and run its demo on Debian bookworm.
# Idempotent: only missing packages are installed. Debian packages only.
set -euo pipefail

BUILD_PKGS=(cmake g++ make pkg-config ccache clang libclang-rt-14-dev
  libcpprest-dev libcurl4-openssl-dev libnghttp2-dev pkg-config libyaml-cpp-dev libssl-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsimdjson-dev)
# The local control plane: etcd from Debian, kube-apiserver built from Debian's source package.
CONTROL_PLANE_PKGS=(etcd-server etcd-client golang-go rsync golang-github-modern-go-reflect2-dev
  openssl curl jq dpkg-dev ca-certificates)

bash "$(dirname "$0")/apt-need.sh" install-deps "${BUILD_PKGS[@]}" "${CONTROL_PLANE_PKGS[@]}"
