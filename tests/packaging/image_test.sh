#!/usr/bin/env bash
# Runs tracehealth's container images as deploy/k8s/ runs them, on this
# machine without a cluster:
#
#   tests/packaging/image_test.sh OUT      (OUT of deploy/package.sh)
#
# 1. pushes both OCI layouts' tag VERSION, the image index of every
#    architecture built, to a local registry (docker-registry on 127.0.0.1)
#    with docs/operations.md's `skopeo copy --all` and pulls them back: the
#    registry must serve the layout's index digest, and a pull without
#    --all this machine's platform, the layout's VERSION-amd64 manifest
#    (tests/packaging/arm64_test.sh checks the arm64 ones);
# 2. unpacks the pulled images (umoci unpack) and runs each entrypoint in its
#    root (run_bundle.sh: new mount and PID namespaces, chroot) with the
#    user, capabilities, read-only root, volume mounts, environment and args
#    of its Deployment/DaemonSet (k8s_pod.py): the server on a temporary data
#    volume (gRPC and metrics on 127.0.0.1 port 0), the agent against the
#    fixture host preempt-none-6.16-240k mounted at /host/proc and /host/sys;
# 3. the agent's one report must be stored: tracehealthctl (from the
#    tracehealth-tools .deb) reads it back from the server; /metrics answers;
#    the server stops on SIGTERM as PID 1, with its database on the volume
#    owned by its user;
# 4. the agent image's own command (--root=/host) with --once prints the
#    fixture's predictions.
# Needs root (mounts, chroot). Prints PASS/FAIL per check; exits non-zero on
# any failure. Removes everything it made.
set -uo pipefail
test_name=image_test
. "$(dirname "$0")/common.sh" "$@"

tmp=$(mktemp -d -t tracehealth-image-test.XXXXXX)
chmod 0755 "$tmp"
registry_pid="" server_pid=""
cleanup() {
  local pid
  for pid in $server_pid $registry_pid; do
    # The server is PID 1 of the namespace unshare made: killing unshare would
    # leave it running. Kill it instead; unshare reaps it and exits.
    if pgrep -P "$pid" >/dev/null; then
      pkill -KILL -P "$pid" 2>/dev/null || true
    else
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# tagged NAME TAG: the digest OUT/oci/NAME's index.json tags TAG.
tagged() {
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t)
    | .digest' "$out/oci/$1/index.json"
}
# image_config NAME JQ: a field of the amd64 image config in OUT/oci/NAME.
image_config() {
  local layout="$out/oci/$1" manifest config
  manifest=$(tagged "$1" "$version-amd64")
  config=$(jq -r .config.digest "$layout/blobs/sha256/${manifest#sha256:}")
  jq -r "$2" "$layout/blobs/sha256/${config#sha256:}"
}
wait_for_file() {  # wait_for_file FILE PID SECONDS
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [[ -s $1 ]] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# --- 1. registry round trip ---------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$tmp/registry"
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $tmp/registry
http:
  addr: 127.0.0.1:$port
EOF
docker-registry serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break
  sleep 0.1
done
registry="127.0.0.1:$port"
for name in agent server; do
  layout="$out/oci/tracehealth-$name"
  want=$(tagged "tracehealth-$name" "$version")
  if ! msg=$(skopeo copy --all --quiet --dest-tls-verify=false "oci:$layout:$version" \
               "docker://$registry/tracehealth/$name:$version" 2>&1); then
    flunk "skopeo copy --all oci:$layout:$version docker://$registry/tracehealth/$name:$version" "$msg"
    continue
  fi
  got=sha256:$(skopeo inspect --raw --tls-verify=false "docker://$registry/tracehealth/$name:$version" |
                 sha256sum | cut -d' ' -f1)
  if [[ $got == "$want" ]]; then
    pass "registry serves tracehealth/$name:$version with the layout's index digest $want"
  else
    flunk "registry digest of tracehealth/$name:$version" "want $want, got $got"
  fi
  want=$(tagged "tracehealth-$name" "$version-amd64")
  if msg=$(skopeo copy --quiet --src-tls-verify=false "docker://$registry/tracehealth/$name:$version" \
             "oci:$tmp/pulled-$name:$version" 2>&1) &&
     got=$(jq -r '.manifests[0].digest' "$tmp/pulled-$name/index.json") && [[ $got == "$want" ]] &&
     msg=$(umoci unpack --image "$tmp/pulled-$name:$version" "$tmp/bundle-$name" 2>&1); then
    pass "pulled tracehealth/$name:$version as linux/amd64 ($version-amd64, $want) and unpacked it"
  else
    flunk "pull tracehealth/$name:$version as $version-amd64 ($want) and unpack it" "${msg:-got $got}"
  fi
done
kill "$registry_pid" 2>/dev/null; wait "$registry_pid" 2>/dev/null; registry_pid=""
[[ -d $tmp/bundle-server/rootfs && -d $tmp/bundle-agent/rootfs ]] || finish

# The manifests name the images by the tag the build produces.
for name in agent server; do
  manifest=$repo/deploy/k8s/base/$([[ $name == agent ]] && echo agent-daemonset || echo server).yaml
  image=$(python3 -c 'import sys, yaml
print(*[c["image"] for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] in ("DaemonSet", "Deployment")
        for c in d["spec"]["template"]["spec"]["containers"]])' "$manifest")
  if [[ $image == "tracehealth/$name:$version" ]]; then
    pass "$(basename "$manifest") runs tracehealth/$name:$version"
  else
    flunk "$(basename "$manifest") image" "want tracehealth/$name:$version, got $image"
  fi
done

# --- 2. server ----------------------------------------------------------------
mkdir -p "$tmp/server-data"
chown 65532:65532 "$tmp/server-data"   # fsGroup 65532 in deploy/k8s/base/server.yaml
chmod 0750 "$tmp/server-data"
if ! python3 "$here/k8s_pod.py" "$repo/deploy/k8s/base/server.yaml" Deployment \
       --volume data="$tmp/server-data" --workdir "$tmp" >"$tmp/server.spec" 2>"$tmp/spec.err"; then
  flunk "server.yaml's Deployment as a run spec" "$(cat "$tmp/spec.err")"
  finish
fi
image_user=$(image_config tracehealth-server .config.User)
pod_user=$(awk '$1 == "user" { print $2 ":" $3 }' "$tmp/server.spec")
if [[ $image_user == "$pod_user" && $image_user == 65532:65532 ]]; then
  pass "server image user $image_user is the Deployment's runAsUser:runAsGroup"
else
  flunk "server image user" "image $image_user, Deployment $pod_user, want 65532:65532"
fi
mapfile -t entrypoint < <(image_config tracehealth-server '.config.Entrypoint[]')
mapfile -t args < <(sed -n 's/^arg //p' "$tmp/server.spec")
unshare --mount --pid --fork --propagation=private \
  bash "$here/run_bundle.sh" "$tmp/bundle-server" "$tmp/server.spec" \
  "${entrypoint[@]}" "${args[@]}" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
  --port_file=/var/lib/tracehealth-server/ports >"$tmp/server.log" 2>&1 &
server_pid=$!
if wait_for_file "$tmp/server-data/ports" "$server_pid" 30; then
  grpc=$(sed -n 's/^grpc=//p' "$tmp/server-data/ports")
  metrics=$(sed -n 's/^metrics=//p' "$tmp/server-data/ports")
  pass "server image serves gRPC on $grpc and metrics on $metrics (args of server.yaml)"
else
  flunk "server image started" "$(tail -n 20 "$tmp/server.log")"
  finish
fi
server_uid=$(stat -c %u "/proc/$(pgrep -P "$server_pid")" 2>/dev/null || echo none)
if [[ $server_uid == 65532 ]]; then
  pass "server runs as uid 65532"
else
  flunk "server uid" "want 65532, got $server_uid"
fi

# --- 3. agent (the DaemonSet) reports to it -------------------------------------
mkdir -p "$tmp/agent-state" "$tmp/boot"
chmod 0700 "$tmp/agent-state"
if ! python3 "$here/k8s_pod.py" "$repo/deploy/k8s/base/agent-daemonset.yaml" DaemonSet \
       --var NODE_NAME=image-node-1 --volume proc="$fixture/proc" --volume sys="$fixture/sys" \
       --volume boot="$tmp/boot" --volume state="$tmp/agent-state" --workdir "$tmp" \
       >"$tmp/agent.spec" 2>"$tmp/spec.err"; then
  flunk "agent-daemonset.yaml's DaemonSet as a run spec" "$(cat "$tmp/spec.err")"
  finish
fi
image_user=$(image_config tracehealth-agent .config.User)
pod_user=$(awk '$1 == "user" { print $2 }' "$tmp/agent.spec")
if [[ $image_user == 0:0 && $pod_user == 0 ]]; then
  pass "agent image user $image_user is the DaemonSet's runAsUser"
else
  flunk "agent image user" "image $image_user, DaemonSet $pod_user, want 0:0 and 0"
fi
mapfile -t entrypoint < <(image_config tracehealth-agent '.config.Entrypoint[]')
mapfile -t args < <(sed -n 's/^arg //p' "$tmp/agent.spec")
if timeout 60 unshare --mount --pid --fork --propagation=private \
     bash "$here/run_bundle.sh" "$tmp/bundle-agent" "$tmp/agent.spec" \
     "${entrypoint[@]}" "${args[@]}" --server="$grpc" --max_reports=1 >"$tmp/agent.log" 2>&1; then
  pass "agent image sent one report (args of agent-daemonset.yaml, --server=$grpc --max_reports=1)"
else
  flunk "agent image report" "$(tail -n 20 "$tmp/agent.log")"
fi

mkdir -p "$tmp/tools"
dpkg-deb -x "$out/debs/tracehealth-tools_${version}_amd64.deb" "$tmp/tools"
ctl() { "$tmp/tools/usr/bin/tracehealthctl" --server="$grpc" "$@"; }
hosts=$(ctl hosts 2>&1)
if grep -q '^image-node-1 ' <<<"$hosts"; then
  pass "tracehealthctl hosts lists image-node-1"
else
  flunk "tracehealthctl hosts lists image-node-1" "$hosts"
fi
ctl --json host image-node-1 >"$tmp/host.json" 2>&1
if msg=$(python3 "$here/check_host.py" "$tmp/host.json" image-node-1 node=image-node-1 "$version" 2>&1); then
  pass "tracehealthctl host image-node-1: node=image-node-1, agent $version, 240000 threads, 7500 passes, RISK_STALL"
else
  flunk "tracehealthctl host image-node-1" "$msg"
fi
scrape=$(curl -fsS "http://$metrics/metrics" 2>&1)
if [[ $(grep -c '^tracehealth_' <<<"$scrape") -gt 0 ]]; then
  pass "server image answers /metrics (the Deployment's liveness probe): $(grep -c '^tracehealth_' <<<"$scrape") tracehealth_ samples"
else
  flunk "server image /metrics" "$(head -n 5 <<<"$scrape")"
fi

# SIGTERM to the server, PID 1 of its namespace, as the kubelet stops it.
kill -TERM "$(pgrep -P "$server_pid")"
rc=124
for _ in $(seq 1 150); do
  if ! kill -0 "$server_pid" 2>/dev/null; then wait "$server_pid"; rc=$?; break; fi
  sleep 0.1
done
server_pid=""
if [[ $rc -eq 0 ]]; then
  pass "server stopped on SIGTERM with status 0"
else
  flunk "server stop on SIGTERM" "status $rc; $(tail -n 10 "$tmp/server.log")"
fi
db=$(find "$tmp/server-data" -name '*.db' -printf '%u:%g %p\n')
if [[ -n $db ]] && ! grep -qv '^65532:65532 ' <<<"$db"; then
  pass "database on the data volume, owned by 65532: $(awk '{print $2}' <<<"$db" | xargs -n1 basename | tr '\n' ' ')"
else
  flunk "database on the data volume" "$db"
fi

# --- 4. the agent image's own command -------------------------------------------
grep '^mount ' "$tmp/agent.spec" >"$tmp/mounts.spec"
mapfile -t cmd < <(image_config tracehealth-agent '.config.Cmd[]')
once=$(timeout 60 unshare --mount --pid --fork --propagation=private \
         bash "$here/run_bundle.sh" "$tmp/bundle-agent" "$tmp/mounts.spec" \
         "${entrypoint[@]}" "${cmd[@]}" --once 2>&1)
if grep -q '^Kernel      6.16.12-cloud-amd64 x86_64' <<<"$once" &&
   grep -q 'walks 240000 threads (240000 without a shadow stack) in 7500 passes of 32' <<<"$once" &&
   grep -q 'predicts a soft lockup (PREEMPT_NONE' <<<"$once"; then
  pass "agent image ${cmd[*]} --once: 6.16.12-cloud-amd64, 7500 passes of 32, soft lockup"
else
  flunk "agent image ${cmd[*]} --once" "$(head -n 30 <<<"$once")"
fi
finish
