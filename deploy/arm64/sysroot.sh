#!/usr/bin/env bash
# Builds the arm64 sysroot the cross build (bazel build --config=arm64) links
# against and qemu-aarch64 runs the binaries with: Debian 12's arm64 -dev and
# runtime packages of every library the binaries link, fetched with a private
# apt configuration (its own sources, lists and cache: the machine's dpkg
# architectures and /etc/apt are left alone; no arm64 package is installed)
# and unpacked with dpkg-deb -x.
#
#   deploy/arm64/sysroot.sh               builds or updates the sysroot, prints its path
#   deploy/arm64/sysroot.sh --path        prints the path only
#   deploy/arm64/sysroot.sh --apt-config  prints the path of the private apt
#                                         configuration (`apt-get -c FILE ...`
#                                         asks the arm64 lists; written by a run
#                                         without arguments)
#
# Where: $TRACEHEALTH_ARM64_SYSROOT, default ~/.cache/tracehealth-arm64/sysroot;
# the downloaded .debs and apt lists stay in ~/.cache/tracehealth-arm64/ between
# runs. The mirror is the one the machine's apt sources use. SYSROOT/.tracehealth-debs
# lists the .debs (absolute paths) the sysroot is unpacked from: deploy/package.sh
# --arch=arm64 reads their shlibs and symbols files (the packages' Depends),
# deploy/image/build.sh which of them ships each library.
#
# Idempotent: with every .deb already unpacked (the stamp lists them) it does
# nothing and needs no network. Exit codes: 0 ready, 1 error, 3 the packages
# cannot be had (offline, mirror unreachable): callers treat 3 as a skip, the
# reason on stderr in a line starting "arm64 sysroot: unavailable:".
set -euo pipefail

CACHE=${TRACEHEALTH_ARM64_CACHE:-$HOME/.cache/tracehealth-arm64}
SYSROOT=${TRACEHEALTH_ARM64_SYSROOT:-$CACHE/sysroot}

APT_DIR=$CACHE/apt
if [[ ${1:-} == --path ]]; then echo "$SYSROOT"; exit 0; fi
if [[ ${1:-} == --apt-config ]]; then echo "$APT_DIR/apt.conf"; exit 0; fi
[[ $# -eq 0 ]] || { echo "usage: $0 [--path|--apt-config]" >&2; exit 2; }

# The libraries third_party/BUILD.bazel links (their -dev packages) and the C
# and C++ runtime. Their dependencies are resolved below.
ROOTS=(
  libc6-dev libstdc++-12-dev libgcc-12-dev
  libprotobuf-dev libgrpc++-dev libgrpc-dev libabsl-dev libre2-dev libc-ares-dev
  libssl-dev zlib1g-dev libyaml-cpp-dev prometheus-cpp-dev libsqlite3-dev
  libcurl4-openssl-dev libtcmalloc-minimal4 libmicrohttpd-dev libpq-dev
)

unavailable() {
  echo "arm64 sysroot: unavailable: $*" >&2
  exit 3
}

DEB_DIR=$CACHE/debs
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$DEB_DIR"
touch "$APT_DIR/status"

# The machine's Debian sources, as one-line entries limited to arm64.
sources=$APT_DIR/sources.list
{
  shopt -s nullglob
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    sed -nE 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?/deb [arch=arm64] /p' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    awk '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && uris != "" && enabled != "no")
          for (i = 1; i <= nu; i++)
            for (j = 1; j <= ns; j++)
              print "deb [arch=arm64" (key != "" ? " signed-by=" key : "") "] " u[i] " " s[j] " " comps
        types = uris = comps = key = ""; enabled = ""; nu = ns = 0
      }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      {
        field = tolower($1); sub(/:$/, "", field); $1 = ""; sub(/^ +/, "")
        if (field == "types") types = $0
        else if (field == "uris") { uris = $0; nu = split($0, u, " ") }
        else if (field == "suites") ns = split($0, s, " ")
        else if (field == "components") comps = $0
        else if (field == "signed-by") key = $0
        else if (field == "enabled") enabled = tolower($0)
      }
      END { flush() }' "$f"
  done
} | grep -E 'debian' > "$sources.new" || true
[[ -s $sources.new ]] || { rm -f "$sources.new"; echo "arm64 sysroot: no Debian source in /etc/apt" >&2; exit 1; }
mv "$sources.new" "$sources"

# The private configuration as a file (apt-get -c reads it after the
# machine's), so that deploy/image/build.sh asks the same lists.
cat >"$APT_DIR/apt.conf.new" <<CONF
Dir::Etc::SourceList "$sources";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$APT_DIR/lists";
Dir::Cache "$APT_DIR/cache";
Dir::State::status "$APT_DIR/status";
APT::Architecture "arm64";
#clear APT::Architectures;
APT::Architectures { "arm64"; };
Debug::NoLocking "1";
Acquire::Retries "2";
Acquire::http::Timeout "20";
CONF
mv "$APT_DIR/apt.conf.new" "$APT_DIR/apt.conf"
APT_OPTS=(-c "$APT_DIR/apt.conf")

stamp=$SYSROOT/.tracehealth-sysroot
# The package list, resolved once per day at most (or when the roots change).
want=$CACHE/packages
roots_sig=$(printf '%s\n' "${ROOTS[@]}" | sha256sum | cut -c1-16)
fresh=0
if [[ -s $want && -f $want.roots && $(cat "$want.roots") == "$roots_sig" &&
      -n $(find "$want" -mmin -1440 2>/dev/null) ]]; then
  fresh=1
fi
if ((fresh == 0)); then
  if ! apt-get "${APT_OPTS[@]}" -q update >"$APT_DIR/update.log" 2>&1 ||
     grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$APT_DIR/update.log"; then
    # Offline: a sysroot built before is still good.
    if [[ -f $stamp ]]; then
      echo "arm64 sysroot: apt update failed (see $APT_DIR/update.log); using the existing sysroot" >&2
      echo "$SYSROOT"; exit 0
    fi
    unavailable "apt-get update of the arm64 lists failed: $(grep -E '^(W|E):' "$APT_DIR/update.log" | head -n 1)"
  fi
  # Depends and Pre-Depends, recursively; virtual packages (<...>) dropped,
  # arm64 only.
  apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances "${ROOTS[@]}" 2>/dev/null |
    grep -vE '^ |^<' | sed 's/:arm64$//' | grep -v ':' | sort -u > "$want.new"
  [[ -s $want.new ]] || unavailable "apt-cache depends resolved nothing"
  mv "$want.new" "$want"
  echo "$roots_sig" > "$want.roots"
fi

# Download what is missing (apt-get download skips nothing by itself: ask only
# for packages without a .deb of the candidate version in the cache).
cd "$DEB_DIR"
missing=()
# One apt-cache call for all ("pkg:" then "  Candidate: VERSION" per package).
mapfile -t pkgs < "$want"
while read -r pkg ver; do
  [[ -n $ver && $ver != "(none)" ]] || continue
  fver=${ver//:/%3a}
  [[ -f ${pkg}_${fver}_arm64.deb || -f ${pkg}_${fver}_all.deb ]] || missing+=("$pkg")
done < <(apt-cache "${APT_OPTS[@]}" policy "${pkgs[@]}" 2>/dev/null |
  awk '/^[^ ]/ { sub(/:(arm64)?:?$/, "", $1); sub(/:$/, "", $1); pkg = $1 }
       /^  Candidate:/ { print pkg, $2 }')
if ((${#missing[@]})); then
  echo "arm64 sysroot: downloading ${#missing[@]} packages" >&2
  apt-get "${APT_OPTS[@]}" -q download "${missing[@]}" >"$APT_DIR/download.log" 2>&1 ||
    unavailable "apt-get download failed: $(grep -E '^(W|E):' "$APT_DIR/download.log" | head -n 1)"
fi

# The .debs of the current list (newest version of each).
debs=()
while read -r pkg; do
  f=$(ls -1 "${pkg}"_*_arm64.deb "${pkg}"_*_all.deb 2>/dev/null | sort -V | tail -n 1 || true)
  [[ -n $f ]] && debs+=("$DEB_DIR/$f")
done < "$want"
((${#debs[@]})) || unavailable "no arm64 package downloaded"

sig=$(printf '%s\n' "${debs[@]}" | sha256sum | cut -c1-16)
if [[ -f $stamp && $(cat "$stamp") == "$sig" ]]; then
  # (A sysroot unpacked before the list was kept gets it here.)
  printf '%s\n' "${debs[@]}" | cmp -s - "$SYSROOT/.tracehealth-debs" ||
    printf '%s\n' "${debs[@]}" >"$SYSROOT/.tracehealth-debs"
  echo "$SYSROOT"; exit 0
fi

# Unpack into a fresh tree, then swap it in.
tmp=$SYSROOT.new
rm -rf "$tmp"
mkdir -p "$tmp"
for d in "${debs[@]}"; do dpkg-deb -x "$d" "$tmp"; done

# Absolute symlinks (libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1) would
# point into this machine's root: make them relative to their place in the
# sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  [[ $target == /* ]] || continue
  rel=$(realpath -m --relative-to="$(dirname "$link")" "$tmp$target")
  ln -sfn "$rel" "$link"
done < <(find "$tmp" -type l -print0)

printf '%s\n' "${debs[@]}" > "$tmp/.tracehealth-debs"
echo "$sig" > "$tmp/.tracehealth-sysroot"
rm -rf "$SYSROOT.old"
[[ -d $SYSROOT ]] && mv "$SYSROOT" "$SYSROOT.old"
mv "$tmp" "$SYSROOT"
rm -rf "$SYSROOT.old"
echo "arm64 sysroot: ${#debs[@]} packages unpacked" >&2
echo "$SYSROOT"
