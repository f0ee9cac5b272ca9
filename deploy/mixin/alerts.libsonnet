// The alerts: deploy/prometheus/tracehealth.rules.yml (the rules Prometheus
// loads outside Kubernetes, tested by tracehealth.rules.test.yml), each
// given its runbook_url.
{
  local withRunbook(rule) =
    if std.objectHas(rule, 'alert') then
      rule { annotations+: { runbook_url: $._config.runbookURLPrefix + rule.alert + '.md' } }
    else rule,
  prometheusAlerts+:: {
    groups+: [
      g { rules: [withRunbook(r) for r in g.rules] }
      for g in std.parseYaml(importstr '../prometheus/tracehealth.rules.yml').groups
    ],
  },
}
