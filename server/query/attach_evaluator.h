// AttachEvaluator: one probe kind's attach prediction (the numbers, never
// the explanation) for host after host of a fleet-wide query, computed from
// each host's compact record rather than its report.
//
// Per host: the record's model inputs are written into one scratch snapshot
// (AttachModelInputs::Fill), the query's what-if is applied to it
// (ApplyWhatIf), the kernel features of its (feature table, kernel identity)
// are looked up in a per-evaluator cache (resolved once per distinct pair, not
// once per host), and the attach model runs into a reused prediction. No
// protobuf parsing and, once warm, no allocation per host. The numbers are
// those of PredictAttach on the host's stored snapshot with the same
// what-if (attach_evaluator_test).
//
// Thread safety: not thread-safe; use one evaluator per thread.
#ifndef TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_
#define TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_

#include <memory>
#include <optional>
#include <string>
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
  const KernelFeatures& Features(const FeatureTable* table,
                                 const v1::KernelInfo& kernel);

  const v1::ProbeKind kind_;
  const v1::WhatIf* const what_if_;
  const std::optional<double> budget_;
  v1::HostSnapshot scratch_;
  v1::AttachPrediction out_;
  // Keyed by (table, FeatureKey: release, version, upstream version,
  // architecture).
  absl::flat_hash_map<std::pair<const FeatureTable*, std::string>,
                      std::unique_ptr<KernelFeatures>>
      features_;
  // The last lookup, which most hosts of a fleet repeat.
  const FeatureTable* last_table_ = nullptr;
  std::string last_key_;
  std::string key_;  // scratch
  const KernelFeatures* last_ = nullptr;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_ATTACH_EVALUATOR_H_
