#!/usr/bin/env bash
# Builds tracehealth's Debian packages and container images from this
# checkout, offline from Debian's packages:
#
#   deploy/package.sh [OUT]        (OUT defaults to deploy/out)
#
#   OUT/debs/  tracehealth-agent, tracehealth-server, tracehealth-tools
#              _VERSION_amd64.deb (+ -dbgsym packages with the debug info),
#              made by dpkg-buildpackage from deploy/debian/ and checked by
#              lintian (any error fails the build)
#   OUT/oci/tracehealth-agent, OUT/oci/tracehealth-server
#              OCI image layouts tagged VERSION (deploy/image/build.sh)
#
# VERSION is the one of deploy/debian/changelog. The binaries are those of the
# normal `bazel build` (the .bazelrc compiles with -O2 -g1), linked again with
# --strip=never (Bazel's default strips the debug info at link time; nothing
# is compiled again) so that dh_strip can strip them and keep their debug info
# in the -dbgsym packages. Needs dpkg-dev, debhelper, lintian, umoci and jq
# (deploy/setup.sh installs them), and apt's package lists; no root.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=$(realpath -m "${1:-deploy/out}")
version=$(dpkg-parsechangelog -l deploy/debian/changelog -S Version)
start=$SECONDS

echo "package: building the binaries"
targets=(//:agent //:server //:tracehealthctl //:loadgen)
bazel build --strip=never "${targets[@]}" 2>&1 | tail -n 1
execroot=$(bazel info execution_root 2>/dev/null)
# Where the root aliases' binaries are, wherever their packages live.
mapfile -t binaries < <(bazel cquery --strip=never "set(${targets[*]})" --output=starlark \
  --starlark:expr='"\n".join([f.path for f in target.files.to_list()])' 2>/dev/null)

stage=$(mktemp -d -t tracehealth-pkg.XXXXXX)
trap 'rm -rf "$stage"' EXIT
src="$stage/tracehealth-$version"
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

echo "package: dpkg-buildpackage $version"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$stage/build.log" 2>&1 ||
  { tail -n 40 "$stage/build.log" >&2; echo "package: dpkg-buildpackage failed" >&2; exit 1; }

echo "package: lintian"
changes="$stage/tracehealth_${version}_amd64.changes"
lintian_rc=0
TMPDIR="$stage" lintian --fail-on error --display-info --tag-display-limit 0 "$changes" \
  >"$stage/lintian.log" 2>&1 ||
  lintian_rc=$?
grep -v '^running with root privileges' "$stage/lintian.log" || true
if ((lintian_rc)); then
  echo "package: lintian reported errors (status $lintian_rc)" >&2
  exit 1
fi

rm -rf "$out/debs"
mkdir -p "$out/debs"
cp "$stage"/*.deb "$changes" "$stage"/*.buildinfo "$out/debs/"
echo "package: debs done after $((SECONDS - start)) s"

bash "$repo/deploy/image/build.sh" "$out/debs" "$out/oci" | tee "$stage/image.log"

echo "package: built in $((SECONDS - start)) s into $out:"
for f in "$out"/debs/*.deb; do
  printf '  %-48s %6s KiB\n' "debs/$(basename "$f")" "$(( $(stat -c %s "$f") / 1024 ))"
done
sed -n 's/^image: \(tracehealth-\)/  oci\/\1/p' "$stage/image.log"
