#include "common/report/heartbeat_form.h"

namespace tracehealth {

v1::HostReport HeartbeatFormOf(const v1::HostReport& report,
                               uint64_t base_seq) {
  v1::HostReport out;
  out.set_host_id(report.host_id());
  out.set_seq(report.seq());
  if (report.has_observed_at())
    *out.mutable_observed_at() = report.observed_at();
  out.set_agent_version(report.agent_version());
  out.set_model_version(report.model_version());
  out.set_interval_seconds(report.interval_seconds());
  if (report.snapshot().threads().has_total()) {
    out.mutable_snapshot()->mutable_threads()->set_total(
        report.snapshot().threads().total());
  }
  const v1::Predictions& p = report.predictions();
  v1::Predictions& q = *out.mutable_predictions();
  q.set_worst_risk(p.worst_risk());
  for (const v1::AttachPrediction& a : p.attach()) {
    if (a.probe_kind() != v1::PROBE_KIND_KPROBE_MULTI_RETURN) continue;
    v1::AttachPrediction& b = *q.add_attach();
    b.set_probe_kind(a.probe_kind());
    b.set_latency_seconds(a.latency_seconds());
  }
  if (p.stack_depot().has_budget_ratio()) {
    q.mutable_stack_depot()->set_budget_ratio(p.stack_depot().budget_ratio());
  }
  if (p.has_vmap_purge()) {
    q.mutable_vmap_purge()->set_applies(p.vmap_purge().applies());
    q.mutable_vmap_purge()->set_purge_seconds(p.vmap_purge().purge_seconds());
  }
  out.mutable_heartbeat()->set_base_seq(base_seq);
  return out;
}

}  // namespace tracehealth
