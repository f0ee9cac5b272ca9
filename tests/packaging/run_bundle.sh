#!/usr/bin/env bash
# Runs ARGV in an unpacked OCI bundle (`umoci unpack`) the way a container
# runtime runs a Kubernetes container, as PID 1 of new PID and mount
# namespaces (everything mounted here goes away with them):
#
#   unshare --mount --pid --fork --propagation=private \
#     tests/packaging/run_bundle.sh BUNDLE SPEC ARGV...
#
# SPEC is what k8s_pod.py printed (or an empty file for the image alone):
# the user (else the image's), extra environment (after the image's), the
# volume mounts, readOnlyRootFilesystem and the capabilities kept. /proc is
# the new namespace's, /dev a tmpfs with null, zero, full, random, urandom.
# The command runs with no new privileges and a capability bounding set of
# SPEC's capabilities plus what chroot needs to enter the root (SYS_CHROOT,
# and SETUID/SETGID to become a non-root user, which then drops them all).
set -euo pipefail
bundle=$1 spec=$2
shift 2
rootfs="$bundle/rootfs"
if [[ $$ -ne 1 ]]; then
  echo "run_bundle: must be PID 1 of a new namespace (unshare --mount --pid --fork)" >&2
  exit 2
fi

uid=$(jq -r .process.user.uid "$bundle/config.json")
gid=$(jq -r .process.user.gid "$bundle/config.json")
mapfile -t env < <(jq -r '.process.env[]' "$bundle/config.json")
readonly=0 caps="" mounts=()
while read -r key rest; do
  case $key in
    user)
      read -r u g <<<"$rest"
      [[ $u == - ]] || uid=$u
      [[ $g == - ]] || gid=$g
      ;;
    readonly) readonly=$rest ;;
    caps) [[ $rest == - ]] || caps=$rest ;;
    mount) mounts+=("$rest") ;;
    env) env+=("$rest") ;;
    image | arg) ;;
    *) echo "run_bundle: unknown spec line: $key $rest" >&2; exit 2 ;;
  esac
done <"$spec"

mount --bind "$rootfs" "$rootfs"
mount -t proc -o nosuid,nodev,noexec proc "$rootfs/proc"
mount -t tmpfs -o mode=0755,nosuid dev "$rootfs/dev"
for d in null zero full random urandom; do
  touch "$rootfs/dev/$d"
  mount --bind "/dev/$d" "$rootfs/dev/$d"
done
for m in "${mounts[@]}"; do
  read -r src dst mode <<<"$m"
  mkdir -p "$rootfs$dst"  # the runtime makes missing mount points
  mount --bind "$src" "$rootfs$dst"
  if [[ $mode == ro ]]; then mount -o remount,bind,ro "$rootfs$dst"; fi
done
if [[ $readonly == 1 ]]; then mount -o remount,bind,ro "$rootfs"; fi

bounding="-all,+sys_chroot"
for c in ${caps//,/ }; do bounding+=",+${c,,}"; done
userspec=()
if [[ $uid != 0 ]]; then
  bounding+=",+setuid,+setgid"
  userspec=(--userspec="$uid:$gid" --groups="$gid")
fi
exec env -i "${env[@]}" /usr/bin/setpriv --no-new-privs --inh-caps=-all \
  --bounding-set="$bounding" -- /usr/sbin/chroot "${userspec[@]}" "$rootfs" "$@"
