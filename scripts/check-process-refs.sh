#!/usr/bin/env bash
# Checks that code, tests and docs speak of ksched itself, not of how it was made: no
# numbered work periods or the current one, no numbers of the project's own tracker
# (written as the word for a tracker entry with a number, or a bare "(#N)"), no
# numbered submission stops: `pattern` below spells each out. Upstream references stay
# allowed: lines that name kubernetes/kubernetes, "kubernetes #N", "upstream issue" /
# "upstream #N", or a github.com URL of another project.
#
#   scripts/check-process-refs.sh [DIR]   # DIR: a git work tree (default: this repo's root)
#
# Searches the tracked files (git grep; binary files skipped), this script excepted.
# Prints the offending lines and exits 1 if there are any; else prints
# "process-refs: PASS" and exits 0. Exits 2 when DIR is not a git work tree.
set -uo pipefail

dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
self=scripts/check-process-refs.sh

# What is refused (POSIX ERE).
pattern='[Ss]essions? #?[0-9]|[Tt]his session|[Ii]ssues? #?[0-9]|[Tt]he issue'"['’]"'s|(^|[^A-Za-z])[Ss]tops? #?[0-9]|\(#[0-9]+\)'
# Lines allowed even so: upstream's issues and other projects' URLs.
allow='kubernetes/kubernetes|[Kk]ubernetes #[0-9]|[Uu]pstream (issue|#[0-9])|https?://github\.com/'
# ... but a github.com URL of ksched itself is no excuse.
own_url='github\.com/[^/[:space:]]+/ksched'

cd "$dir" 2>/dev/null || { echo "process-refs: cannot enter $dir" >&2; exit 2; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "process-refs: $dir is not a git work tree" >&2; exit 2; }

hits=$(git grep -nIE -e "$pattern" -- . ":(top,exclude)$self")
grep_rc=$?
if [ "$grep_rc" -gt 1 ]; then
  echo "process-refs: git grep failed ($grep_rc)" >&2
  exit 2
fi

bad=""
if [ -n "$hits" ]; then
  while IFS= read -r line; do
    if grep -qE -- "$allow" <<<"$line" && ! grep -qE -- "$own_url" <<<"$line"; then
      continue
    fi
    bad+="$line"$'\n'
  done <<<"$hits"
fi

if [ -n "$bad" ]; then
  printf '%s' "$bad"
  echo "process-refs: FAIL: $(printf '%s' "$bad" | grep -c '') line(s) refer to sessions, stops or the project's own issues; say what the code does and why instead"
  exit 1
fi
echo "process-refs: PASS"
exit 0
