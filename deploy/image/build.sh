#!/usr/bin/env bash
# Builds the OCI images of the agent and the server from tracehealth's .debs
# and Debian's packages, without any registry:
#
#   deploy/image/build.sh DEBS_DIR OCI_DIR
#
# Each image is one layer: the package's files (binary, /etc/tracehealth,
# docs) plus only the shared libraries the binary loads. Those are found by
# walking DT_NEEDED from the binary; each comes from its Debian package
# (`apt-get download`, cached under ~/.cache/tracehealth/debs, unpacked with
# `dpkg-deb -x`), with that package's copyright file and a dpkg status entry
# under /var/lib/dpkg/status.d/ so image scanners see the versions. Written
# to OCI_DIR/tracehealth-agent and OCI_DIR/tracehealth-server (OCI layouts,
# tag = the package version), packed with umoci. The layer tar is sorted,
# with fixed owners and the changelog's timestamp, so the same inputs give
# the same image digest.
#
#   agent:  runs as root (as the unit, and deploy/k8s/base/agent-daemonset.yaml:
#           runAsUser 0 with only DAC_READ_SEARCH and SYS_PTRACE), reads the
#           node at /host (/host/proc, /host/sys, /host/boot are mount points),
#           state in /var/lib/tracehealth-agent.
#   server: runs as tracehealth (uid/gid 65532, as deploy/k8s/base/server.yaml),
#           data in /var/lib/tracehealth-server, rules in /etc/tracehealth.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
debs=$(realpath "$1")
oci=$(realpath -m "$2")
version=$(dpkg-parsechangelog -l "$repo/deploy/debian/changelog" -S Version)
epoch=$(dpkg-parsechangelog -l "$repo/deploy/debian/changelog" -S Timestamp)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git -C "$repo" describe --always --dirty --abbrev=40 2>/dev/null || echo unknown)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tracehealth/debs
multiarch=x86_64-linux-gnu
start=$SECONDS

work=$(mktemp -d -t tracehealth-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache" "$work/pool"

# fetch PKG...: unpacks each of Debian's PKGs into $work/pool/PKG (once), its
# control fields into $work/pool/PKG.control. The .debs are the mirror's
# current ones, kept in $cache; one apt-get call for all of them.
fetch() {
  local todo=() missing=() p uri file
  declare -A files=()
  for p; do [[ -d $work/pool/$p ]] || todo+=("$p"); done
  ((${#todo[@]})) || return 0
  while read -r uri file _; do
    files[${file%%_*}]=$file
    [[ -s $cache/$file ]] || missing+=("${file%%_*}")
  done < <(apt-get download --print-uris "${todo[@]}" 2>/dev/null | tr -d "'")
  if ((${#missing[@]})); then
    mkdir -p "$work/dl"
    (cd "$work/dl" && apt-get download -q "${missing[@]}" >/dev/null 2>&1) ||
      { echo "image: apt-get download ${missing[*]} failed" >&2; return 1; }
    mv -- "$work/dl"/*.deb "$cache/"
  fi
  for p in "${todo[@]}"; do
    file=${files[$p]:-}
    [[ -n $file ]] || { echo "image: apt-get knows no package $p" >&2; return 1; }
    mkdir -p "$work/pool/$p"
    dpkg-deb -x "$cache/$file" "$work/pool/$p"
    dpkg-deb -f "$cache/$file" >"$work/pool/$p.control"
  done
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# status_entry: a package's control fields (stdin) as a dpkg status entry
# (stdout), without the description.
status_entry() { sed -e '/^Description:/,$d' -e '/^Package:/a Status: install ok installed'; }

# add_package ROOTFS PKG: copyright and dpkg status entry of PKG in the image.
add_package() {
  local rootfs=$1 pkg=$2 doc target
  fetch "$pkg"
  doc="$work/pool/$pkg/usr/share/doc/$pkg"
  if [[ -L $doc ]]; then  # the doc directory of another package of the same source
    target=$(basename "$(readlink "$doc")")
    mkdir -p "$rootfs/usr/share/doc"
    ln -sfn "$target" "$rootfs/usr/share/doc/$pkg"
    [[ -e $rootfs/var/lib/dpkg/status.d/$target ]] || add_package "$rootfs" "$target"
  elif [[ -f $doc/copyright ]]; then
    install -D -m 0644 "$doc/copyright" "$rootfs/usr/share/doc/$pkg/copyright"
  fi
  mkdir -p "$rootfs/var/lib/dpkg/status.d"
  status_entry <"$work/pool/$pkg.control" >"$rootfs/var/lib/dpkg/status.d/$pkg"
}

# add_libraries ROOTFS ELF: every shared library ELF needs, transitively, each
# from the Debian package that ships it (found with dpkg -S on this machine,
# which links against the same packages), one dpkg -S and one fetch per level.
add_libraries() {
  local rootfs=$1 libdir="$1/usr/lib/$multiarch" want todo next s line pkg path src
  mkdir -p "$libdir"
  mapfile -t want < <(needed "$2")
  while ((${#want[@]})); do
    todo=()
    for s in $(printf '%s\n' "${want[@]}" | sort -u); do
      [[ -e $libdir/$s ]] || todo+=("$s")
    done
    ((${#todo[@]})) || break
    declare -A own=()
    while IFS= read -r line; do
      pkg=${line%%: *} path=${line#*: }
      pkg=${pkg%%:*}
      [[ $pkg == *" "* ]] && continue  # "diversion by ..." lines
      case $path in
        "/lib/$multiarch/"* | "/usr/lib/$multiarch/"*) own[${path##*/}]=$pkg ;;
      esac
    done < <(dpkg -S "${todo[@]/#//lib/$multiarch/}" "${todo[@]/#//usr/lib/$multiarch/}" \
               2>/dev/null || true)
    next=()
    for s in "${todo[@]}"; do
      [[ -n ${own[$s]:-} ]] || { echo "image: no installed package ships $s" >&2; return 1; }
    done
    fetch $(for s in "${todo[@]}"; do echo "${own[$s]}"; done | sort -u)
    for s in "${todo[@]}"; do
      pkg=${own[$s]} src=""
      for d in "$work/pool/$pkg/usr/lib/$multiarch" "$work/pool/$pkg/lib/$multiarch"; do
        [[ -e $d/$s ]] && { src="$d/$s"; break; }
      done
      [[ -n $src ]] || { echo "image: $pkg has no $s" >&2; return 1; }
      cp -L "$src" "$libdir/$s"
      [[ -e $rootfs/var/lib/dpkg/status.d/$pkg ]] || add_package "$rootfs" "$pkg"
      mapfile -t -O "${#next[@]}" next < <(needed "$libdir/$s")
    done
    unset own
    want=("${next[@]}")
  done
}

# make_rootfs ROOTFS PACKAGE: usr-merged skeleton, the package's files (not
# the systemd unit, sysusers or /etc/default files: no systemd in an image),
# the libraries, os-release.
make_rootfs() {
  local rootfs=$1 pkg=$2 deb
  deb=$(ls "$debs/${pkg}_${version}_"*.deb)
  mkdir -p "$rootfs"/{usr/bin,usr/sbin,usr/lib/$multiarch,usr/lib64,etc,proc,sys,dev,tmp,var/lib}
  ln -s usr/bin "$rootfs/bin"; ln -s usr/sbin "$rootfs/sbin"
  ln -s usr/lib "$rootfs/lib"; ln -s usr/lib64 "$rootfs/lib64"
  chmod 1777 "$rootfs/tmp"
  mkdir -p "$work/$pkg.deb"
  dpkg-deb -x "$deb" "$work/$pkg.deb"
  cp -a "$work/$pkg.deb/usr/." "$rootfs/usr/"
  rm -rf "$rootfs/usr/share/man"
  cp -a "$work/$pkg.deb/etc/tracehealth" "$rootfs/etc/"
  mkdir -p "$rootfs/var/lib/dpkg/status.d"
  dpkg-deb -f "$deb" | status_entry >"$rootfs/var/lib/dpkg/status.d/$pkg"
  add_libraries "$rootfs" "$rootfs/usr/bin/$pkg"
  ln -s "../lib/$multiarch/ld-linux-x86-64.so.2" "$rootfs/usr/lib64/ld-linux-x86-64.so.2"
  fetch base-files
  cp -L "$work/pool/base-files/usr/lib/os-release" "$rootfs/usr/lib/os-release"
  ln -s ../usr/lib/os-release "$rootfs/etc/os-release"
  add_package "$rootfs" base-files
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
}

# pack NAME ROOTFS OWNED_DIR UID: OCI layout $oci/NAME with one layer; every
# file owned by root except OWNED_DIR (owned by UID). umoci config follows.
pack() {
  local name=$1 rootfs=$2 owned=$3 uid=$4 layer="$work/$1.tar"
  local tar_opts=(--sort=name --format=posix --numeric-owner --mtime="@$epoch"
                  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
  find "$rootfs" -exec touch -h -d "@$epoch" {} +
  tar -C "$rootfs" "${tar_opts[@]}" --owner=0 --group=0 --exclude="./$owned" -cf "$layer" .
  tar -C "$rootfs" "${tar_opts[@]}" --owner="$uid" --group="$uid" -rf "$layer" "./$owned"
  rm -rf "${oci:?}/$name"
  mkdir -p "$oci"
  umoci init --layout "$oci/$name"
  umoci new --image "$oci/$name:$version"
  umoci raw add-layer --image "$oci/$name:$version" --history.created="$created" \
    --history.created_by="deploy/image/build.sh" \
    --history.comment="$name $version and the libraries it loads, from Debian 12 packages" "$layer"
}

config() {  # config NAME umoci-config-flags...
  local name=$1; shift
  umoci config --image "$oci/$name:$version" --no-history --created="$created" \
    --author="tracehealth maintainers" --architecture=amd64 --os=linux \
    --config.workingdir=/ --config.env=PATH=/usr/bin \
    --config.label=org.opencontainers.image.title="$name" \
    --config.label=org.opencontainers.image.version="$version" \
    --config.label=org.opencontainers.image.revision="$revision" \
    --config.stopsignal=SIGTERM "$@"
  umoci gc --layout "$oci/$name"
}

# Agent: root, like the unit (User=root) and the DaemonSet (runAsUser 0).
agent=$work/rootfs-agent
make_rootfs "$agent" tracehealth-agent
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\n' >"$agent/etc/passwd"
printf 'root:x:0:\n' >"$agent/etc/group"
mkdir -p "$agent"/host/{proc,sys,boot} "$agent/var/lib/tracehealth-agent"
chmod 0700 "$agent/var/lib/tracehealth-agent"
pack tracehealth-agent "$agent" var/lib/tracehealth-agent 0
config tracehealth-agent --config.user=0:0 \
  --config.entrypoint=/usr/bin/tracehealth-agent \
  --config.cmd=--root=/host --config.cmd=--state_dir=/var/lib/tracehealth-agent \
  --config.volume=/var/lib/tracehealth-agent

# Server: the unit's user tracehealth, uid/gid 65532 as in deploy/k8s/base/server.yaml.
# SQLite's temporary files go to the data volume: the root is read-only there.
server=$work/rootfs-server
make_rootfs "$server" tracehealth-server
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\ntracehealth:x:65532:65532:tracehealth server:/var/lib/tracehealth-server:/usr/sbin/nologin\n' >"$server/etc/passwd"
printf 'root:x:0:\ntracehealth:x:65532:\n' >"$server/etc/group"
mkdir -p "$server/var/lib/tracehealth-server"
chmod 0750 "$server/var/lib/tracehealth-server"
pack tracehealth-server "$server" var/lib/tracehealth-server 65532
config tracehealth-server --config.user=65532:65532 \
  --config.entrypoint=/usr/bin/tracehealth-server \
  --config.cmd=--listen=0.0.0.0:7443 --config.cmd=--metrics_listen=0.0.0.0:9464 \
  --config.cmd=--data_dir=/var/lib/tracehealth-server \
  --config.cmd=--alert_rules=/etc/tracehealth/alert-rules.yaml \
  --config.env=SQLITE_TMPDIR=/var/lib/tracehealth-server \
  --config.exposedports=7443/tcp --config.exposedports=9464/tcp \
  --config.volume=/var/lib/tracehealth-server

for name in tracehealth-agent tracehealth-server; do
  rootfs=$work/rootfs-${name#tracehealth-}
  manifest=$(jq -r '.manifests[0].digest' "$oci/$name/index.json")
  layers=$(jq '[.layers[].size] | add' "$oci/$name/blobs/sha256/${manifest#sha256:}")
  printf 'image: %s:%s  %s KiB compressed, %s KiB unpacked, %s files from %s Debian packages\n' \
    "$name" "$version" "$((layers / 1024))" "$(du -sk "$rootfs" | cut -f1)" \
    "$(find "$rootfs" -type f | wc -l)" "$(ls "$rootfs/var/lib/dpkg/status.d" | wc -l)"
done
echo "image: built in $((SECONDS - start)) s"
