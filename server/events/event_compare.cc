#include "server/events/event_compare.h"

#include <algorithm>
#include <optional>

namespace tracehealth::server {
namespace {

struct Said {
  v1::Risk risk = v1::RISK_UNKNOWN;
  double latency_seconds = 0;  // the largest over what was compared
  bool any = false;
};

bool Wanted(const v1::ObservedEvent& event, const v1::AttachPrediction& a) {
  if (event.probe_kinds().empty()) return a.uses_fgraph();
  return std::find(event.probe_kinds().begin(), event.probe_kinds().end(),
                   a.probe_kind()) != event.probe_kinds().end();
}

// The worst risk, and the longest latency, over the event's probe kinds.
// RISK_UNKNOWN ranks lowest, so one known risk is enough to compare.
Said FromAttach(const v1::ObservedEvent& event, const v1::Predictions& p) {
  Said said;
  for (const v1::AttachPrediction& a : p.attach()) {
    if (!Wanted(event, a)) continue;
    said.any = true;
    said.risk = std::max(said.risk, a.risk());
    said.latency_seconds = std::max(said.latency_seconds, a.latency_seconds());
  }
  return said;
}

Said FromPurge(const v1::Predictions& p) {
  Said said;
  if (!p.vmap_purge().applies()) return said;
  said.any = true;
  said.risk = p.vmap_purge().risk();
  said.latency_seconds = p.vmap_purge().purge_seconds();
  return said;
}

}  // namespace

EventComparison CompareEvent(const v1::ObservedEvent& event,
                             const v1::HostReport* prediction) {
  EventComparison out;
  if (prediction == nullptr) return out;
  Said said;
  switch (event.model()) {
    case v1::EVENT_MODEL_FGRAPH_ATTACH:
      said = FromAttach(event, prediction->predictions());
      break;
    case v1::EVENT_MODEL_VMAP_PURGE:
      said = FromPurge(prediction->predictions());
      break;
    default:
      return out;
  }
  if (!said.any) return out;
  out.risk = said.risk;
  if (said.risk == v1::RISK_UNKNOWN) return out;
  bool yes = said.risk == v1::RISK_WARNING || said.risk == v1::RISK_STALL;
  if (event.kind() == v1::OBSERVED_EVENT_KIND_HUNG_TASK &&
      event.has_seconds() &&
      said.latency_seconds >= static_cast<double>(event.seconds())) {
    yes = true;
  }
  out.predicted = yes ? v1::EVENT_PREDICTION_YES : v1::EVENT_PREDICTION_NO;
  return out;
}

}  // namespace tracehealth::server
