#!/usr/bin/env bash
# tracehealth on this host: installs what is missing, builds, starts the server
# (SQLite under a data directory) and the agent against this host's live /proc,
# waits for the first report, prints this host's pre-attach predictions, and
# keeps both running until Ctrl-C, which stops them cleanly.
#
#   deploy/quickstart.sh           interactive: runs until Ctrl-C
#   deploy/quickstart.sh --smoke   the same, then stops both and exits
#                                  (non-zero if this host did not appear)
#
# Data and logs go to $TRACEHEALTH_HOME (default: a new temporary directory).
# Everything listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
case "${1:-}" in
  --smoke) smoke=1 ;;
  "") ;;
  *) echo "usage: $0 [--smoke]" >&2; exit 2 ;;
esac

bash deploy/setup.sh
# The system headers precompiled once instead of parsed by every compile
# (deploy/pch/): without them (no write access to /usr/local/include, or
# clang refused them) the build is the same, only slower.
build_flags=()
if pch_log=$(bash deploy/pch/build_pch.sh 2>&1); then
  build_flags+=(--config=pch)
else
  echo "quickstart: building without precompiled headers: ${pch_log##*$'\n'}"
fi
echo "quickstart: building (the first build takes about three minutes)..."
bazel build "${build_flags[@]}" //agent:tracehealth-agent \
  //server:tracehealth-server //tools/tracehealthctl:tracehealthctl 2>&1 |
  tail -n 2
bin=$(bazel info bazel-bin 2>/dev/null)

home=${TRACEHEALTH_HOME:-$(mktemp -d -t tracehealth.XXXXXX)}
mkdir -p "$home/server" "$home/agent"
rm -f "$home/ports"
host_id=$(hostname)
pids=()

stop() {
  trap - INT TERM EXIT
  echo "quickstart: stopping agent and server"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "quickstart: stopped; data and logs are in $home"
}
trap stop INT TERM EXIT

"$bin/server/tracehealth-server" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
  --data_dir="$home/server" --port_file="$home/ports" \
  --alert_rules=deploy/alerts/rules.yaml --host_report_rate=0 >"$home/server.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 300); do
  [[ -s "$home/ports" ]] && break
  if ! kill -0 "${pids[0]}" 2>/dev/null; then
    echo "quickstart: the server exited; its log:" >&2
    cat "$home/server.log" >&2
    exit 1
  fi
  sleep 0.1
done
grpc=$(sed -n 's/^grpc=//p' "$home/ports")
metrics=$(sed -n 's/^metrics=//p' "$home/ports")
if [[ -z $grpc ]]; then
  echo "quickstart: the server did not start; its log:" >&2
  cat "$home/server.log" >&2
  exit 1
fi
echo "quickstart: server on $grpc (gRPC), http://$metrics/metrics"

"$bin/agent/tracehealth-agent" --root=/ --state_dir="$home/agent" --server="$grpc" \
  --host_id="$host_id" --interval=5s >"$home/agent.log" 2>&1 &
pids+=($!)

ctl() { "$bin/tools/tracehealthctl/tracehealthctl" --server="$grpc" "$@"; }

echo "quickstart: waiting for the first report from $host_id"
seen=0
for _ in $(seq 1 120); do
  if ctl host "$host_id" >/dev/null 2>&1; then seen=1; break; fi
  sleep 0.5
done
if [[ $seen -ne 1 ]]; then
  echo "quickstart: no report from $host_id after 60 s; agent log:" >&2
  tail -n 30 "$home/agent.log" >&2
  exit 1
fi

echo
ctl predict --hosts="$host_id"
echo
ctl hosts

if [[ $smoke -eq 1 ]]; then
  # The host must be there with a prediction for every probe kind.
  json=$(ctl --json host "$host_id")
  kinds=$(grep -o '"probe_kind": *"PROBE_KIND_[A-Z_]*"' <<<"$json" | sort -u | wc -l)
  if [[ $kinds -lt 10 ]]; then
    echo "quickstart: $host_id has predictions for $kinds probe kinds, want 10" >&2
    exit 1
  fi
  echo "quickstart: smoke run OK ($host_id reported, $kinds probe kinds predicted)"
  exit 0
fi
echo
echo "quickstart: running. Try:"
echo "  $bin/tools/tracehealthctl/tracehealthctl --server=$grpc predict --probe=function_graph_tracer"
echo "  $bin/tools/tracehealthctl/tracehealthctl --server=$grpc predict --threads=400000 --preempt=none"
echo "  curl -s http://$metrics/metrics | grep ^tracehealth_"
echo "Ctrl-C stops both."
wait
