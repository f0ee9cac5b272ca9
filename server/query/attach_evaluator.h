// AttachEvaluator: one probe kind's attach prediction (the numbers, never
// the explanation) for host after host of a fleet-wide query, computed from
// each host's compact record rather than its report.
//
// Hosts are grouped by (feature table, kernel identity): the records of a
// group share one KernelIdentity (server/index/kernel_identity.h). Each
// group has its own scratch snapshot, whose identity strings are written
// and whose kernel features are resolved once, after the query's what-if
// (ApplyWhatIf) is applied: the features read only the identity and the
// what-if. Per host, only the record's numbers and flags are written into
// the group's scratch (AttachModelInputs::FillNumbers), the what-if applied
// again over them, and the attach model run into a reused prediction. No
// protobuf parsing, no string copies and, once warm, no allocation per
// host. The numbers are those of PredictAttach on the host's stored
// snapshot with the same what-if (attach_evaluator_test,
// tests/server/record_predictions_test).
//
// Thread safety: not thread-safe; use one evaluator per thread.
#ifndef TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_
#define TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_

#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "common/models/kernel_features.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"
#include "server/index/host_record.h"

namespace tracehealth::server {

class AttachEvaluator {
 public:
  // `what_if` (may be null: none) must have passed CheckWhatIf and outlive
  // the evaluator. `latency_budget_seconds`, when set, replaces the
  // what-if's budget.
  AttachEvaluator(v1::ProbeKind kind, const v1::WhatIf* what_if,
                  std::optional<double> latency_budget_seconds = std::nullopt);
  AttachEvaluator(const AttachEvaluator&) = delete;
  AttachEvaluator& operator=(const AttachEvaluator&) = delete;

  // The prediction for the host of `record`; valid until the next call.
  const v1::AttachPrediction& Predict(const HostRecord& record);

 private:
  // Hosts of one (table, identity).
  struct Group {
    v1::HostSnapshot scratch;
    KernelFeatures features;
  };
  // At most this many groups are kept; then the cache starts over (a fleet
  // of that many distinct kernels and CPUs gains nothing from it).
  static constexpr size_t kMaxGroups = 4096;

  Group& GroupOf(const HostRecord& record, const FeatureTable* table);
  ModelOptions Options(const FeatureTable* table, v1::HostSnapshot* s) const;

  const v1::ProbeKind kind_;
  const v1::WhatIf* const what_if_;
  const std::optional<double> budget_;
  v1::AttachPrediction out_;
  // Keyed by (table, identity): the records hold the identity (and the
  // table) for as long as the query runs under the index's locks.
  absl::flat_hash_map<std::pair<const FeatureTable*, const KernelIdentity*>,
                      std::unique_ptr<Group>>
      groups_;
  // The last lookup, which hosts of a fleet often repeat.
  std::pair<const FeatureTable*, const KernelIdentity*> last_key_{nullptr,
                                                                  nullptr};
  Group* last_ = nullptr;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_
