#!/usr/bin/env python3
"""Checks `tracehealthctl --json host ID` for the fixture host
preempt-none-6.16-240k as the server stored it from one agent report.

  check_host.py JSON_FILE HOST_ID LABEL=VALUE AGENT_VERSION

The fixture, worked out by hand: 240,000 threads, none with a shadow stack
(fgraph never active), FTRACE_RETSTACK_ALLOC_SIZE 32, so the first
function_graph attach takes 240000 / 32 = 7500 passes; PREEMPT_NONE with
watchdog_thresh 10, so the soft-lockup threshold is 2 x 10 = 20 s, which the
predicted 79.9 s walk exceeds: RISK_STALL.
"""
import json
import sys

path, host_id, label, version = sys.argv[1:]
h = json.load(open(path))
key, value = label.split("=", 1)
errors = []


def want(what, got, expected):
    if got != expected:
        errors.append(f"{what}: got {got!r}, want {expected!r}")


want("host_id", h.get("host_id"), host_id)
want("labels", h.get("labels"), {key: value})
latest = h.get("latest", {})
want("latest.agent_version", latest.get("agent_version"), version)
want("latest.snapshot.kernel.release",
     latest.get("snapshot", {}).get("kernel", {}).get("release"), "6.16.12-cloud-amd64")
want("latest.snapshot.threads.total",
     latest.get("snapshot", {}).get("threads", {}).get("total"), "240000")
fg = [a for a in latest.get("predictions", {}).get("attach", [])
      if a.get("probe_kind") == "PROBE_KIND_FUNCTION_GRAPH_TRACER"]
if len(fg) != 1:
    errors.append(f"want one function_graph prediction, got {len(fg)}")
else:
    want("function_graph batch", fg[0].get("batch"), 32)
    want("function_graph passes", fg[0].get("passes"), "7500")
    want("function_graph risk", fg[0].get("risk"), "RISK_STALL")
    lockup = [c for c in fg[0].get("checks", []) if c.get("kind") == "KIND_SOFT_LOCKUP"]
    want("soft lockup threshold", [c.get("threshold") for c in lockup], [20])
if errors:
    sys.exit("\n".join(errors))
