#!/usr/bin/env bash
# The fleet page names every value of the enums it shows in words: each
# value of the proto enum has an entry in the view's table, so no raw enum
# name (CONSTANTS_ORIGIN_SEED_DEFAULT, EVENT_PREDICTION_UNKNOWN) reaches the
# page. Fails naming the table and the values it lacks.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
python3 - "$root" <<'PY'
import re, sys
root = sys.argv[1]
read = lambda p: open(f"{root}/{p}").read()
# (proto file, enum, asset, table in the asset)
CASES = [
    ("proto/tracehealth/v1/calibration.proto", "ConstantsOrigin", "server/web/assets/host.js", "ORIGIN_TEXT"),
    ("proto/tracehealth/v1/report.proto", "ObservedEventKind", "server/web/assets/events.js", "EVENT_KIND_TEXT"),
    ("proto/tracehealth/v1/report.proto", "EventModel", "server/web/assets/events.js", "EVENT_MODEL_TEXT"),
    ("proto/tracehealth/v1/query.proto", "EventPrediction", "server/web/assets/events.js", "EVENT_PREDICTION_TEXT"),
    ("proto/tracehealth/v1/query.proto", "PlanClass", "server/web/assets/rollout.js", "PLAN_CLASS_TEXT"),
]
failed = []
for proto, enum, asset, table in CASES:
    body = re.search(r"enum %s \{(.*?)\}" % enum, read(proto), re.S).group(1)
    values = re.findall(r"^\s*([A-Z][A-Z0-9_]+)\s*=", body, re.M)
    t = re.search(r"const %s = \{(.*?)\};" % table, read(asset), re.S)
    if t is None:
        failed.append(f"{asset}: no table {table}")
        continue
    named = dict(re.findall(r"([A-Z][A-Z0-9_]+): '([^']+)'", t.group(1)))
    missing = [v for v in values if v not in named]
    extra = [n for n in named if n not in values]
    raw = [n for n, text in named.items() if text == n or re.fullmatch(r"[A-Z0-9_]+", text)]
    if len(values) < 3 or missing or extra or raw:
        failed.append(f"{asset} {table} for {enum}: values {values}, missing {missing}, "
                      f"not in the enum {extra}, not words {raw}")
    else:
        print(f"PASS {enum}: all {len(values)} values named in {asset} {table}")
if failed:
    print("FAIL\n" + "\n".join(failed))
    sys.exit(1)
PY
