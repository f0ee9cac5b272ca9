#!/usr/bin/env bash
# deploy/k8s/: the generated parts are current (deploy/k8s/generate.py
# --check; the mixin's own in tests/deploy/mixin_test.sh); each overlay renders (`kustomize build`, or `kubectl kustomize`:
# Debian 12 packages no kustomize); every rendered object validates against
# the Kubernetes and prometheus-operator schemas (npm kubernetes-models and
# @kubernetes-models/prometheus-operator, installed at the versions of
# tests/deploy/k8s-schema/package-lock.json into
# ~/.cache/tracehealth-npm/k8s-schema, outside the repository); and the
# objects are the expected kinds and count, carrying what the overlays are
# for. Without a renderer, or without the npm registry on first use, the
# respective part is SKIPPED with the reason: the run exits 0 with a line
# starting "k8s render: SKIPPED", which deploy/test.sh counts as no pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
schema_dir=tests/deploy/k8s-schema
cache=${TRACEHEALTH_NPM_CACHE:-$HOME/.cache/tracehealth-npm}/k8s-schema
tmp=$(mktemp -d -t tracehealth-k8s.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
skipped=0

if python3 deploy/k8s/generate.py --check; then
  echo "PASS deploy/k8s generated parts are current"
else
  echo "FAIL deploy/k8s generated parts are stale"; fail=1
fi

if command -v kustomize >/dev/null 2>&1; then
  render=(kustomize build)
elif command -v kubectl >/dev/null 2>&1; then
  render=(kubectl kustomize)
else
  echo "k8s render: SKIPPED: no kustomize and no kubectl (deploy/setup.sh --test installs kubernetes-client)"
  exit "$fail"
fi

for overlay in sqlite postgres; do
  if "${render[@]}" "deploy/k8s/overlays/$overlay" >"$tmp/$overlay.yaml" 2>"$tmp/$overlay.err"; then
    echo "PASS ${render[*]} deploy/k8s/overlays/$overlay"
  else
    echo "FAIL ${render[*]} deploy/k8s/overlays/$overlay"; sed 's/^/    /' "$tmp/$overlay.err"; fail=1
  fi
  python3 -c 'import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
    "$tmp/$overlay.yaml" "$tmp/$overlay.json" || fail=1
done

# Kinds, count and content.
python3 - "$tmp" <<'PY' || fail=1
import collections, json, sys, yaml
tmp = sys.argv[1]
want = {
    "sqlite": {"Namespace": 1, "ConfigMap": 3, "Service": 1, "PersistentVolumeClaim": 1,
               "Deployment": 1, "DaemonSet": 1, "ServiceMonitor": 1, "PrometheusRule": 1},
    "postgres": {"Namespace": 1, "ConfigMap": 3, "Service": 1,
                 "Deployment": 1, "DaemonSet": 1, "ServiceMonitor": 1, "PrometheusRule": 1},
}
mixin = [g for f in ("prometheus_alerts.yaml", "prometheus_rules.yaml")
         for g in yaml.safe_load(open("deploy/mixin/generated/" + f))["groups"]]
server_rules = yaml.safe_load(open("deploy/alerts/rules.yaml"))
bad = 0
def check(ok, what):
    global bad
    print(("PASS " if ok else "FAIL ") + what)
    bad += not ok
for overlay, kinds in want.items():
    objs = json.load(open(f"{tmp}/{overlay}.json"))
    got = dict(collections.Counter(o["kind"] for o in objs))
    check(got == kinds, f"{overlay}: {len(objs)} objects {sorted(got.items())}")
    check(all(o["metadata"].get("namespace") == "tracehealth" for o in objs if o["kind"] != "Namespace"),
          f"{overlay}: every object in namespace tracehealth")
    by = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    rule = by.get(("PrometheusRule", "tracehealth"))
    alerts = [r for g in mixin for r in g["rules"] if "alert" in r]
    check(rule is not None and rule["spec"]["groups"] == mixin
          and all(r["annotations"]["runbook_url"] for r in alerts),
          f"{overlay}: PrometheusRule holds the mixin's {len(alerts)} alerts (each with "
          f"runbook_url) and {sum(len(g['rules']) for g in mixin) - len(alerts)} recording rules")
    cm = by.get(("ConfigMap", "tracehealth-server"), {})
    loaded = yaml.safe_load(cm.get("data", {}).get("alert-rules.yaml", ""))
    check(loaded == server_rules and len(loaded["rules"]) > 0,
          f"{overlay}: the server's ConfigMap holds deploy/alerts/rules.yaml "
          f"({len(server_rules['rules'])} rules)")
    dash = by.get(("ConfigMap", "tracehealth-dashboards"), {})
    check(dash.get("metadata", {}).get("labels", {}).get("grafana_dashboard") == "1"
          and all(json.loads(v)["panels"] for v in dash.get("data", {}).values())
          and len(dash.get("data", {})) >= 1,
          f"{overlay}: dashboards ConfigMap labelled grafana_dashboard=1 with "
          f"{len(dash.get('data', {}))} dashboard(s)")
    ds = by[("DaemonSet", "tracehealth-agent")]["spec"]["template"]["spec"]
    mounts = {m["mountPath"]: m for m in ds["containers"][0]["volumeMounts"]}
    check(ds["hostPID"] is True and all(mounts[p].get("readOnly") is True
          for p in ("/host/proc", "/host/sys", "/host/boot")),
          f"{overlay}: agent DaemonSet in the host PID namespace, /proc /sys /boot read-only")
    sm = by[("ServiceMonitor", "tracehealth-server")]["spec"]
    svc = by[("Service", "tracehealth-server")]
    check(sm["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
          and sm["endpoints"][0]["port"] in [p["name"] for p in svc["spec"]["ports"]],
          f"{overlay}: ServiceMonitor selects the server Service's metrics port")
    dep = by[("Deployment", "tracehealth-server")]["spec"]
    c = dep["template"]["spec"]["containers"][0]
    vols = {v["name"] for v in dep["template"]["spec"]["volumes"]}
    if overlay == "sqlite":
        check(dep["replicas"] == 1 and dep["strategy"]["type"] == "Recreate"
              and "data" in vols and not any(a.startswith("--store=") for a in c["args"]),
              "sqlite: one server, Recreate, SQLite on its volume")
    else:
        env = {e["name"]: e for e in c.get("env", [])}
        dsn = env.get("TRACEHEALTH_POSTGRES_DSN", {}).get("valueFrom", {}).get("secretKeyRef", {})
        check(dep["replicas"] == 3 and "--store=postgres" in c["args"]
              and "--postgres_dsn=$(TRACEHEALTH_POSTGRES_DSN)" in c["args"]
              and dsn == {"name": "tracehealth-postgres", "key": "dsn"}
              and "data" not in vols and not any(a.startswith("--data_dir") for a in c["args"]),
              "postgres: three replicas, --store=postgres, DSN from Secret tracehealth-postgres, no volume")
sys.exit(1 if bad else 0)
PY

# Schema validation (npm, offline once installed).
if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: schema validation: npm not installed (deploy/setup.sh --test installs it)"; skipped=1
else
  mkdir -p "$cache"
  if ! cmp -s "$schema_dir/package-lock.json" "$cache/package-lock.json" || [[ ! -d $cache/node_modules ]]; then
    cp "$schema_dir/package.json" "$schema_dir/package-lock.json" "$cache/"
    if ! (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error >"$tmp/npm.log" 2>&1); then
      echo "SKIPPED: schema validation: npm ci failed (offline?):"; tail -n 5 "$tmp/npm.log"
      rm -f "$cache/package-lock.json"; skipped=1
    fi
  fi
  if [[ $skipped -eq 0 ]]; then
    cp "$schema_dir/validate.mjs" "$cache/validate.mjs"
    # The validator must be able to say no: a container image that is no
    # string is refused.
    echo '[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"broken"},"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"a","image":3}]}}}}]' >"$tmp/broken.json"
    if node "$cache/validate.mjs" "$tmp/broken.json" >/dev/null; then
      echo "FAIL schema validation accepted a broken Deployment"; fail=1
    fi
    for overlay in sqlite postgres; do
      if out=$(node "$cache/validate.mjs" "$tmp/$overlay.json" 2>&1); then
        echo "PASS $overlay: $(grep -c ' ok$' <<<"$out") objects valid against the Kubernetes and prometheus-operator schemas"
      else
        echo "FAIL $overlay: schema validation"; sed 's/^/    /' <<<"$out"; fail=1
      fi
    done
  fi
fi

if [[ $fail -ne 0 ]]; then echo "k8s render: FAILED"; exit 1; fi
if [[ $skipped -ne 0 ]]; then echo "k8s render: SKIPPED: schema validation (reason above)"; exit 0; fi
echo "k8s render: all checks passed"
