#!/usr/bin/env bash
# Installs the Debian 12 packages tracehealth needs.
#
#   deploy/setup.sh          what building and running need: the compiler,
#                            Bazel and the libraries the binaries link, and
#                            what deploy/quickstart.sh uses
#   deploy/setup.sh --test   that, plus the test suite's packages (deploy/test.sh
#                            runs it): test libraries, Prometheus, PostgreSQL
#                            and Patroni, a browser, qemu, packaging tools...
#   --list (after either)    prints the packages, one a line, and installs none
#
# Idempotent: packages already present are not reinstalled, and apt-get update
# runs only when something is missing. Needs root (or sudo).
set -euo pipefail

with_tests=0
list_only=0
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=1 ;;
    --list) list_only=1 ;;
    *) echo "usage: $0 [--test] [--list]" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  # Build
  bazel-bootstrap clang pkg-config
  protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
  libabsl-dev prometheus-cpp-dev libsqlite3-dev libyaml-cpp-dev zlib1g-dev libssl-dev
  libcurl4-openssl-dev libtcmalloc-minimal4 libmicrohttpd-dev libjs-chart.js
  libpq-dev
  # deploy/quickstart.sh
  curl procps
)

TEST_PACKAGES=(
  # Tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  libclang-rt-14-dev clang-format
  # ThreadSanitizer's build (tests/reliability/run_tsan.sh) is gcc's
  g++
  prometheus prometheus-alertmanager
  openssl python3 python3-grpcio python3-yaml sqlite3
  # PostgreSQL store and the replica/failover tests (tests/replicas/)
  postgresql-15 patroni etcd-server etcd-client haproxy
  # The fleet page in a real browser (tests/web/)
  chromium chromium-driver python3-selenium
  # The kernel lab (tests/lab/): qemu boots Debian's cloud kernels (fetched with
  # apt-get download, never installed) with a busybox initramfs; the arm64
  # kernels of the matrix under qemu-system-aarch64
  qemu-system-x86 qemu-system-arm busybox-static cpio
  # The aarch64 cross build (bazel build --config=arm64, deploy/arm64/) and its
  # test under qemu-aarch64 user emulation (tests/arm64/): Debian's arm64
  # libraries are fetched into a sysroot by deploy/arm64/sysroot.sh, never
  # installed
  g++-aarch64-linux-gnu qemu-user-static
  # Debian packages and container images (deploy/package.sh, tests/packaging/)
  dpkg-dev debhelper lintian umoci skopeo docker-registry jq systemd
  # Kubernetes manifests (tests/deploy/k8s_render_test.sh: npm validates them
  # against the Kubernetes and prometheus-operator schemas), the monitoring
  # mixin (deploy/mixin/), node_exporter's textfile collector and
  # node-problem-detector's plugin (tests/deploy/)
  jsonnet prometheus-node-exporter
)

if ((with_tests)); then
  PACKAGES+=("${TEST_PACKAGES[@]}")
  # kustomize is not packaged in Debian 12; kubectl's built-in
  # `kubectl kustomize` renders deploy/k8s/. Debian's kubectl comes in
  # kubernetes-client; a kubectl from elsewhere is used as it is.
  if ! command -v kubectl >/dev/null 2>&1 && ! command -v kustomize >/dev/null 2>&1; then
    PACKAGES+=(kubernetes-client)
  fi
  # npm (with Debian's nodejs), unless a Node.js with its own npm is there.
  if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi
fi

if ((list_only)); then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

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
