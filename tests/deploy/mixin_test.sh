#!/usr/bin/env bash
# The monitoring mixin (deploy/mixin/): its generated files are current
# (generate.sh --check, deploy/k8s's generated parts included); the
# generated alerts and recording rules pass `promtool check rules`; the
# alerts pass the shipped rule unit tests (deploy/prometheus/
# tracehealth.rules.test.yml, every expected alert also carrying its
# runbook_url); the recording rules pass their own
# (deploy/mixin/tests/recording_rules.test.yml); every alert's runbook_url
# names docs/runbooks/ALERT.md, which exists and says what the alert means,
# how to confirm it and what to do; the dashboards parse and query
# tracehealth series. Needs jsonnet and promtool (deploy/setup.sh --test).
set -uo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d -t tracehealth-mixin.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME CMD...
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then echo "PASS $name"; else echo "FAIL $name"; echo "$out" | sed 's/^/    /'; fail=1; fi
}
gen=deploy/mixin/generated

check "deploy/mixin/generate.sh --check (generated files current)" bash deploy/mixin/generate.sh --check
check "promtool check rules (generated alerts and recording rules)" \
  promtool check rules "$gen/prometheus_alerts.yaml" "$gen/prometheus_rules.yaml"

# The shipped unit tests against the generated alerts: same expectations,
# plus each alert's runbook_url.
python3 - deploy/prometheus/tracehealth.rules.test.yml "$tmp" "$PWD/$gen/prometheus_alerts.yaml" <<'PY' || fail=1
import sys, yaml
src, tmp, alerts = sys.argv[1:]
t = yaml.safe_load(open(src))
t["rule_files"] = [alerts]
n = 0
for case in t["tests"]:
    for at in case.get("alert_rule_test", []):
        for a in at.get("exp_alerts", []):
            a.setdefault("exp_annotations", {})["runbook_url"] = f"docs/runbooks/{at['alertname']}.md"
            n += 1
yaml.safe_dump(t, open(f"{tmp}/alerts.test.yml", "w"), sort_keys=False)
print(f"rule unit tests: {n} expected alerts given their runbook_url")
PY
check "promtool test rules: tracehealth.rules.test.yml against the generated alerts" \
  promtool test rules "$tmp/alerts.test.yml"
check "promtool test rules: recording rules" \
  bash -c "cd deploy/mixin/tests && promtool test rules recording_rules.test.yml"

check "every alert has its runbook" python3 - "$gen/prometheus_alerts.yaml" <<'PY'
import os, re, sys, yaml
alerts = [r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"] if "alert" in r]
assert len(alerts) >= 11, len(alerts)
for a in alerts:
    name = a["alert"]
    url = a["annotations"].get("runbook_url")
    assert url == f"docs/runbooks/{name}.md", (name, url)
    text = open(url).read()
    assert text.startswith(f"# {name}\n"), f"{url}: first line must be '# {name}'"
    for section in ("## What it means", "## How to confirm", "## What to do"):
        assert f"\n{section}\n" in text, f"{url}: no '{section}' section"
listed = {f[:-3] for f in os.listdir("docs/runbooks") if f.endswith(".md") and f != "README.md"}
extra = listed - {a["alert"] for a in alerts}
assert not extra, f"runbooks of no alert: {sorted(extra)}"
print(f"{len(alerts)} alerts, {len(alerts)} runbooks")
PY

check "dashboards parse and query tracehealth series" python3 - "$gen/dashboards" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*.json")
assert files
for f in files:
    d = json.load(open(f))
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), f
    exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    assert exprs and all("tracehealth_" in e or "ALERTS" in e for e in exprs), f
    recorded = [e for e in exprs if ":tracehealth_" in e]
    assert len(recorded) >= 2, "no panel reads the recording rules"
PY

if [[ $fail -ne 0 ]]; then echo "mixin: FAILED"; exit 1; fi
echo "mixin: all checks passed"
