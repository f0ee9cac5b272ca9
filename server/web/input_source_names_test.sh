#!/usr/bin/env bash
# The host page names every tracehealth.v1.InputSource value in words: each
# value of the proto enum has an entry in host.js's srcText, so no raw enum
# name (INPUT_SOURCE_NOT_APPLICABLE) reaches the page.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
python3 - "$root/proto/tracehealth/v1/predictions.proto" "$root/server/web/assets/host.js" <<'PY'
import re, sys
proto, js = (open(f).read() for f in sys.argv[1:])
enum = re.search(r"enum InputSource \{(.*?)\}", proto, re.S).group(1)
values = re.findall(r"^\s*(INPUT_SOURCE_\w+)\s*=", enum, re.M)
table = re.search(r"const srcText = \{(.*?)\};", js, re.S).group(1)
named = dict(re.findall(r"(INPUT_SOURCE_\w+): '([^']+)'", table))
missing = [v for v in values if v not in named]
assert len(values) >= 6, values
assert not missing, f"host.js srcText lacks {missing}"
assert named["INPUT_SOURCE_NOT_APPLICABLE"] == "not applicable", named
print(f"PASS all {len(values)} InputSource values named on the host page")
PY
