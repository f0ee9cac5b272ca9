#!/usr/bin/env bash
# Fetches one kernel of tests/lab/kernels.txt into the lab cache, once:
#   fetch_kernel.sh NAME
# Prints "vmlinuz=PATH" and "config=PATH" (exit 0), or "SKIPPED: reason"
# (exit 2) when the kernel cannot be had: offline with nothing cached, a
# version the mirror no longer carries, or a package with no config in any
# of its parts (another kernel's config is never used instead).
#
# The packages are fetched with apt-get download through a private apt
# configuration under the cache (its own sources list, lists and package
# cache; the system's apt sources are never read or changed) and unpacked
# with dpkg-deb -x, never installed. A package that is split (linux-image-R
# depending on linux-binary-R and linux-base-R, as Debian's 7.x and later
# 6.x backports are) is fetched with those parts; vmlinuz and config are
# looked for under boot/ and usr/lib/modules/R/ and lib/modules/R/.
# Environment:
#   TRACEHEALTH_LAB_CACHE=DIR   the cache (default ~/.cache/tracehealth-lab)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: fetch_kernel.sh NAME (a NAME of tests/lab/kernels.txt)}
cache=${TRACEHEALTH_LAB_CACHE:-$HOME/.cache/tracehealth-lab}

skip() { echo "SKIPPED: $name: $*"; exit 2; }

read -r _ pkg version suite flavour < <(grep -v '^#' "$here/kernels.txt" \
  | awk -v n="$name" '$1 == n')
[[ -n ${pkg:-} ]] || skip "not in tests/lab/kernels.txt"
release=${pkg#linux-image-}
kdir=$cache/kernels/$name

# find_in DIR: prints vmlinuz and config paths of RELEASE under DIR.
find_in() {
  local d=$1 v="" c=""
  for p in "$d/boot/vmlinuz-$release" "$d/usr/lib/modules/$release/vmlinuz" \
      "$d/lib/modules/$release/vmlinuz"; do
    [[ -f $p ]] && { v=$p; break; }
  done
  for p in "$d/boot/config-$release" "$d/usr/lib/modules/$release/config" \
      "$d/lib/modules/$release/config"; do
    [[ -f $p ]] && { c=$p; break; }
  done
  [[ -n $v ]] || return 3
  [[ -n $c ]] || return 4
  echo "vmlinuz=$v"
  echo "config=$c"
}

if [[ -f $kdir/.complete ]]; then
  find_in "$kdir/root"
  case $? in
    0) exit 0 ;;
    3) skip "$pkg $version: no vmlinuz-$release in its parts" ;;
    4) skip "$pkg $version: no config in any of its parts (boot/, usr/lib/modules/$release/, lib/modules/$release/)" ;;
  esac
fi

# The private apt configuration (lab_apt.sh), for the kernel's architecture:
# arm64 for the -arm64 flavours.
. "$here/lab_apt.sh"
case $flavour in
  *arm64*) lab_apt "$cache" arm64 ;;
  *) lab_apt "$cache" amd64 ;;
esac
apt=$LAB_APT
opts=("${LAB_APT_OPTS[@]}")
# The lists: fetched when absent, or when PACKAGE=VERSION is not in them.
have() { [[ -n $(apt-cache "${opts[@]}" show "$1=$2" 2>/dev/null) ]]; }
if ! have "$pkg" "$version"; then
  lab_apt_update \
    || skip "apt-get update failed (offline?), nothing cached: $(grep -m1 -E '^(E|W):' "$apt/update.log")"
  have "$pkg" "$version" || skip "$pkg=$version not on the mirror (suite $suite; kernels.txt needs a current version)"
fi

# The parts: linux-image-R itself, and linux-binary-R / linux-base-R at the
# version its Depends names, where the mirror has them (modules are not
# needed: the guest loads none). Whether vmlinuz and config are among what
# was fetched is decided below, from the files.
parts=("$pkg=$version")
absent=()
rel_re=$(sed 's/[.+]/[&]/g' <<<"$release")
while read -r dep dver; do
  if have "$dep" "$dver"; then parts+=("$dep=$dver"); else absent+=("$dep=$dver"); fi
done < <(apt-cache "${opts[@]}" show "$pkg=$version" | sed -n 's/^Depends: //p' | head -n 1 \
  | tr ',' '\n' | sed -n "s/^ *\(linux-\(binary\|base\)-$rel_re\) (= \([^)]*\))$/\1 \3/p")
tmp=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${opts[@]}" -q download "${parts[@]}") >"$tmp/download.log" 2>&1 \
  || skip "apt-get download ${parts[*]} failed: $(grep -m1 -E '^(E|W):' "$tmp/download.log")"
mkdir -p "$tmp/root"
for deb in "$tmp"/*.deb; do
  dpkg-deb -x "$deb" "$tmp/root" || skip "dpkg-deb -x $(basename "$deb") failed"
done
rm -rf "$kdir"
mkdir -p "$kdir"
mv "$tmp/root" "$kdir/root"
{ (cd "$tmp" && ls *.deb); for a in "${absent[@]}"; do echo "$a (not on the mirror)"; done; } > "$kdir/parts"
touch "$kdir/.complete"
find_in "$kdir/root"
case $? in
  0) exit 0 ;;
  3) skip "$pkg $version: no vmlinuz-$release in its parts ($(tr '\n' ' ' < "$kdir/parts"))" ;;
  *) skip "$pkg $version: no config in any of its parts ($(tr '\n' ' ' < "$kdir/parts"))" ;;
esac
