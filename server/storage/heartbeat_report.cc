#include "server/storage/heartbeat_report.h"

#include "absl/status/status.h"
#include "google/protobuf/util/time_util.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

void PutBeat(const Beat& beat, v1::HostReport* report) {
  report->clear_heartbeat();
  report->set_seq(beat.seq);
  *report->mutable_observed_at() =
      google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
          beat.observed_at_ns);
  if (beat.threads.has_value()) {
    report->mutable_snapshot()->mutable_threads()->set_total(*beat.threads);
  } else if (report->snapshot().has_threads()) {
    report->mutable_snapshot()->mutable_threads()->clear_total();
  }
  v1::Predictions& p = *report->mutable_predictions();
  // Every attach prediction names the threads it was made for: the
  // heartbeat's (its other numbers are the full report's, within the
  // tolerance).
  if (beat.threads.has_value()) {
    for (v1::AttachPrediction& a : *p.mutable_attach()) {
      a.set_threads_total(*beat.threads);
    }
  }
  if (beat.attach_latency_seconds.has_value()) {
    for (v1::AttachPrediction& a : *p.mutable_attach()) {
      if (a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN)
        a.set_latency_seconds(*beat.attach_latency_seconds);
    }
  }
  if (beat.pool_budget_ratio.has_value() && p.has_stack_depot()) {
    p.mutable_stack_depot()->set_budget_ratio(*beat.pool_budget_ratio);
  }
  if (beat.purge_seconds.has_value() && p.has_vmap_purge()) {
    p.mutable_vmap_purge()->set_purge_seconds(*beat.purge_seconds);
  }
}

absl::StatusOr<std::string> ReportOfHeartbeat(absl::string_view full_report,
                                              const Beat& beat) {
  v1::HostReport r;
  if (!r.ParseFromArray(full_report.data(),
                        static_cast<int>(full_report.size()))) {
    return absl::DataLossError("stored report does not parse");
  }
  PutBeat(beat, &r);
  return r.SerializeAsString();
}

}  // namespace tracehealth::server
