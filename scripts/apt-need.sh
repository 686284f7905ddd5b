#!/usr/bin/env bash
# Installs those of the named Debian packages that are missing (apt-get, no recommends);
# does nothing when all are installed. Used by install-deps.sh, build-image.sh and
# e2e-deploy.sh. Usage: apt-need.sh WHO PACKAGE...   (WHO prefixes the log line)
set -euo pipefail
who=$1; shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "$who: installing ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
# Waits for another apt run's lock instead of failing at once.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq || true
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  "${missing[@]}" >&2
