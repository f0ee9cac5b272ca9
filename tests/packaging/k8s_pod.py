#!/usr/bin/env python3
"""Turns the first container of a workload in a deploy/k8s manifest into what
run_bundle.sh needs to run an unpacked image the way the kubelet would.

  k8s_pod.py MANIFEST KIND --var NAME=VALUE... --volume NAME=DIR... --workdir DIR

Prints one line per item:
  image REF                      the container's image
  user UID GID                   securityContext runAsUser/runAsGroup ("-" if unset)
  readonly 0|1                   readOnlyRootFilesystem
  caps CAP,CAP                   capabilities.add when "ALL" is dropped ("-" if none)
  mount SRC DST ro|rw            every volumeMount, SRC from --volume NAME=DIR, or
                                 for a configMap volume a directory under --workdir
                                 holding the ConfigMap's data as files
  env NAME=VALUE                 env (fieldRefs from --var) and envFrom ConfigMaps
  arg ARG                        args, with $(VAR) expanded as the kubelet does

Every volume of the pod must be given with --volume or be a ConfigMap of the
same manifest; anything else is an error, so a changed manifest fails the test
instead of running with less than it asks for.
"""
import argparse
import os
import re
import sys

import yaml


def main():
    p = argparse.ArgumentParser()
    p.add_argument("manifest")
    p.add_argument("kind")
    p.add_argument("--var", action="append", default=[])
    p.add_argument("--volume", action="append", default=[])
    p.add_argument("--workdir", required=True)
    a = p.parse_args()

    docs = [d for d in yaml.safe_load_all(open(a.manifest)) if d]
    configmaps = {d["metadata"]["name"]: d.get("data", {})
                  for d in docs if d["kind"] == "ConfigMap"}
    workloads = [d for d in docs if d["kind"] == a.kind]
    if len(workloads) != 1:
        sys.exit(f"{a.manifest}: want one {a.kind}, found {len(workloads)}")
    pod = workloads[0]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    given_vars = dict(v.split("=", 1) for v in a.var)
    given_volumes = dict(v.split("=", 1) for v in a.volume)

    env = {}
    for src in c.get("envFrom", []):
        # The kubelet skips keys that are not variable names (alert-rules.yaml).
        env.update({k: v for k, v in configmaps[src["configMapRef"]["name"]].items()
                    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)})
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif e["name"] in given_vars:
            env[e["name"]] = given_vars[e["name"]]
        else:
            sys.exit(f"env {e['name']} comes from {e.get('valueFrom')}: give it with --var")

    def expand(s):
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                      lambda m: str(env.get(m.group(1), m.group(0))), s)

    sc = c.get("securityContext", {})
    psc = pod.get("securityContext", {})
    caps = sc.get("capabilities", {})
    if "ALL" not in caps.get("drop", []):
        sys.exit("the container must drop ALL capabilities")
    uid = sc.get("runAsUser", psc.get("runAsUser", "-"))
    gid = sc.get("runAsGroup", psc.get("runAsGroup", "-"))

    print("image", c["image"])
    print("user", uid, gid)
    print("readonly", 1 if sc.get("readOnlyRootFilesystem") else 0)
    print("caps", ",".join(caps.get("add", [])) or "-")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = volumes[m["name"]]
        if m["name"] in given_volumes:
            src = given_volumes[m["name"]]
        elif "configMap" in v:
            src = os.path.join(a.workdir, "configmap-" + m["name"])
            os.makedirs(src, exist_ok=True)
            for key, value in configmaps[v["configMap"]["name"]].items():
                with open(os.path.join(src, key), "w") as f:
                    f.write(str(value))
        else:
            sys.exit(f"volume {m['name']} ({v}): give it with --volume {m['name']}=DIR")
        print("mount", src, m["mountPath"], "ro" if m.get("readOnly") else "rw")

    lines = [f"env {k}={v}" for k, v in env.items()]
    lines += ["arg " + expand(arg) for arg in c.get("args", [])]
    for line in lines:
        if "\n" in line:
            sys.exit(f"cannot pass a value with a newline: {line!r}")
        print(line)


if __name__ == "__main__":
    main()
