#!/usr/bin/env bash
# Checks the arm64 packages and images of `deploy/package.sh --arch=all` (or
# --arch=arm64) on this x86-64 machine, without installing them:
#
#   tests/packaging/arm64_test.sh OUT      (OUT of deploy/package.sh)
#
# 1. each arm64 .deb (tracehealth-agent, -server, -tools and their -dbgsym):
#    `dpkg-deb -I` says Architecture: arm64; every binary it unpacks is
#    ARM aarch64 (`file`) and stripped, its debug info in the -dbgsym
#    package under its build id; Depends names the arm64 libraries the
#    binary links (only the server SQLite and libcurl) and, when OUT has the
#    amd64 .debs, the same packages as amd64's Depends;
# 2. the agent of the .deb runs under qemu-aarch64 (-L the arm64 sysroot)
#    --once on the fixture host preempt-none-6.16-240k and prints its report;
# 3. each image layout's tag VERSION is an image index listing one manifest
#    per architecture OUT has .debs of (linux/amd64, linux/arm64), each
#    manifest's config saying that architecture and os linux, and tag
#    VERSION-ARCH is that manifest; the arm64 images' binaries are ARM aarch64;
# 4. the arm64 images, unpacked (umoci unpack of VERSION-arm64), run under
#    qemu-aarch64 with only the image's root for libraries (-L ROOTFS): the
#    server with its image's command (a temporary data directory, 127.0.0.1
#    port 0), the agent with its image's entrypoint sending one report of the
#    fixture; tracehealthctl of the arm64 tracehealth-tools .deb reads it back.
# Skipped, with the reason on a line starting "arm64 packages: SKIPPED",
# without the cross compiler (deploy/package.sh then skips arm64 too) or
# qemu-aarch64, or when the arm64 sysroot cannot be fetched
# (deploy/arm64/sysroot.sh exit 3). Otherwise OUT without arm64 .debs fails.
# Needs root (common.sh). Prints PASS/FAIL per check; exits non-zero on any
# failure.
set -uo pipefail
test_name=arm64_test
. "$(dirname "$0")/common.sh" "$@"
skip() { echo "arm64 packages: SKIPPED: $*"; exit 0; }

command -v aarch64-linux-gnu-g++ >/dev/null ||
  skip "no aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu)"
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64) ||
  skip "no qemu-aarch64 (package qemu-user-static)"
tmp=$(mktemp -d -t tracehealth-arm64-test.XXXXXX)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
rc=0
sysroot=$(bash "$repo/deploy/arm64/sysroot.sh" 2>"$tmp/sysroot.err") || rc=$?
if ((rc == 3)); then
  skip "$(sed -n 's/^arm64 sysroot: unavailable: //p' "$tmp/sysroot.err" | head -n 1)"
elif ((rc)); then
  flunk "deploy/arm64/sysroot.sh exited $rc" "$(cat "$tmp/sysroot.err")"
  finish
fi

deb() { echo "$out/debs/${1}_${version}_$2.deb"; }  # deb PACKAGE ARCH
pkgs=(tracehealth-agent tracehealth-server tracehealth-tools)
if [[ ! -f $(deb tracehealth-agent arm64) ]]; then
  flunk "OUT has arm64 packages" "no $(deb tracehealth-agent arm64) (deploy/package.sh --arch=all)"
  finish
fi

# --- 1. the .debs ------------------------------------------------------------------
for p in "${pkgs[@]}"; do
  for d in "$(deb "$p" arm64)" "$(deb "$p-dbgsym" arm64)"; do
    line=$(dpkg-deb -I "$d" 2>&1 | grep '^ Architecture:')
    if [[ $line == " Architecture: arm64" ]]; then
      pass "dpkg-deb -I $(basename "$d"):$line"
    else
      flunk "dpkg-deb -I $(basename "$d") says Architecture: arm64" "${line:-$(dpkg-deb -I "$d" 2>&1 | head -n 5)}"
    fi
  done
  mkdir -p "$tmp/deb/$p"
  dpkg-deb -x "$(deb "$p" arm64)" "$tmp/deb/$p"
done
for b in tracehealth-agent:tracehealth-agent tracehealth-server:tracehealth-server \
         tracehealthctl:tracehealth-tools tracehealth-loadgen:tracehealth-tools; do
  bin=$tmp/deb/${b#*:}/usr/bin/${b%%:*} dbgsym=$(deb "${b#*:}-dbgsym" arm64)
  what=$(file -b "$bin" 2>&1)
  if [[ $what == "ELF 64-bit LSB "*", ARM aarch64,"* ]]; then
    pass "file /usr/bin/${b%%:*} of $(basename "$(deb "${b#*:}" arm64)"): $(cut -d, -f1-2 <<<"$what")"
  else
    flunk "file /usr/bin/${b%%:*} of $(basename "$(deb "${b#*:}" arm64)") says ARM aarch64" "$what"
  fi
  check_stripped "$bin" "$dbgsym" "/usr/bin/${b%%:*}"
done

# Depends: package names, computed by dpkg-shlibdeps from the arm64 libraries.
depends() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort -u; }
want_deps() {  # want_deps PKG "present..." "absent..."
  local d missing=() extra=() x
  d=$(depends "$(deb "$1" arm64)")
  for x in $2; do grep -qx "$x" <<<"$d" || missing+=("$x"); done
  for x in $3; do grep -qx "$x" <<<"$d" && extra+=("$x"); done
  if ((${#missing[@]} + ${#extra[@]} == 0)); then
    pass "$1 (arm64) Depends has $2, not ${3:-anything else}"
  else
    flunk "$1 (arm64) Depends" "missing: ${missing[*]:-}; unexpected: ${extra[*]:-}; Depends: $(tr '\n' ' ' <<<"$d")"
  fi
  if [[ -f $(deb "$1" amd64) ]]; then
    if [[ $d == "$(depends "$(deb "$1" amd64)")" ]]; then
      pass "$1 Depends names the same packages on arm64 as on amd64 ($(wc -l <<<"$d"))"
    else
      flunk "$1 Depends the same packages on arm64 as on amd64" \
        "$(diff <(depends "$(deb "$1" amd64)") <(echo "$d") | grep '^[<>]' | sed 's/^</amd64 only:/; s/^>/arm64 only:/')"
    fi
  fi
}
want_deps tracehealth-server "libgrpc++1.51 libsqlite3-0 libtcmalloc-minimal4 libcurl4 libc6 libstdc++6" ""
want_deps tracehealth-agent "libgrpc++1.51 libyaml-cpp0.7 zlib1g libc6 libstdc++6" "libsqlite3-0 libtcmalloc-minimal4 libcurl4"
want_deps tracehealth-tools "libgrpc++1.51 libtcmalloc-minimal4 libc6 libstdc++6" "libsqlite3-0 libcurl4"

# --- 2. the agent of the .deb under qemu ---------------------------------------------
on_arm() {  # on_arm ROOT BINARY ARGS...: BINARY under qemu-aarch64, libraries from ROOT
  local root=$1; shift
  QEMU_LD_PREFIX=$root "$qemu" -L "$root" "$@"
}
once=$(on_arm "$sysroot" "$tmp/deb/tracehealth-agent/usr/bin/tracehealth-agent" --once \
         --root="$fixture" --state_dir="$tmp/deb-agent-state" 2>&1)
check_once() {  # check_once WHAT OUTPUT
  if grep -q "^tracehealth $version " <<<"$2" &&
     grep -q '^Kernel      6.16.12-cloud-amd64 x86_64' <<<"$2" &&
     grep -q 'walks 240000 threads (240000 without a shadow stack) in 7500 passes of 32' <<<"$2" &&
     grep -q 'predicts a soft lockup (PREEMPT_NONE' <<<"$2"; then
    pass "$1 --once --root=preempt-none-6.16-240k: $version, 7500 passes of 32, soft lockup"
  else
    flunk "$1 --once --root=preempt-none-6.16-240k" "$(head -n 30 <<<"$2")"
  fi
}
check_once "qemu-aarch64 -L SYSROOT /usr/bin/tracehealth-agent of the arm64 .deb" "$once"

# --- 3. the image indexes ----------------------------------------------------------
mapfile -t deb_arches < <(cd "$out/debs" && ls tracehealth-agent_"${version}"_*.deb |
  sed "s/^tracehealth-agent_${version}_\\(.*\\)\\.deb$/\\1/" | sort)
want_platforms=$(printf 'linux/%s\n' "${deb_arches[@]}" | paste -sd' ')
blob() { echo "$out/oci/$1/blobs/sha256/${2#sha256:}"; }  # blob NAME DIGEST
tagged() {  # tagged NAME TAG: the descriptor index.json tags TAG
  jq -c --arg t "$2" '[.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t)]
    | if length == 1 then .[0] else empty end' "$out/oci/$1/index.json"
}
for name in tracehealth-agent tracehealth-server; do
  desc=$(tagged "$name" "$version")
  if [[ $(jq -r .mediaType <<<"$desc") != application/vnd.oci.image.index.v1+json ]]; then
    flunk "$name:$version is an image index" "descriptor: ${desc:-none}"
    continue
  fi
  index=$(blob "$name" "$(jq -r .digest <<<"$desc")")
  platforms=$(jq -r '[.manifests[] | .platform.os + "/" + .platform.architecture] | join(" ")' "$index")
  if [[ $platforms == "$want_platforms" ]] &&
     [[ $(sha256sum "$index" | cut -d' ' -f1) == "$(jq -r .digest <<<"$desc" | cut -d: -f2)" ]]; then
    pass "$name:$version is an image index of $platforms"
  else
    flunk "$name:$version lists $want_platforms" "got: $platforms; $(cat "$index")"
  fi
  while read -r m; do
    arch=$(jq -r .platform.architecture <<<"$m")
    manifest=$(blob "$name" "$(jq -r .digest <<<"$m")")
    config=$(blob "$name" "$(jq -r .config.digest "$manifest" 2>/dev/null)")
    got=$(jq -r '.os + "/" + .architecture' "$config" 2>&1)
    own=$(jq -r .digest <<<"$(tagged "$name" "$version-$arch")")
    if [[ $(jq -r .mediaType <<<"$m") == application/vnd.oci.image.manifest.v1+json &&
          $(jq -r .platform.os <<<"$m") == linux && $got == "linux/$arch" &&
          $own == "$(jq -r .digest <<<"$m")" ]]; then
      pass "$name:$version's linux/$arch manifest ($name:$version-$arch): config os/architecture $got"
    else
      flunk "$name:$version's linux/$arch manifest has a linux/$arch config and tag $version-$arch" \
        "config: $got; manifest $(jq -r .digest <<<"$m"), tag $version-$arch: ${own:-none}"
    fi
  done < <(jq -c '.manifests[]' "$index")
done

# --- 4. the arm64 images under qemu --------------------------------------------------
for name in tracehealth-agent tracehealth-server; do
  if ! msg=$(umoci unpack --image "$out/oci/$name:$version-arm64" "$tmp/bundle-$name" 2>&1); then
    flunk "umoci unpack $name:$version-arm64" "$msg"
    finish
  fi
  bin=$tmp/bundle-$name/rootfs/usr/bin/$name
  what=$(file -b "$bin" 2>&1)
  if [[ $what == "ELF 64-bit LSB "*", ARM aarch64,"* ]]; then
    pass "file /usr/bin/$name of $name:$version-arm64: $(cut -d, -f1-2 <<<"$what")"
  else
    flunk "file /usr/bin/$name of $name:$version-arm64 says ARM aarch64" "$what"
  fi
done
image_config() {  # image_config NAME JQ: of the arm64 image
  local manifest
  manifest=$(blob "$1" "$(jq -r .digest <<<"$(tagged "$1" "$version-arm64")")")
  jq -r "$2" "$(blob "$1" "$(jq -r .config.digest "$manifest")")"
}
server_root=$tmp/bundle-tracehealth-server/rootfs
agent_root=$tmp/bundle-tracehealth-agent/rootfs
mkdir -p "$tmp/server-data" "$tmp/agent-state"
mapfile -t server_cmd < <(image_config tracehealth-server '.config.Entrypoint[], .config.Cmd[]')
# The image's command; a temporary data directory and loopback ports after it.
SQLITE_TMPDIR=$tmp/server-data QEMU_LD_PREFIX=$server_root "$qemu" -L "$server_root" \
  "$server_root${server_cmd[0]}" "${server_cmd[@]:1}" --data_dir="$tmp/server-data" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
  --port_file="$tmp/server-data/ports" >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
  [[ -s $tmp/server-data/ports ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
grpc=$(sed -n 's/^grpc=//p' "$tmp/server-data/ports" 2>/dev/null)
if [[ -n $grpc ]]; then
  pass "server of $version-arm64 (${server_cmd[*]}) under qemu-aarch64 -L ROOTFS: gRPC on $grpc"
else
  flunk "server of tracehealth-server:$version-arm64 under qemu-aarch64 started" "$(tail -n 20 "$tmp/server.log")"
  finish
fi
if grep -q "^tracehealth-server: $(grep -c '^  - name:' "$repo/deploy/alerts/rules.yaml") alert rules" "$tmp/server.log"; then
  pass "server of $version-arm64 loaded the image's /etc/tracehealth/alert-rules.yaml"
else
  flunk "server of $version-arm64 loaded the image's alert rules" "$(head -n 10 "$tmp/server.log")"
fi
mapfile -t entrypoint < <(image_config tracehealth-agent '.config.Entrypoint[]')
if timeout 120 env QEMU_LD_PREFIX="$agent_root" "$qemu" -L "$agent_root" "$agent_root${entrypoint[0]}" \
     "${entrypoint[@]:1}" --root="$fixture" --state_dir="$tmp/agent-state" --server="$grpc" \
     --host_id=arm64-image-node --labels=arch=arm64 --max_reports=1 >"$tmp/agent.log" 2>&1; then
  pass "agent of tracehealth-agent:$version-arm64 under qemu-aarch64 -L ROOTFS sent one report of preempt-none-6.16-240k"
else
  flunk "agent of tracehealth-agent:$version-arm64 sent a report" "$(tail -n 20 "$tmp/agent.log")"
fi
ctl=$tmp/deb/tracehealth-tools/usr/bin/tracehealthctl
json=""
for _ in $(seq 1 60); do
  json=$(on_arm "$sysroot" "$ctl" --server="$grpc" --json host arm64-image-node 2>&1) && break
  json=""
  sleep 0.5
done
echo "$json" >"$tmp/host.json"
if msg=$(python3 "$here/check_host.py" "$tmp/host.json" arm64-image-node arch=arm64 "$version" 2>&1); then
  pass "tracehealthctl (arm64 .deb) host arm64-image-node: arch=arm64, agent $version, 240000 threads, 7500 passes, RISK_STALL"
else
  flunk "tracehealthctl (arm64 .deb) host arm64-image-node" "$msg"
fi
kill -TERM "$server_pid"
wait "$server_pid"
rc=$?
server_pid=""
if [[ $rc -eq 0 ]]; then
  pass "server of $version-arm64 stopped on SIGTERM with status 0"
else
  flunk "server of $version-arm64 stop on SIGTERM" "status $rc; $(tail -n 5 "$tmp/server.log")"
fi
finish
