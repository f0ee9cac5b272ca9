// Helpers the FleetQuery methods share (query_service.cc, predict_attach.cc,
// query_history.cc, query_events.cc, query_accuracy.cc).
#ifndef TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_
#define TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "google/protobuf/timestamp.pb.h"
#include "grpcpp/support/status.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/calibrated_report.h"  // HostModelOptions
#include "server/storage/event_store.h"

namespace tracehealth::server {

inline constexpr uint32_t kDefaultLimit = 100;
inline constexpr uint32_t kMaxLimit = 10000;

inline uint32_t Limit(uint32_t requested) {
  if (requested == 0) return kDefaultLimit;
  return std::min(requested, kMaxLimit);
}

inline v1::ProbeKind KindOrDefault(v1::ProbeKind k) {
  return k == v1::PROBE_KIND_UNSPECIFIED ? v1::PROBE_KIND_KPROBE_MULTI_RETURN
                                         : k;
}

inline grpc::Status ToGrpc(const absl::Status& st) {
  if (st.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(st.code()),
                      std::string(st.message()));
}

// The stored events a ListEvents or Accuracy request selects into `*rows`:
// `f`'s host and prediction filters over [from, to] (to: `now` when null;
// from: the week before `to`), at most `limit` (0: `default_limit`).
// INVALID_ARGUMENT for a limit over 10,000 or from after to; UNAVAILABLE
// without an event store or when it fails. (query_events.cc)
grpc::Status ReadEventWindow(EventStore* store,
                             const google::protobuf::Timestamp* from,
                             const google::protobuf::Timestamp* to,
                             uint32_t limit, uint32_t default_limit,
                             absl::Time now, EventFilter f,
                             std::vector<EventRow>* rows);

// The stored prediction for `kind`, or nullptr.
const v1::AttachPrediction* StoredPrediction(const v1::HostReport& r,
                                             v1::ProbeKind kind);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_
