// Helpers the FleetQuery methods share (query_service.cc, predict_attach.cc,
// query_history.cc).
#ifndef TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_
#define TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "grpcpp/support/status.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

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

// The models' options for the host that sent `r`: the feature table its
// agent used (the report's override rows; ingest refused rows that do not
// parse), kept in `*table`.
ModelOptions HostModelOptions(const v1::HostReport& r,
                              std::optional<FeatureTable>* table);

// The stored prediction for `kind`, or nullptr.
const v1::AttachPrediction* StoredPrediction(const v1::HostReport& r,
                                             v1::ProbeKind kind);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_QUERY_UTIL_H_
