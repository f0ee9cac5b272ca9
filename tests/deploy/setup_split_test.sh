#!/usr/bin/env bash
# deploy/setup.sh installs what building and running need and nothing of the
# test suite's; `--test` adds the rest. Checked against this machine's
# package database:
#   - every library the binaries link (third_party/BUILD.bazel's -l flags,
#     the test libraries aside) is in a package that the build list or its
#     dependencies install;
#   - none of the test suite's packages is in the build list;
#   - the --test list holds the whole build list.
# Prints PASS/FAIL per check; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
fail=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fail=1; }

mapfile -t base < <(bash deploy/setup.sh --list)
mapfile -t full < <(bash deploy/setup.sh --test --list)
((${#base[@]} > 0)) || { echo "FAIL setup.sh --list printed nothing"; exit 1; }

declare -A in_base in_full
for p in "${base[@]}"; do in_base[$p]=1; done
for p in "${full[@]}"; do in_full[$p]=1; done

for p in "${base[@]}"; do
  [[ -n ${in_full[$p]:-} ]] || bad "--test list lacks build package $p"
done

# The packages the issue names as the test suite's: never in the build list,
# always in the test list.
for p in chromium chromium-driver postgresql-15 patroni etcd-server haproxy \
    qemu-system-x86 qemu-system-arm lintian umoci skopeo docker-registry prometheus \
    prometheus-alertmanager libclang-rt-14-dev libgtest-dev libbenchmark-dev jsonnet \
    prometheus-node-exporter; do
  [[ -z ${in_base[$p]:-} ]] || bad "test package $p is in the build list"
  [[ -n ${in_full[$p]:-} ]] || bad "test package $p is missing from --test"
done

# Every package the build list brings in, dependencies included.
closure=$(apt-cache depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances "${base[@]}" 2>/dev/null |
  grep -v '^ ' | sed 's/:any$//' | sort -u)
[[ -n $closure ]] || { echo "FAIL apt-cache depends printed nothing"; exit 1; }

# Libraries from the toolchain itself (libc, libgcc) and the test libraries.
skip=" rt atomic pthread dl gtest gmock gtest_main benchmark "
libs=$(grep -oE '"-l(:)?[A-Za-z0-9_+.-]+"' third_party/BUILD.bazel | tr -d '"' |
  sed -E 's/^-l:?//' | sort -u)
files=()
for lib in $libs; do
  [[ $skip == *" $lib "* ]] && continue
  if [[ $lib == lib*.so* ]]; then files+=("$lib"); else files+=("lib$lib.so"); fi
done
# One dpkg -S for all: "package: /path/file" per line.
owners=$(dpkg -S "${files[@]/#/*/}" 2>/dev/null)
checked=0
for file in "${files[@]}"; do
  owner=$(grep -E "/$file\$" <<<"$owners" | head -n 1 | cut -d: -f1)
  if [[ -z $owner ]]; then bad "no installed package holds $file"; continue; fi
  if grep -qx "$owner" <<<"$closure"; then
    checked=$((checked + 1))
  else
    bad "$file comes from $owner, which the build list does not install"
  fi
done
((checked >= 20)) || bad "only $checked libraries checked (want every -l of third_party/BUILD.bazel)"
[[ $fail -eq 0 ]] && pass "build list: ${#base[@]} packages cover $checked linked libraries; --test adds $((${#full[@]} - ${#base[@]}))"
exit $fail
