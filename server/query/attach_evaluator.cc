#include "server/query/attach_evaluator.h"

#include "common/models/fgraph/fgraph_attach.h"
#include "server/query/what_if.h"

namespace tracehealth::server {
namespace {

// What ResolveKernelFeatures reads of the kernel: the release (marked when
// absent: no release string starts with a NUL), version, upstream version
// and architecture, NUL-separated.
void FeatureKey(const v1::KernelInfo& k, std::string* key) {
  key->clear();
  if (k.has_release()) {
    key->append(k.release());
  } else {
    key->push_back('\0');
  }
  key->push_back('\0');
  key->append(k.version());
  key->push_back('\0');
  key->append(k.upstream_version());
  key->push_back('\0');
  key->append(k.arch());
}

}  // namespace

AttachEvaluator::AttachEvaluator(v1::ProbeKind kind, const v1::WhatIf* what_if,
                                 std::optional<double> latency_budget_seconds)
    : kind_(kind), what_if_(what_if), budget_(latency_budget_seconds) {}

const KernelFeatures& AttachEvaluator::Features(const FeatureTable* table,
                                                const v1::KernelInfo& kernel) {
  FeatureKey(kernel, &key_);
  if (last_ != nullptr && last_table_ == table && last_key_ == key_) {
    return *last_;
  }
  auto key = std::make_pair(table, key_);
  auto it = features_.find(key);
  if (it == features_.end()) {
    it =
        features_
            .emplace(std::move(key), std::make_unique<KernelFeatures>(
                                         ResolveKernelFeatures(kernel, *table)))
            .first;
  }
  last_table_ = table;
  last_key_ = key_;
  last_ = it->second.get();
  return *last_;
}

const v1::AttachPrediction& AttachEvaluator::Predict(const HostRecord& record) {
  record.inputs.Fill(&scratch_);
  ModelOptions options;
  if (record.features != nullptr) options.features = record.features.get();
  if (what_if_ != nullptr) {
    // The fields the what-if writes besides the inputs (bases, users) are
    // not read by the numbers; they stay as the last host left them.
    ApplyWhatIf(*what_if_, scratch_, options);
  }
  if (budget_) options.latency_budget_seconds = budget_;
  const KernelFeatures& features =
      Features(options.features, scratch_.kernel());
  PredictFgraphAttach(scratch_, kind_, options,
                      MakeAttachContext(scratch_, options, features), &out_);
  return out_;
}

}  // namespace tracehealth::server
