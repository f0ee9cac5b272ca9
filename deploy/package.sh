#!/usr/bin/env bash
# Builds tracehealth's Debian packages and container images from this
# checkout, offline from Debian's packages:
#
#   deploy/package.sh [--arch=amd64|arm64|all] [OUT]   (OUT defaults to deploy/out)
#
#   OUT/debs/  tracehealth-agent, tracehealth-server, tracehealth-tools
#              _VERSION_ARCH.deb (+ -dbgsym packages with the debug info),
#              made by dpkg-buildpackage from deploy/debian/ and checked by
#              lintian (any error fails the build), per architecture
#   OUT/oci/tracehealth-agent, OUT/oci/tracehealth-server
#              OCI image layouts (deploy/image/build.sh): tag VERSION-ARCH
#              per architecture, tag VERSION the image index of them
#
# --arch: amd64 (the default), arm64, or all (both). VERSION is the one of
# deploy/debian/changelog. The binaries are those of the normal `bazel build`
# (the .bazelrc compiles with -O2 -g1; arm64: `bazel build --config=arm64`,
# the cross build of tests/arm64/qemu_agent_test.sh, the same compilations),
# linked again with --strip=never (Bazel's default strips the debug info at
# link time; nothing is compiled again) so that dh_strip can strip them and
# keep their debug info in the -dbgsym packages. arm64's are packaged with
# `dpkg-buildpackage -aarm64` (a cross build: aarch64-linux-gnu-strip and
# -objcopy), its Depends computed by dpkg-shlibdeps from the shlibs and
# symbols files of the arm64 sysroot's packages (deploy/arm64/sysroot.sh,
# never installed). Without the cross compiler or the arm64 packages
# (offline) arm64 is skipped with the reason on a line "package: arm64
# SKIPPED: ..." (exit 3 if it was the only architecture asked).
# Needs dpkg-dev, debhelper, lintian, umoci and jq (deploy/setup.sh installs
# them; arm64 also g++-aarch64-linux-gnu, deploy/setup.sh --test), and apt's
# package lists; no root.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
arches=(amd64)
case ${1:-} in
  --arch=amd64) arches=(amd64); shift ;;
  --arch=arm64) arches=(arm64); shift ;;
  --arch=all) arches=(amd64 arm64); shift ;;
  --arch=*) echo "usage: $0 [--arch=amd64|arm64|all] [OUT]" >&2; exit 2 ;;
esac
out=$(realpath -m "${1:-deploy/out}")
version=$(dpkg-parsechangelog -l deploy/debian/changelog -S Version)
start=$SECONDS

stage=$(mktemp -d -t tracehealth-pkg.XXXXXX)
trap 'rm -rf "$stage"' EXIT

# arm64_available: the cross compiler and the sysroot (sets sysroot), or
# prints the skip line and fails.
arm64_available() {
  local rc=0
  if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
    echo "package: arm64 SKIPPED: no aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu)"
    return 1
  fi
  sysroot=$(bash deploy/arm64/sysroot.sh 2>"$stage/sysroot.err") || rc=$?
  if ((rc == 3)); then
    echo "package: arm64 SKIPPED: $(sed -n 's/^arm64 sysroot: unavailable: //p' "$stage/sysroot.err" | head -n 1)"
    return 1
  elif ((rc)); then
    cat "$stage/sysroot.err" >&2
    echo "package: deploy/arm64/sysroot.sh exited $rc" >&2
    exit 1
  fi
}
if [[ " ${arches[*]} " == *" arm64 "* ]] && ! arm64_available; then
  mapfile -t arches < <(printf '%s\n' "${arches[@]}" | grep -vx arm64)
  ((${#arches[@]})) || exit 3
fi

# shlibs_tree DIR: a package build tree over the arm64 sysroot (DIR/usr and
# DIR/lib are the sysroot's) whose DEBIAN/shlibs and DEBIAN/symbols are those
# of every package the sysroot is unpacked from: dpkg-shlibdeps -SDIR finds
# the arm64 libraries there and takes their dependencies from those files,
# as it takes an installed package's from /var/lib/dpkg/info.
shlibs_tree() {
  local dir=$1 deb f
  mkdir -p "$dir/DEBIAN"
  ln -s "$sysroot/usr" "$dir/usr"
  ln -s "$sysroot/lib" "$dir/lib"
  : >"$dir/DEBIAN/shlibs"
  : >"$dir/DEBIAN/symbols"
  while read -r deb; do
    rm -rf "$dir.control"
    dpkg-deb -e "$deb" "$dir.control"
    for f in shlibs symbols; do
      [[ ! -f $dir.control/$f ]] || cat "$dir.control/$f" >>"$dir/DEBIAN/$f"
    done
  done <"$sysroot/.tracehealth-debs"
  rm -rf "$dir.control"
  [[ -s $dir/DEBIAN/symbols ]] || { echo "package: no symbols file in the arm64 sysroot's packages" >&2; exit 1; }
}

rm -rf "$out/debs"
mkdir -p "$out/debs"
targets=(//:agent //:server //:tracehealthctl //:loadgen)
for arch in "${arches[@]}"; do
  bazel_opts=(--strip=never)
  [[ $arch == arm64 ]] && bazel_opts+=(--config=arm64)
  echo "package: building the $arch binaries"
  bazel build "${bazel_opts[@]}" "${targets[@]}" 2>&1 | tail -n 1
  execroot=$(bazel info "${bazel_opts[@]}" execution_root 2>/dev/null)
  # Where the root aliases' binaries are, wherever their packages live.
  mapfile -t binaries < <(bazel cquery "${bazel_opts[@]}" "set(${targets[*]})" --output=starlark \
    --starlark:expr='"\n".join([f.path for f in target.files.to_list()])' 2>/dev/null)

  src="$stage/$arch/tracehealth-$version"
  mkdir -p "$src"/{bin,conf,systemd,doc/agent}
  cp -r deploy/debian "$src/debian"
  for b in "${binaries[@]}"; do install -m 0755 "$execroot/$b" "$src/bin/"; done
  for b in tracehealth-agent tracehealth-server tracehealthctl tracehealth-loadgen; do
    [[ -x $src/bin/$b ]] || { echo "package: the build made no $b (${binaries[*]})" >&2; exit 1; }
  done
  cp deploy/systemd/tracehealth-agent.service deploy/systemd/tracehealth-server.service "$src/systemd/"
  cp deploy/systemd/tracehealth.sysusers.conf "$src/debian/tracehealth-server.tracehealth.sysusers"
  cp deploy/alerts/rules.yaml "$src/conf/alert-rules.yaml"
  cp deploy/debian/feature-table.yaml "$src/conf/"
  cp README.md "$src/doc/"
  cp agent/README.md common/kernel/features.yaml "$src/doc/agent/"

  build_env=()
  build_opts=(-b -us -uc)
  if [[ $arch == arm64 ]]; then
    shlibs_tree "$stage/arm64-libs"
    # CC: the compiler that built the binaries (dpkg-architecture checks it).
    build_env=(CC=aarch64-linux-gnu-gcc TRACEHEALTH_HOST_LIBS="$stage/arm64-libs")
    build_opts+=(-aarm64)
  fi
  echo "package: dpkg-buildpackage ${build_opts[*]} $version"
  (cd "$src" && env "${build_env[@]}" dpkg-buildpackage "${build_opts[@]}") >"$stage/build-$arch.log" 2>&1 ||
    { tail -n 40 "$stage/build-$arch.log" >&2; echo "package: dpkg-buildpackage failed ($arch)" >&2; exit 1; }

  echo "package: lintian ($arch)"
  changes="$stage/$arch/tracehealth_${version}_$arch.changes"
  lintian_rc=0
  TMPDIR="$stage" lintian --fail-on error --display-info --tag-display-limit 0 "$changes" \
    >"$stage/lintian-$arch.log" 2>&1 ||
    lintian_rc=$?
  grep -v '^running with root privileges' "$stage/lintian-$arch.log" || true
  if ((lintian_rc)); then
    echo "package: lintian reported errors ($arch, status $lintian_rc)" >&2
    exit 1
  fi
  cp "$stage/$arch"/*.deb "$changes" "$stage/$arch"/*.buildinfo "$out/debs/"
  echo "package: $arch debs done after $((SECONDS - start)) s"
done

bash "$repo/deploy/image/build.sh" "$out/debs" "$out/oci" | tee "$stage/image.log"

echo "package: built in $((SECONDS - start)) s into $out:"
for f in "$out"/debs/*.deb; do
  printf '  %-48s %6s KiB\n' "debs/$(basename "$f")" "$(( $(stat -c %s "$f") / 1024 ))"
done
sed -n 's/^image: \(tracehealth-\)/  oci\/\1/p' "$stage/image.log"
