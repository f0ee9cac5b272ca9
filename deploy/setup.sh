#!/usr/bin/env bash
# Installs every Debian 12 package tracehealth needs to build, test and run.
# Idempotent: packages already present are not reinstalled, and apt-get update
# runs only when something is missing. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  # Build
  bazel-bootstrap g++ pkg-config
  protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
  libabsl-dev prometheus-cpp-dev libsqlite3-dev libyaml-cpp-dev zlib1g-dev libssl-dev
  libcurl4-openssl-dev libtcmalloc-minimal4 libmicrohttpd-dev libjs-chart.js
  # Tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format
  prometheus prometheus-alertmanager
  openssl python3 python3-grpcio python3-yaml sqlite3 procps curl
  # PostgreSQL store and the replica/failover tests (tests/replicas/)
  libpq-dev postgresql-15 patroni etcd-server etcd-client haproxy
  # The fleet page in a real browser (tests/web/)
  chromium chromium-driver python3-selenium
  # The kernel lab (tests/lab/): qemu boots Debian's cloud kernel (fetched with
  # apt-get download, never installed) with a busybox initramfs
  qemu-system-x86 busybox-static cpio
  # Debian packages and container images (deploy/package.sh, tests/packaging/)
  dpkg-dev debhelper lintian umoci skopeo docker-registry jq systemd
)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

stop_packaged_services() {
  # Debian's packages may start services on install; the project's tests start
  # their own instances on loopback, so stop the packaged ones if they run.
  for svc in prometheus prometheus-alertmanager prometheus-node-exporter docker-registry \
      postgresql etcd haproxy patroni; do
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
      $SUDO systemctl stop "$svc" || true
    fi
    if command -v systemctl >/dev/null 2>&1; then
      $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
  done
  # postgresql-common creates and starts a "main" cluster (port 5432) on
  # install, also where systemd does not run: stop it and keep it from
  # starting with the machine. Tests use clusters of their own.
  if command -v pg_lsclusters >/dev/null 2>&1; then
    while read -r ver name _; do
      $SUDO pg_ctlcluster "$ver" "$name" stop >/dev/null 2>&1 || true
      if [[ -f "/etc/postgresql/$ver/$name/start.conf" ]]; then
        echo manual | $SUDO tee "/etc/postgresql/$ver/$name/start.conf" >/dev/null
      fi
    done < <(pg_lsclusters -h 2>/dev/null)
  fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  stop_packaged_services
  exit 0
fi

echo "setup: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
stop_packaged_services
echo "setup: done"
