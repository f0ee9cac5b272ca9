// tracehealth's monitoring mixin: prometheusAlerts, prometheusRules and
// grafanaDashboards, as monitoring mixins have them. deploy/mixin/generate.sh
// renders them into deploy/mixin/generated/ (checked in; a test fails when
// they are stale).
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'rules.libsonnet') +
(import 'dashboards.libsonnet')
