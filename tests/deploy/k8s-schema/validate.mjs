// Validates every object of the rendered manifests given as arguments (YAML
// streams as `kubectl kustomize` prints them, converted to a JSON array per
// file by the caller) against the Kubernetes and prometheus-operator schemas
// of the npm packages kubernetes-models and
// @kubernetes-models/prometheus-operator, offline.
//
//   node validate.mjs FILE.json...
//
// Prints "KIND NAME ok" or "KIND NAME INVALID: reason" per object; exits 1
// when any object is invalid or of a kind neither package knows.
import { readFileSync } from "node:fs";

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/")
    ? apiVersion.split("/")
    : ["", apiVersion];
  const path =
    group === "monitoring.coreos.com"
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`
      : group === ""
        ? `kubernetes-models/${version}/${kind}`
        : `kubernetes-models/${group}/${version}/${kind}`;
  const m = await import(path);
  return m[kind];
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  for (const obj of JSON.parse(readFileSync(file, "utf8"))) {
    const what = `${obj.kind} ${obj.metadata?.name}`;
    try {
      const Model = await modelFor(obj.apiVersion, obj.kind);
      if (!Model) throw new Error(`no model for ${obj.apiVersion} ${obj.kind}`);
      new Model(obj).validate();
      console.log(`${what} ok`);
    } catch (e) {
      failed++;
      console.log(`${what} INVALID: ${String(e.message).slice(0, 400)}`);
    }
  }
}
process.exit(failed ? 1 : 0);
