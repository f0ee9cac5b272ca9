#include "server/query/attach_evaluator.h"

#include "common/models/fgraph/fgraph_attach.h"
#include "server/query/what_if.h"

namespace tracehealth::server {

AttachEvaluator::AttachEvaluator(v1::ProbeKind kind, const v1::WhatIf* what_if,
                                 std::optional<double> latency_budget_seconds)
    : kind_(kind), what_if_(what_if), budget_(latency_budget_seconds) {}

ModelOptions AttachEvaluator::Options(const FeatureTable* table,
                                      v1::HostSnapshot* s) const {
  ModelOptions options;
  if (table != nullptr) options.features = table;
  if (what_if_ != nullptr) {
    // The fields the what-if writes besides the inputs (bases, users) are
    // not read by the numbers; they stay as the last host left them.
    ApplyWhatIf(*what_if_, *s, options);
  }
  if (budget_) options.latency_budget_seconds = budget_;
  return options;
}

AttachEvaluator::Group& AttachEvaluator::GroupOf(const HostRecord& record,
                                                 const FeatureTable* table) {
  const std::pair<const FeatureTable*, const KernelIdentity*> key{
      table, record.inputs.identity.get()};
  if (last_ != nullptr && key == last_key_) return *last_;
  auto it = groups_.find(key);
  if (it == groups_.end()) {
    if (groups_.size() >= kMaxGroups) groups_.clear();
    auto g = std::make_unique<Group>();
    // The identity's strings, once; the features from them as the what-if
    // leaves them (it may replace the release), once.
    record.inputs.Fill(&g->scratch);
    const ModelOptions options = Options(table, &g->scratch);
    g->features = ResolveKernelFeatures(g->scratch.kernel(), options);
    it = groups_.emplace(key, std::move(g)).first;
  }
  last_key_ = key;
  last_ = it->second.get();
  return *last_;
}

const v1::AttachPrediction& AttachEvaluator::Predict(const HostRecord& record) {
  const FeatureTable* table = record.features.get();
  Group& g = GroupOf(record, table);
  record.inputs.FillNumbers(&g.scratch);
  const ModelOptions options = Options(table, &g.scratch);
  PredictFgraphAttach(g.scratch, kind_, options,
                      MakeAttachContext(g.scratch, options, g.features), &out_);
  return out_;
}

}  // namespace tracehealth::server
