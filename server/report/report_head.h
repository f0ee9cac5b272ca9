// ReportHead: the few fields of a tracehealth.v1.HostReport that ingest
// needs (identity, sequence, time, labels, the stored prediction columns,
// the feature-table override to check and how the report was sent), read
// straight from the wire bytes without parsing the report.
//
// Decoding follows protobuf's rules for these fields: the last value of a
// field wins, repeated occurrences of a sub-message merge, a field with an
// unexpected wire type is skipped as unknown. Fields outside the head are
// skipped without being looked at; CheckReportWire covers them.
#ifndef TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_
#define TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

struct ReportHead {
  // Views into the decoded bytes: valid while they are.
  absl::string_view host_id;
  absl::string_view agent_version;
  absl::string_view model_version;
  // Label entries in wire order (a key may repeat; the last one wins).
  absl::InlinedVector<std::pair<absl::string_view, absl::string_view>, 4>
      labels;
  uint64_t seq = 0;
  bool has_observed_at = false;
  int64_t observed_at_seconds = 0;
  int32_t observed_at_nanos = 0;
  // interval_seconds (0 when absent).
  double interval_seconds = 0;
  // predictions.worst_risk (a tracehealth.v1.Risk value).
  int worst_risk = 0;
  // probe_kind of each predictions.attach entry, in wire order.
  absl::InlinedVector<int, 12> attach_kinds;
  // latency_seconds of the kprobe_multi_return attach prediction.
  std::optional<double> attach_latency_seconds;
  // predictions.stack_depot.budget_ratio, when present.
  std::optional<double> pool_budget_ratio;
  // predictions.vmap_purge.purge_seconds, when the purge model applies.
  std::optional<double> purge_seconds;
  // heartbeat (report.proto HeartbeatForm) is present: sent by an agent
  // that sends heartbeat forms; heartbeat.base_seq > 0: this is one.
  bool has_heartbeat = false;
  uint64_t heartbeat_base_seq = 0;
  // The encoded feature_table_override, one view per occurrence (they merge);
  // empty without one.
  absl::InlinedVector<absl::string_view, 1> feature_table_override;
};

// The head of `wire`; DataLoss when a field it reads (or passes over at
// the top level) is truncated or malformed.
absl::StatusOr<ReportHead> DecodeReportHead(absl::string_view wire);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_
