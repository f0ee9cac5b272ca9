#include "server/query/rollout_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/format.h"
#include "google/protobuf/util/time_util.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr v1::PlanClass kOrder[] = {
    v1::PLAN_CLASS_SAFE, v1::PLAN_CLASS_OVER_BUDGET, v1::PLAN_CLASS_LOCKUP_RISK,
    v1::PLAN_CLASS_UNKNOWN};

std::string Action(v1::PlanClass c, double wave_max, double budget) {
  switch (c) {
    case v1::PLAN_CLASS_SAFE:
      return absl::StrCat("attach: at most ", FormatSeconds(wave_max),
                          ", below the budget of ", FormatSeconds(budget),
                          ", no stall risk");
    case v1::PLAN_CLASS_OVER_BUDGET:
      return absl::StrCat(
          "attach outside peak: the attaching call blocks up "
          "to ",
          FormatSeconds(wave_max), ", over the budget of ",
          FormatSeconds(budget), " (latency only)");
    case v1::PLAN_CLASS_LOCKUP_RISK:
      return "mitigate first, then attach: keep another fgraph user active "
             "(no shadow-stack walk), or attach on a preemptible kernel or "
             "one with the 1024 batch; as they are, the walk reaches a "
             "soft-lockup or RCU-stall threshold, or half of it";
    default:
      return "hold: inputs are missing (see each host's prediction); fix "
             "what the agent cannot read, then plan again";
  }
}

}  // namespace

absl::Status CheckPlanOptions(const v1::PlanOptions& plan) {
  if (!plan.has_max_latency() ||
      TimeUtil::DurationToNanoseconds(plan.max_latency()) <= 0) {
    return absl::InvalidArgumentError(
        "plan.max_latency: required, must be > 0");
  }
  if (plan.wave_host_ids() > kMaxWaveHostIds) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan.wave_host_ids: at most ", kMaxWaveHostIds, ", got ",
                     plan.wave_host_ids()));
  }
  return absl::OkStatus();
}

v1::PlanClass ClassifyForPlan(v1::Risk risk, double latency_seconds,
                              double max_latency_seconds) {
  if (risk == v1::RISK_UNKNOWN) return v1::PLAN_CLASS_UNKNOWN;
  if (risk >= v1::RISK_WARNING) return v1::PLAN_CLASS_LOCKUP_RISK;
  if (latency_seconds >= max_latency_seconds) return v1::PLAN_CLASS_OVER_BUDGET;
  return v1::PLAN_CLASS_SAFE;
}

PlanBuilder::PlanBuilder(const v1::PlanOptions& options)
    : options_(options),
      max_latency_(static_cast<double>(
                       TimeUtil::DurationToNanoseconds(options.max_latency())) *
                   1e-9) {}

void PlanBuilder::List(Wave& w, double latency, const std::string& host_id) {
  const size_t cap = options_.wave_host_ids();
  if (cap == 0) return;
  if (w.listed.size() < cap) {
    w.listed.push_back({latency, host_id});
    std::push_heap(w.listed.begin(), w.listed.end());
    return;
  }
  // Keep the `cap` smallest: replace the largest when this one is smaller.
  const Listed& top = w.listed.front();
  if (!(latency < top.latency ||
        (latency == top.latency && host_id < top.host_id))) {
    return;
  }
  std::pop_heap(w.listed.begin(), w.listed.end());
  w.listed.back() = {latency, host_id};
  std::push_heap(w.listed.begin(), w.listed.end());
}

v1::PlanClass PlanBuilder::Add(const std::string& host_id, v1::Risk risk,
                               double latency_seconds) {
  const v1::PlanClass c = ClassifyForPlan(risk, latency_seconds, max_latency_);
  Wave& w = waves_[c - 1];
  w.hosts++;
  w.max_latency = std::max(w.max_latency, latency_seconds);
  List(w, latency_seconds, host_id);
  return c;
}

void PlanBuilder::Merge(PlanBuilder&& other) {
  for (size_t i = 0; i < waves_.size(); ++i) {
    Wave& w = waves_[i];
    Wave& o = other.waves_[i];
    w.hosts += o.hosts;
    w.max_latency = std::max(w.max_latency, o.max_latency);
    for (Listed& l : o.listed) List(w, l.latency, l.host_id);
  }
}

v1::RolloutPlan PlanBuilder::Finish() {
  v1::RolloutPlan plan;
  *plan.mutable_max_latency() = options_.max_latency();
  plan.set_safe(waves_[v1::PLAN_CLASS_SAFE - 1].hosts);
  plan.set_over_budget(waves_[v1::PLAN_CLASS_OVER_BUDGET - 1].hosts);
  plan.set_lockup_risk(waves_[v1::PLAN_CLASS_LOCKUP_RISK - 1].hosts);
  plan.set_unknown(waves_[v1::PLAN_CLASS_UNKNOWN - 1].hosts);
  uint32_t number = 0;
  for (v1::PlanClass c : kOrder) {
    Wave& w = waves_[c - 1];
    if (w.hosts == 0) continue;
    v1::PlanWave* out = plan.add_waves();
    out->set_number(++number);
    out->set_plan_class(c);
    out->set_hosts(w.hosts);
    out->set_max_latency_seconds(w.max_latency);
    out->set_action(Action(c, w.max_latency, max_latency_));
    std::sort_heap(w.listed.begin(), w.listed.end());
    for (Listed& l : w.listed) out->add_host_ids(std::move(l.host_id));
    w.listed.clear();
  }
  return plan;
}

}  // namespace tracehealth::server
