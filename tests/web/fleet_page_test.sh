#!/usr/bin/env bash
# Runs fleet_page_test.py with Debian's Python (python3-selenium), or says why
# it cannot: without chromium, chromium-driver and python3-selenium
# (deploy/setup.sh installs them) the test is skipped, loudly.
set -euo pipefail
missing=()
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
[[ -x /usr/bin/chromedriver ]] || missing+=(chromium-driver)
/usr/bin/python3 -c 'import selenium' 2>/dev/null || missing+=(python3-selenium)
if ((${#missing[@]} > 0)); then
  echo "SKIPPED: the browser test needs the Debian packages ${missing[*]} (deploy/setup.sh installs them)"
  exit 0
fi
exec /usr/bin/python3 "$(dirname "$0")/fleet_page_test.py" "$@"
