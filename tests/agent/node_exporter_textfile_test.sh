#!/usr/bin/env bash
# tracehealth-agent --textfile=DIR feeds Debian's prometheus-node-exporter:
# the agent reads a fixture host (kprobe_multi on 6.14) and writes
# DIR/tracehealth.prom each cycle; node_exporter (textfile collector only,
# loopback, a free port) serves it, and its /metrics must carry the agent's
# series with the value the agent's own JSON report predicts, and no
# textfile scrape error. Skipped, with the reason, without node_exporter.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
agent="$root/agent/tracehealth-agent"
fixture="$root/tests/fixtures/hosts/kprobe-multi-6.14"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

exporter=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [[ -z $exporter ]]; then
  echo "SKIPPED: prometheus-node-exporter is not installed (deploy/setup.sh --test installs it)"
  exit 0
fi

textdir="$tmp/textfile"
mkdir -p "$textdir" "$tmp/state"
# Two cycles, 0.2 s apart: the file is replaced, never appended to.
"$agent" --root="$fixture" --state_dir="$tmp/state" --host_id=node-7 \
  --interval=0.2s --max_reports=2 --local_socket=none --kernel_log=false \
  --textfile="$textdir" >"$tmp/agent.out" 2>"$tmp/agent.err" || {
  echo "FAIL: the agent exited $?"; cat "$tmp/agent.err"; exit 1; }
[[ -s $textdir/tracehealth.prom ]] || { echo "FAIL: no $textdir/tracehealth.prom"; cat "$tmp/agent.err"; exit 1; }
if ls -A "$textdir" | grep -v '^tracehealth.prom$'; then
  echo "FAIL: files other than tracehealth.prom left in the textfile directory"; exit 1
fi
# One sample per series: a second cycle that appended would repeat them.
dups=$(grep -v '^#' "$textdir/tracehealth.prom" | cut -d' ' -f1 | sort | uniq -d)
[[ -z $dups ]] || { echo "FAIL: repeated series: $dups"; exit 1; }

# What the agent itself predicts for this host's kprobe_multi return attach.
want=$("$agent" --root="$fixture" --once --format=json --host_id=node-7 \
  --kernel_log=false 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
for a in r["predictions"]["attach"]:
    if a["probe_kind"] == "PROBE_KIND_KPROBE_MULTI_RETURN":
        print(repr(float(a.get("latency_seconds", 0))))
')
[[ -n $want ]] || { echo "FAIL: the JSON report has no kprobe_multi_return prediction"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
  --collector.textfile --collector.textfile.directory="$textdir" \
  >"$tmp/exporter.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT

body=""
for _ in $(seq 1 100); do
  if body=$(curl -sf "http://127.0.0.1:$port/metrics"); then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: node_exporter exited"; cat "$tmp/exporter.log"; exit 1; }
  sleep 0.1
done
[[ -n $body ]] || { echo "FAIL: node_exporter did not answer"; cat "$tmp/exporter.log"; exit 1; }

python3 - "$want" <<PY
import re, sys
want = float(sys.argv[1])
body = """$body"""
def sample(name, labels):
    for line in body.splitlines():
        m = re.match(r'(\w+)\{([^}]*)\} (\S+)$', line)
        if m and m.group(1) == name and dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))) == labels:
            return float(m.group(3))
    return None
errors = sample("node_textfile_scrape_error", {})
if errors is None:
    errors = float(re.search(r'^node_textfile_scrape_error (\S+)$', body, re.M).group(1))
assert errors == 0, "node_exporter could not read the file"
got = sample("tracehealth_attach_latency_seconds", {"host": "node-7", "probe_kind": "kprobe_multi_return"})
assert got is not None, "no kprobe_multi_return latency series:\n" + "\n".join(l for l in body.splitlines() if "tracehealth" in l)
assert abs(got - want) <= 1e-9 * max(1.0, abs(want)), (got, want)
assert sample("tracehealth_host_report_interval_seconds", {"host": "node-7"}) == 0.2
kinds = {m for m in re.findall(r'^tracehealth_attach_latency_seconds\{[^}]*probe_kind="(\w+)"', body, re.M)}
assert len(kinds) == 10, sorted(kinds)
mtime = re.search(r'^node_textfile_mtime_seconds\{file="[^"]*tracehealth.prom"\} (\S+)$', body, re.M)
assert mtime, "node_exporter does not list tracehealth.prom"
print(f"PASS node_exporter serves the agent's series: kprobe_multi_return {got} s (agent JSON {want} s), {len(kinds)} probe kinds")
PY
