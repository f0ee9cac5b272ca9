#!/usr/bin/env bash
# Fetches the arm64 guest's busybox once into the lab cache: Debian 12's
# busybox-static for arm64, through the lab's private apt configuration
# (lab_apt.sh), unpacked with dpkg-deb -x, never installed.
#   fetch_guest_arm64.sh
# Prints "busybox=PATH" (exit 0) or "SKIPPED: reason" (exit 2).
# Environment:
#   TRACEHEALTH_LAB_CACHE=DIR   the cache (default ~/.cache/tracehealth-lab)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TRACEHEALTH_LAB_CACHE:-$HOME/.cache/tracehealth-lab}
dir=$cache/guest-arm64
skip() { echo "SKIPPED: $*"; exit 2; }

if [[ ! -x $dir/root/bin/busybox ]]; then
  . "$here/lab_apt.sh"
  lab_apt "$cache" arm64
  if [[ -z $(apt-cache "${LAB_APT_OPTS[@]}" show busybox-static 2>/dev/null) ]]; then
    lab_apt_update || skip "apt-get update failed (offline?): $(grep -m1 -E '^(E|W):' "$LAB_APT/update.log")"
  fi
  # bookworm's: the one a Debian 12 machine's other arm64 parts come from.
  version=$(apt-cache "${LAB_APT_OPTS[@]}" madison busybox-static 2>/dev/null \
    | awk -F' [|] ' '$3 ~ /bookworm/ { print $2; exit }')
  [[ -n $version ]] || skip "no bookworm busybox-static for arm64 on the mirror"
  tmp=$(mktemp -d "$cache/fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get "${LAB_APT_OPTS[@]}" -q download "busybox-static=$version") >"$tmp/log" 2>&1 \
    || skip "apt-get download busybox-static=$version (arm64) failed: $(grep -m1 -E '^(E|W):' "$tmp/log")"
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/root" || skip "dpkg-deb -x busybox-static failed"
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$tmp/root" "$dir/root"
fi
echo "busybox=$dir/root/bin/busybox"
