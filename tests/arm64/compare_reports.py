#!/usr/bin/env python3
"""Compares two `tracehealth-agent --once --format=json` reports of the same
host tree, field by field, exactly (numbers as the JSON spells them).

Ignored, because they differ between any two runs of the same binary on the
same tree, not because of the architecture:
  - the wall-clock times: observed_at, snapshot.fgraph.links_scanned_at,
    snapshot.fgraph.last_active_at, snapshot.vmalloc.vmallocinfo_read_at,
    snapshot.depot_history[].at;
  - the agent's own cost of the cycle: health.cycle_seconds,
    health.cycle_cpu_seconds, health.rss_bytes (under qemu user emulation
    these are the emulator's).
Everything else, the input costs (opens, reads, bytes) included, must be equal.

Usage: compare_reports.py A.json B.json. Prints each difference as
"PATH: A != B"; exits 0 when equal, 1 when not, 2 on unreadable input.
"""
import json
import sys

IGNORED = {
    ".observed_at",
    ".snapshot.fgraph.links_scanned_at",
    ".snapshot.fgraph.last_active_at",
    ".snapshot.vmalloc.vmallocinfo_read_at",
    ".snapshot.depot_history[].at",
    ".health.cycle_seconds",
    ".health.cycle_cpu_seconds",
    ".health.rss_bytes",
}


def diff(a, b, path, pattern, out):
    """Appends "path: a != b" for each difference below path to out.

    pattern is path with list indices written as [] (the form IGNORED uses).
    """
    if pattern in IGNORED:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if pattern + "." + key in IGNORED:
                # Absent on one side too: JSON leaves out a zero, as a
                # cycle's CPU time rounded to nothing on one run.
                continue
            if key not in a or key not in b:
                out.append("%s.%s: %s != %s" % (path, key, json.dumps(a.get(key)),
                                                json.dumps(b.get(key))))
                continue
            diff(a[key], b[key], path + "." + key, pattern + "." + key, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append("%s: %d items != %d items" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, "%s[%d]" % (path, i), pattern + "[]", out)
    elif type(a) is not type(b) or a != b:
        out.append("%s: %s != %s" % (path, json.dumps(a), json.dumps(b)))


def main(argv):
    if len(argv) != 3:
        print("usage: compare_reports.py A.json B.json", file=sys.stderr)
        return 2
    try:
        reports = []
        for name in argv[1:]:
            with open(name) as f:
                # Floats as their decimal text: equal text, equal double.
                reports.append(json.load(f, parse_float=str))
    except (OSError, ValueError) as e:
        print("compare_reports: %s" % e, file=sys.stderr)
        return 2
    out = []
    diff(reports[0], reports[1], "", "", out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
