// The fleet dashboard: deploy/grafana/tracehealth-dashboard.json with a row
// over the recording rules (rules.libsonnet) added below its panels.
{
  local base = import '../grafana/tracehealth-dashboard.json',
  local bottom = std.foldl(function(m, p) std.max(m, p.gridPos.y + p.gridPos.h), base.panels, 0),
  local nextId = std.foldl(function(m, p) std.max(m, p.id), base.panels, 0) + 1,
  local timeseries(id, title, y, x, expr, legend, unit) = {
    id: id,
    type: 'timeseries',
    title: title,
    datasource: { type: 'prometheus', uid: '${datasource}' },
    gridPos: { x: x, y: y, w: 12, h: 8 },
    fieldConfig: { defaults: { unit: unit }, overrides: [] },
    targets: [{ refId: 'A', expr: expr, legendFormat: legend }],
  },
  grafanaDashboards+:: {
    'tracehealth-dashboard.json': base {
      panels+: [
        {
          id: nextId,
          type: 'row',
          title: 'Recorded over the fleet',
          collapsed: false,
          gridPos: { x: 0, y: bottom, w: 24, h: 1 },
          panels: [],
        },
        timeseries(nextId + 1, 'Worst attach latency by probe kind', bottom + 1, 0,
                   'probe_kind:tracehealth_attach_latency_seconds:max', '{{probe_kind}}', 's'),
        timeseries(nextId + 2, 'Kernel-logged stalls (1h) by whether they were predicted', bottom + 1, 12,
                   'kind_model_predicted:tracehealth_observed_events:increase1h',
                   '{{kind}} {{model}} predicted={{predicted}}', 'short'),
      ],
    },
  },
}
