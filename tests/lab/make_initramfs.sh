#!/usr/bin/env bash
# Builds the lab guest's initramfs (newc cpio, gzip):
#   make_initramfs.sh OUT.cpio.gz KERNEL_CONFIG BIN...
# busybox (static) with its applets, tests/lab/guest/init.sh as /init,
# lab_threads and lab_attach (static, built here from tests/lab/guest/), the
# kernel's config where its package puts it (KERNEL_CONFIG .../boot/config-R
# as /boot/config-R, .../usr/lib/modules/R/config as /usr/lib/modules/R/config,
# .../lib/modules/R/config as /lib/modules/R/config: the agent must find it
# there, /proc/config.gz being absent), and each BIN in /bin with the shared
# libraries ldd lists for it at their own paths.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 config=$2
shift 2

stage=$(mktemp -d -t tracehealth-lab-initramfs.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,boot,lib64,usr/bin,usr/sbin}

# busybox-static's /bin/busybox needs no libraries.
if ldd /bin/busybox >/dev/null 2>&1; then
  echo "make_initramfs: /bin/busybox is not static (install busybox-static)" >&2
  exit 1
fi
cp /bin/busybox "$stage/bin/busybox"
gcc -O2 -static -pthread -o "$stage/bin/lab_threads" "$here/guest/lab_threads.c"
gcc -O2 -static -o "$stage/bin/lab_attach" "$here/guest/lab_attach.c"
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
for b in "$@"; do copy_with_libs "$b"; done

(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out"
