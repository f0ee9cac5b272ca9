#!/usr/bin/env bash
# Parses or verifies every manifest and configuration in deploy/ with the real
# tools: promtool (config, rules, rule unit tests), amtool, systemd-analyze,
# a YAML parser for the Kubernetes manifests, a JSON parser for the Grafana
# dashboard, the TLS script (certificates checked with openssl), haproxy -c
# and the Patroni example's settings.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
deploy="$tmp/deploy"
rm -rf "$deploy" && cp -rL "$root/deploy" "$deploy"
fail=0
check() {  # check NAME CMD...: runs CMD, reports PASS/FAIL with its output
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then
    echo "PASS $name"
  else
    echo "FAIL $name"; echo "$out" | sed 's/^/    /'; fail=1
  fi
}

# Prometheus: scrape config (which also checks the rule file it names), rules,
# and the rules' unit tests.
check "promtool check config" promtool check config "$deploy/prometheus/prometheus.yml"
check "promtool check rules" promtool check rules "$deploy/prometheus/tracehealth.rules.yml"
check "promtool test rules" bash -c "cd '$deploy/prometheus' && promtool test rules tracehealth.rules.test.yml"
check "amtool check-config" amtool check-config "$deploy/alertmanager/alertmanager.yml"

# systemd units: verify with the ExecStart binary swapped for one that exists;
# systemd-analyze exits 0 on warnings, so any output at all is a failure.
verify_unit() {
  local unit=$1 out
  sed -E 's|/usr/bin/tracehealth-[a-z]+|/bin/true|' "$deploy/systemd/$unit" > "$tmp/$unit"
  out=$(systemd-analyze verify "$tmp/$unit" 2>&1 | grep -v 'Failed to connect to bus' || true)
  [[ -z $out ]] || { echo "$out"; return 1; }
}
if command -v systemd-analyze >/dev/null; then
  for u in tracehealth-agent.service tracehealth-server.service; do
    check "systemd-analyze verify $u" verify_unit "$u"
  done
else
  echo "SKIP systemd-analyze (not installed)"
fi

# Kubernetes manifests: valid YAML, each document a known kind with metadata.
# (tests/deploy/k8s_render_test.sh renders the kustomizations and validates
# every object against the Kubernetes schemas.)
check "k8s manifests parse" python3 - "$deploy/k8s/base" <<'PY'
import glob, sys, yaml
kinds = set()
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for doc in yaml.safe_load_all(open(f)):
        if not doc or doc.get("kind") == "Kustomization":
            continue
        assert doc.get("apiVersion") and doc.get("kind"), f
        assert doc["metadata"]["name"], f
        kinds.add(doc["kind"])
        if doc["kind"] == "DaemonSet":
            spec = doc["spec"]["template"]["spec"]
            assert spec["hostPID"] is True, "agent needs the host PID namespace"
            assert {"operator": "Exists"} in spec["tolerations"], "agent must run on every node"
            mounts = spec["containers"][0]["volumeMounts"]
            for m in mounts:
                if m["mountPath"] in ("/host/proc", "/host/sys"):
                    assert m.get("readOnly") is True, m
want = {"Namespace", "DaemonSet", "Deployment", "Service", "ConfigMap", "PersistentVolumeClaim"}
missing = want - kinds
assert not missing, missing
PY

# Grafana dashboard: valid JSON whose panels query tracehealth_ metrics.
if compgen -G "$deploy/grafana/*.json" >/dev/null; then
  check "grafana dashboard parses" python3 - "$deploy/grafana" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    assert exprs and all("tracehealth_" in e or "ALERTS" in e for e in exprs), f
    # The fleet-wide panels read the aggregates, which cover every host;
    # per-host series exist only for the hosts that need attention.
    fleet = [p for p in d["panels"] if any("tracehealth_fleet_" in t["expr"] for t in p.get("targets", []))]
    assert len(fleet) >= 3, (f, [p["title"] for p in fleet])
    stall = [p for p in d["panels"] if p["title"] == "Hosts at stall risk"]
    assert stall and "tracehealth_fleet_hosts" in stall[0]["targets"][0]["expr"], f
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), f

PY
fi

# TLS script: CA, server and per-host certificates that verify, CN = host id.
tls_check() {
  local out="$tmp/certs"
  rm -rf "$out"
  bash "$deploy/tls/make-certs.sh" "$out" server.test host-a host-b >/dev/null
  openssl verify -CAfile "$out/ca.crt" "$out/server.crt" "$out/hosts/host-a.crt" "$out/hosts/host-b.crt"
  openssl x509 -in "$out/hosts/host-a.crt" -noout -subject | grep -q 'CN *= *host-a'
  openssl x509 -in "$out/server.crt" -noout -ext subjectAltName | grep -q 'IP Address:127.0.0.1'
  # Re-running keeps existing keys and adds only new hosts.
  local before; before=$(sha256sum "$out/hosts/host-a.key")
  bash "$deploy/tls/make-certs.sh" "$out" server.test host-a host-c >/dev/null
  [[ "$(sha256sum "$out/hosts/host-a.key")" == "$before" ]]
  [[ -f "$out/hosts/host-c.crt" ]]
  ! bash "$deploy/tls/make-certs.sh" "$out" server.test "../evil" 2>/dev/null
}
check "tls make-certs.sh" tls_check

# HAProxy and Patroni (tests/replicas/failover_test.cc also runs both):
# haproxy -c with every address the config takes from the environment;
# Patroni's timing rule and synchronous mode (its own --validate-config
# wants a reachable etcd).
check "haproxy -c tracehealth.cfg" env TRACEHEALTH_GRPC_BIND=127.0.0.1:7443 \
  TRACEHEALTH_REPLICA_1=127.0.0.1:7444 TRACEHEALTH_REPLICA_2=127.0.0.1:7445 \
  TRACEHEALTH_PG_BIND=127.0.0.1:6432 TRACEHEALTH_PG_1=127.0.0.1:5432 \
  TRACEHEALTH_PG_2=127.0.0.1:5433 TRACEHEALTH_PATRONI_1=8008 TRACEHEALTH_PATRONI_2=8009 \
  haproxy -c -f "$deploy/haproxy/tracehealth.cfg"
patroni_check() {
  python3 - "$deploy/patroni/patroni.yml" <<'PY'
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
dcs = c["bootstrap"]["dcs"]
assert dcs["loop_wait"] + 2 * dcs["retry_timeout"] <= dcs["ttl"], "loop_wait + 2*retry_timeout > ttl"
assert dcs["synchronous_mode"] is True, "a failover could lose acked reports"
assert c["postgresql"]["bin_dir"] == "/usr/lib/postgresql/15/bin"
assert c["scope"] and c["postgresql"]["authentication"]["replication"]["username"]
PY
}
check "patroni.yml (timeouts, synchronous mode)" patroni_check

if [[ $fail -ne 0 ]]; then
  echo "deploy configs: FAILED"
  exit 1
fi
echo "deploy configs: all checks passed"
