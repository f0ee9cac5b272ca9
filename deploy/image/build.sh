#!/usr/bin/env bash
# Builds the OCI images of the agent and the server from tracehealth's .debs
# and Debian's packages, without any registry:
#
#   deploy/image/build.sh DEBS_DIR OCI_DIR
#
# One image per architecture whose tracehealth-agent .deb DEBS_DIR holds
# (amd64, arm64). Each image is one layer: the package's files (binary,
# /etc/tracehealth, docs) plus only the shared libraries the binary loads.
# Those are found by walking DT_NEEDED from the binary; each comes from its
# Debian package of the image's architecture (`apt-get download`, cached under
# ~/.cache/tracehealth/debs, unpacked with `dpkg-deb -x`), with that package's
# copyright file and a dpkg status entry under /var/lib/dpkg/status.d/ so
# image scanners see the versions. amd64's packages are the machine's apt
# lists', the owner of each library found with dpkg -S (the machine links
# the same ones); arm64's come through deploy/arm64/sysroot.sh's private apt
# configuration, the owner of each library found among the .debs the sysroot
# is unpacked from (those .debs serve as the cache).
#
# Written to OCI_DIR/tracehealth-agent and OCI_DIR/tracehealth-server, OCI
# layouts packed with umoci, tagged
#   VERSION-ARCH  each architecture's image manifest (config architecture
#                 ARCH, os linux; the descriptor carries the platform too)
#   VERSION       an image index of those manifests, each with its platform
#                 (what `skopeo copy --all` pushes; a runtime pulls its own)
# VERSION is the package version. The layer tar is sorted, with fixed owners
# and the changelog's timestamp, and the index is written by jq in a fixed
# order, so the same inputs give the same digests.
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
start=$SECONDS

work=$(mktemp -d -t tracehealth-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache"

# The architectures, from the agent's .debs (amd64 first).
mapfile -t arches < <(cd "$debs" && ls tracehealth-agent_"${version}"_*.deb 2>/dev/null |
  sed "s/^tracehealth-agent_${version}_\(.*\)\.deb$/\1/" | sort)
((${#arches[@]})) || { echo "image: no tracehealth-agent_${version}_*.deb in $debs" >&2; exit 1; }

# Per architecture (use_arch ARCH sets them): the multiarch triplet, the ELF
# machine readelf names, apt's options, the unpacked packages' pool.
arch="" multiarch="" machine="" apt_opts=() pool=""
declare -A local_deb=() owner_of=()  # arm64: .deb file name -> path, soname -> package
use_arch() {
  arch=$1 pool="$work/pool-$1"
  mkdir -p "$pool"
  case $arch in
    amd64) multiarch=x86_64-linux-gnu machine="Advanced Micro Devices X86-64" apt_opts=() ;;
    arm64)
      multiarch=aarch64-linux-gnu machine=AArch64
      local sysroot deb p path
      sysroot=$(bash "$repo/deploy/arm64/sysroot.sh") ||
        { echo "image: the arm64 packages cannot be had (deploy/arm64/sysroot.sh)" >&2; return 1; }
      apt_opts=(-c "$(bash "$repo/deploy/arm64/sysroot.sh" --apt-config)")
      # The libraries the binaries link are the sysroot's: which .deb ships
      # each (the runtime package; -dev packages ship only libfoo.so).
      while read -r deb; do
        local_deb[$(basename "$deb")]=$deb
        p=$(dpkg-deb -f "$deb" Package)
        while read -r path; do
          [[ -n ${owner_of[${path##*/}]:-} ]] || owner_of[${path##*/}]=$p
        done < <(dpkg-deb -c "$deb" | awk '{ print $6 }' |
                   grep -E "^\./(usr/)?lib/$multiarch/[^/]+\.so\.[^/]*$")
      done <"$sysroot/.tracehealth-debs"
      ;;
    *) echo "image: no image for architecture $arch" >&2; return 1 ;;
  esac
}

# fetch PKG...: unpacks each of Debian's PKGs (of $arch) into $pool/PKG
# (once), its control fields into $pool/PKG.control. The .debs are the
# mirror's current ones, kept in $cache (or the arm64 sysroot's); one apt-get
# call for all of them.
fetch() {
  local todo=() missing=() p uri file deb
  declare -A files=()
  for p; do [[ -d $pool/$p ]] || todo+=("$p"); done
  ((${#todo[@]})) || return 0
  while read -r uri file _; do
    files[${file%%_*}]=$file
    [[ -s $cache/$file || -n ${local_deb[$file]:-} ]] || missing+=("${file%%_*}")
  done < <(apt-get "${apt_opts[@]}" download --print-uris "${todo[@]}" 2>/dev/null | tr -d "'")
  if ((${#missing[@]})); then
    mkdir -p "$work/dl"
    (cd "$work/dl" && apt-get "${apt_opts[@]}" download -q "${missing[@]}" >/dev/null 2>&1) ||
      { echo "image: apt-get download ${missing[*]} ($arch) failed" >&2; return 1; }
    mv -- "$work/dl"/*.deb "$cache/"
  fi
  for p in "${todo[@]}"; do
    file=${files[$p]:-}
    [[ -n $file ]] || { echo "image: apt-get knows no package $p ($arch)" >&2; return 1; }
    deb=$cache/$file
    [[ -s $deb ]] || deb=${local_deb[$file]}
    mkdir -p "$pool/$p"
    dpkg-deb -x "$deb" "$pool/$p"
    dpkg-deb -f "$deb" >"$pool/$p.control"
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
  doc="$pool/$pkg/usr/share/doc/$pkg"
  if [[ -L $doc ]]; then  # the doc directory of another package of the same source
    target=$(basename "$(readlink "$doc")")
    mkdir -p "$rootfs/usr/share/doc"
    ln -sfn "$target" "$rootfs/usr/share/doc/$pkg"
    [[ -e $rootfs/var/lib/dpkg/status.d/$target ]] || add_package "$rootfs" "$target"
  elif [[ -f $doc/copyright ]]; then
    install -D -m 0644 "$doc/copyright" "$rootfs/usr/share/doc/$pkg/copyright"
  fi
  mkdir -p "$rootfs/var/lib/dpkg/status.d"
  status_entry <"$pool/$pkg.control" >"$rootfs/var/lib/dpkg/status.d/$pkg"
}

# add_libraries ROOTFS ELF: every shared library ELF needs, transitively, each
# from the Debian package that ships it (amd64: found with dpkg -S on this
# machine, which links against the same packages; arm64: the sysroot's
# owner_of), one lookup and one fetch per level.
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
    if [[ $arch == amd64 ]]; then
      while IFS= read -r line; do
        pkg=${line%%: *} path=${line#*: }
        pkg=${pkg%%:*}
        [[ $pkg == *" "* ]] && continue  # "diversion by ..." lines
        case $path in
          "/lib/$multiarch/"* | "/usr/lib/$multiarch/"*) own[${path##*/}]=$pkg ;;
        esac
      done < <(dpkg -S "${todo[@]/#//lib/$multiarch/}" "${todo[@]/#//usr/lib/$multiarch/}" \
                 2>/dev/null || true)
    else
      for s in "${todo[@]}"; do
        [[ -z ${owner_of[$s]:-} ]] || own[$s]=${owner_of[$s]}
      done
    fi
    next=()
    for s in "${todo[@]}"; do
      [[ -n ${own[$s]:-} ]] || { echo "image: no $arch package known to ship $s" >&2; return 1; }
    done
    fetch $(for s in "${todo[@]}"; do echo "${own[$s]}"; done | sort -u)
    for s in "${todo[@]}"; do
      pkg=${own[$s]} src=""
      for d in "$pool/$pkg/usr/lib/$multiarch" "$pool/$pkg/lib/$multiarch"; do
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

# make_rootfs ROOTFS PACKAGE: usr-merged skeleton (/lib64 where the
# binary's dynamic loader is, amd64), the package's files (not the systemd
# unit, sysusers or /etc/default files: no systemd in an image), the
# libraries, os-release. The package's binary must be of $arch.
make_rootfs() {
  local rootfs=$1 pkg=$2 deb unpacked interp link
  deb=$debs/${pkg}_${version}_$arch.deb unpacked=$work/$pkg.$arch.deb
  mkdir -p "$unpacked"
  dpkg-deb -x "$deb" "$unpacked"
  if ! readelf -h "$unpacked/usr/bin/$pkg" | grep -qE "^ +Machine: +$machine\$"; then
    echo "image: $(basename "$deb") holds a binary for $(readelf -h "$unpacked/usr/bin/$pkg" |
      sed -n 's/^ *Machine: *//p'), not $arch" >&2
    return 1
  fi
  interp=$(readelf -l "$unpacked/usr/bin/$pkg" | sed -n 's/.*program interpreter: \(.*\)\]$/\1/p')
  mkdir -p "$rootfs"/{usr/bin,usr/sbin,usr/lib/$multiarch,etc,proc,sys,dev,tmp,var/lib}
  ln -s usr/bin "$rootfs/bin"; ln -s usr/sbin "$rootfs/sbin"
  ln -s usr/lib "$rootfs/lib"
  if [[ $interp == /lib64/* ]]; then mkdir -p "$rootfs/usr/lib64"; ln -s usr/lib64 "$rootfs/lib64"; fi
  chmod 1777 "$rootfs/tmp"
  cp -a "$unpacked/usr/." "$rootfs/usr/"
  rm -rf "$rootfs/usr/share/man"
  cp -a "$unpacked/etc/tracehealth" "$rootfs/etc/"
  mkdir -p "$rootfs/var/lib/dpkg/status.d"
  dpkg-deb -f "$deb" | status_entry >"$rootfs/var/lib/dpkg/status.d/$pkg"
  add_libraries "$rootfs" "$rootfs/usr/bin/$pkg"
  # The loader the binary names (/lib64/ld-linux-x86-64.so.2,
  # /lib/ld-linux-aarch64.so.1), pointing at the libc6 one.
  link=$rootfs/usr/${interp#/}
  [[ -e $rootfs/usr/lib/$multiarch/${interp##*/} ]] ||
    { echo "image: $pkg ($arch) loads no ${interp##*/}" >&2; return 1; }
  [[ -e $link ]] || ln -s "$(realpath -m --relative-to="$(dirname "$link")" \
    "$rootfs/usr/lib/$multiarch/${interp##*/}")" "$link"
  fetch base-files
  cp -L "$pool/base-files/usr/lib/os-release" "$rootfs/usr/lib/os-release"
  ln -s ../usr/lib/os-release "$rootfs/etc/os-release"
  add_package "$rootfs" base-files
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
}

# pack NAME ROOTFS OWNED_DIR UID: the image of $arch, one layer, as tag
# VERSION-ARCH of the OCI layout $oci/NAME (made by init_layout); every file
# owned by root except OWNED_DIR (owned by UID). umoci config follows.
pack() {
  local name=$1 rootfs=$2 owned=$3 uid=$4 layer="$work/$1.$arch.tar"
  local tar_opts=(--sort=name --format=posix --numeric-owner --mtime="@$epoch"
                  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
  find "$rootfs" -exec touch -h -d "@$epoch" {} +
  tar -C "$rootfs" "${tar_opts[@]}" --owner=0 --group=0 --exclude="./$owned" -cf "$layer" .
  tar -C "$rootfs" "${tar_opts[@]}" --owner="$uid" --group="$uid" -rf "$layer" "./$owned"
  umoci new --image "$oci/$name:$version-$arch"
  umoci raw add-layer --image "$oci/$name:$version-$arch" --history.created="$created" \
    --history.created_by="deploy/image/build.sh" \
    --history.comment="$name $version and the libraries it loads, from Debian 12 packages" "$layer"
}

init_layout() {  # init_layout NAME
  rm -rf "${oci:?}/$1"
  mkdir -p "$oci"
  umoci init --layout "$oci/$1"
}

config() {  # config NAME umoci-config-flags...
  local name=$1; shift
  umoci config --image "$oci/$name:$version-$arch" --no-history --created="$created" \
    --author="tracehealth maintainers" --architecture="$arch" --os=linux \
    --config.workingdir=/ --config.env=PATH=/usr/bin \
    --config.label=org.opencontainers.image.title="$name" \
    --config.label=org.opencontainers.image.version="$version" \
    --config.label=org.opencontainers.image.revision="$revision" \
    --config.stopsignal=SIGTERM "$@"
  umoci gc --layout "$oci/$name"
}

# index NAME: the image index of the layout's VERSION-ARCH manifests, each
# descriptor with its platform (linux/ARCH), as a blob tagged VERSION; the
# VERSION-ARCH descriptors in index.json get their platform too. Written
# after the last umoci call: umoci gc would not keep a blob only an index
# blob names.
index() {
  local layout="$oci/$1" descs blob digest
  descs=$(jq -c --arg v "$version" '[.manifests[]
      | (.annotations["org.opencontainers.image.ref.name"] // "") as $ref
      | select($ref | startswith($v + "-"))
      | . + {platform: {architecture: ($ref | ltrimstr($v + "-")), os: "linux"}}]
    | sort_by(.platform.architecture)' "$layout/index.json")
  blob=$(jq -c -n --argjson d "$descs" '{schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [$d[] | del(.annotations)]}')
  digest=$(printf '%s' "$blob" | sha256sum | cut -d' ' -f1)
  printf '%s' "$blob" >"$layout/blobs/sha256/$digest"
  jq -c --argjson d "$descs" --arg v "$version" --arg digest "sha256:$digest" \
     --argjson size "$(printf '%s' "$blob" | wc -c)" \
     '.manifests = [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $digest,
                     size: $size, annotations: {"org.opencontainers.image.ref.name": $v}}] + $d' \
     "$layout/index.json" >"$layout/index.json.new"
  mv "$layout/index.json.new" "$layout/index.json"
}

# Agent: root, like the unit (User=root) and the DaemonSet (runAsUser 0).
agent_image() {
  local agent=$work/rootfs-agent-$arch
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
}

# Server: the unit's user tracehealth, uid/gid 65532 as in deploy/k8s/base/server.yaml.
# SQLite's temporary files go to the data volume: the root is read-only there.
server_image() {
  local server=$work/rootfs-server-$arch
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
}

init_layout tracehealth-agent
init_layout tracehealth-server
for a in "${arches[@]}"; do
  use_arch "$a"
  agent_image
  server_image
done

for name in tracehealth-agent tracehealth-server; do
  index "$name"
  for a in "${arches[@]}"; do
    rootfs=$work/rootfs-${name#tracehealth-}-$a
    manifest=$(jq -r --arg ref "$version-$a" \
      '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | .digest' \
      "$oci/$name/index.json")
    layers=$(jq '[.layers[].size] | add' "$oci/$name/blobs/sha256/${manifest#sha256:}")
    printf 'image: %s:%s  %s KiB compressed, %s KiB unpacked, %s files from %s Debian packages\n' \
      "$name" "$version-$a" "$((layers / 1024))" "$(du -sk "$rootfs" | cut -f1)" \
      "$(find "$rootfs" -type f | wc -l)" "$(ls "$rootfs/var/lib/dpkg/status.d" | wc -l)"
  done
  idx=$(jq -r --arg v "$version" \
    '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $v) | .digest' \
    "$oci/$name/index.json")
  printf 'image: %s:%s  index of %s\n' "$name" "$version" \
    "$(jq -r '[.manifests[].platform | .os + "/" + .architecture] | join(", ")' \
         "$oci/$name/blobs/sha256/${idx#sha256:}")"
done
echo "image: built in $((SECONDS - start)) s"
