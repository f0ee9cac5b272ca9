// Recording rules for dashboards and ad-hoc queries over many hosts.
{
  prometheusRules+:: {
    groups+: [{
      name: 'tracehealth.rules',
      interval: $._config.recordingInterval,
      rules: [
        {
          // The worst predicted first-attach latency of each probe kind
          // over the hosts with series.
          record: 'probe_kind:tracehealth_attach_latency_seconds:max',
          expr: 'max by (probe_kind) (tracehealth_attach_latency_seconds)',
        },
        {
          // Hosts by worst predicted risk: every replica exports the whole
          // fleet's counts, so the replicas' max, not their sum.
          record: 'risk:tracehealth_fleet_hosts:max',
          expr: 'max by (risk) (tracehealth_fleet_hosts)',
        },
        {
          // Kernel-logged stalls over the last hour, by whether the model
          // predicted them (each replica counts the reports it stored).
          record: 'kind_model_predicted:tracehealth_observed_events:increase1h',
          expr: 'sum by (kind, model, predicted) (increase(tracehealth_observed_events_total[1h]))',
        },
      ],
    }],
  },
}
