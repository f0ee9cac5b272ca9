#!/usr/bin/env bash
# Builds the lab guest's initramfs (newc cpio, gzip):
#   make_initramfs.sh [--arch arm64] OUT.cpio.gz KERNEL_CONFIG BIN...
# busybox (static) with its applets, tests/lab/guest/init.sh as /init,
# lab_threads and lab_attach (static, built here from tests/lab/guest/), the
# kernel's config where its package puts it (KERNEL_CONFIG .../boot/config-R
# as /boot/config-R, .../usr/lib/modules/R/config as /usr/lib/modules/R/config,
# .../lib/modules/R/config as /lib/modules/R/config: the agent must find it
# there, /proc/config.gz being absent), and each BIN in /bin with the shared
# libraries ldd lists for it at their own paths.
# With --arch arm64: Debian's arm64 busybox-static (fetch_guest_arm64.sh),
# the helpers built with aarch64-linux-gnu-gcc, and each BIN's libraries
# (its NEEDED entries, transitively, and its interpreter) taken from the
# arm64 sysroot (deploy/arm64/sysroot.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arch=amd64
if [[ ${1:-} == --arch ]]; then arch=$2; shift 2; fi
out=$1 config=$2
shift 2
case $arch in
  amd64) cc=gcc busybox=/bin/busybox ;;
  arm64)
    cc=aarch64-linux-gnu-gcc
    busybox=$(bash "$here/fetch_guest_arm64.sh" | sed -n 's/^busybox=//p')
    [[ -n $busybox ]] || { echo "make_initramfs: no arm64 busybox" >&2; exit 1; }
    sysroot=$(bash "$here/../../deploy/arm64/sysroot.sh" --path)
    ;;
  *) echo "make_initramfs: --arch $arch: amd64 or arm64" >&2; exit 2 ;;
esac

stage=$(mktemp -d -t tracehealth-lab-initramfs.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,boot,lib64,usr/bin,usr/sbin}

# busybox-static's busybox needs no libraries.
if [[ $arch == amd64 ]] && ldd /bin/busybox >/dev/null 2>&1; then
  echo "make_initramfs: /bin/busybox is not static (install busybox-static)" >&2
  exit 1
fi
cp "$busybox" "$stage/bin/busybox"
$cc -O2 -static -pthread -o "$stage/bin/lab_threads" "$here/guest/lab_threads.c"
$cc -O2 -static -o "$stage/bin/lab_attach" "$here/guest/lab_attach.c"
$cc -O2 -static -o "$stage/bin/lab_chase" "$here/guest/lab_chase.c"
install -m 0755 "$here/guest/init.sh" "$stage/init"
install -m 0644 "$here/guest/lab_scenarios.sh" "$stage/bin/lab_scenarios.sh"
case $config in
  */boot/config-*) dest=/boot/$(basename "$config") ;;
  */usr/lib/modules/*/config) dest=/usr/lib/modules/$(basename "$(dirname "$config")")/config ;;
  */lib/modules/*/config) dest=/lib/modules/$(basename "$(dirname "$config")")/config ;;
  *) echo "make_initramfs: $config: not boot/config-R or [usr/]lib/modules/R/config" >&2; exit 1 ;;
esac
mkdir -p "$stage$(dirname "$dest")"
cp "$config" "$stage$dest"
echo "lab" > "$stage/etc/hostname"
# A fixed machine id: the agent derives the host id from it.
echo "7ab1ab1ab1ab1ab1ab1ab1ab1ab1ab10" > "$stage/etc/machine-id"

copy_with_libs() {
  local bin=$1
  cp -L "$bin" "$stage/bin/$(basename "$bin")"
  ldd "$bin" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
    mkdir -p "$stage$(dirname "$lib")"
    cp -Ln "$lib" "$stage$lib"
  done
}

# arm64: ldd cannot run the binary; its NEEDED libraries are looked up in the
# sysroot's library directories, transitively, and copied to the same paths.
copy_with_sysroot_libs() {
  local bin=$1 lib dir found interp
  local -a todo=("$bin")
  local -A seen=()
  cp -L "$bin" "$stage/bin/$(basename "$bin")"
  interp=$(aarch64-linux-gnu-readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  mkdir -p "$stage$(dirname "$interp")"
  cp -Ln "$sysroot$interp" "$stage$interp"
  while [[ ${#todo[@]} -gt 0 ]]; do
    for lib in $(aarch64-linux-gnu-readelf -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [[ -z ${seen[$lib]:-} ]] || continue
      seen[$lib]=1
      found=""
      for dir in /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /lib /usr/lib; do
        [[ -e $sysroot$dir/$lib ]] && { found=$dir/$lib; break; }
      done
      [[ -n $found ]] || { echo "make_initramfs: $lib (needed by ${todo[0]}) not in $sysroot" >&2; exit 1; }
      mkdir -p "$stage$(dirname "$found")"
      cp -Ln "$sysroot$found" "$stage$found"
      todo+=("$sysroot$found")
    done
    todo=("${todo[@]:1}")
  done
}
for b in "$@"; do
  if [[ $arch == arm64 ]]; then copy_with_sysroot_libs "$b"; else copy_with_libs "$b"; fi
done

(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out"
