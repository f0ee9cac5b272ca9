// QueryService::DoPredictAttach: predictions for many hosts, ranked worst
// first, and rollout plans.
//
// Every matched host is ranked from its compact record: the stored
// prediction's risk and latency when the request changes nothing, else the
// attach model re-run by an AttachEvaluator (one per scan thread). Only the
// hosts returned are then read from the store and explained.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/models/evaluate.h"
#include "common/models/explain.h"
#include "common/proto_time.h"
#include "google/protobuf/util/time_util.h"
#include "server/query/attach_evaluator.h"
#include "server/query/query_service.h"
#include "server/query/query_util.h"
#include "server/query/recommendation.h"
#include "server/query/rollout_plan.h"
#include "server/query/what_if.h"

namespace tracehealth::server {
namespace {

// A host as ranked: worst first by risk, then latency, then host id.
struct Ranked {
  v1::Risk risk;
  double latency;
  std::string host_id;
};

bool WorseThan(v1::Risk risk, double latency, const std::string& host_id,
               const Ranked& b) {
  if (risk != b.risk) return risk > b.risk;
  if (latency != b.latency) return latency > b.latency;
  return host_id < b.host_id;
}

bool Worse(const Ranked& a, const Ranked& b) {
  return WorseThan(a.risk, a.latency, a.host_id, b);
}

// The `limit` worst hosts seen: a heap whose top is the least bad kept.
class Worst {
 public:
  explicit Worst(size_t limit) : limit_(limit) {}

  void Add(v1::Risk risk, double latency, const std::string& host_id) {
    if (limit_ == 0) return;
    if (heap_.size() == limit_) {
      // Only a host worse than the least bad one kept replaces it (no copy
      // of its id otherwise).
      if (!WorseThan(risk, latency, host_id, heap_.front())) return;
      std::pop_heap(heap_.begin(), heap_.end(), Worse);
      heap_.back() = Ranked{risk, latency, host_id};
    } else {
      heap_.push_back(Ranked{risk, latency, host_id});
    }
    std::push_heap(heap_.begin(), heap_.end(), Worse);
  }

  void Merge(Worst&& other) {
    for (Ranked& r : other.heap_) Add(r.risk, r.latency, r.host_id);
  }

  // Worst first.
  std::vector<Ranked> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), Worse);
    return std::move(heap_);
  }

 private:
  const size_t limit_;
  std::vector<Ranked> heap_;
};

// What one scan thread accumulates.
struct Worker {
  Worker(v1::ProbeKind kind, const v1::WhatIf* what_if,
         std::optional<double> budget, size_t limit,
         const v1::PlanOptions* plan)
      : evaluator(kind, what_if, budget), worst(limit) {
    if (plan != nullptr) builder.emplace(*plan);
  }
  AttachEvaluator evaluator;
  Worst worst;
  std::optional<PlanBuilder> builder;
  uint32_t matched = 0;
};

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(
             google::protobuf::util::TimeUtil::DurationToNanoseconds(d)) *
         1e-9;
}

}  // namespace

grpc::Status QueryService::DoPredictAttach(
    const v1::PredictAttachRequest& req,
    v1::PredictAttachResponse* resp) const {
  absl::Status wi = CheckWhatIf(req.what_if());
  if (!wi.ok()) return ToGrpc(wi);
  v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  if (!v1::ProbeKind_IsValid(kind)) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("probe_kind: unknown value ", req.probe_kind()));
  }
  std::optional<double> budget;
  if (req.has_plan()) {
    if (absl::Status p = CheckPlanOptions(req.plan()); !p.ok())
      return ToGrpc(p);
    if (req.what_if().has_latency_budget_seconds()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "what_if.latency_budget_seconds: a plan's budget is "
                          "plan.max_latency; leave it unset");
    }
    budget = Seconds(req.plan().max_latency());
  }
  const v1::WhatIf* changes =
      HasOverrides(req.what_if()) ? &req.what_if() : nullptr;
  // Stored predictions answer unless the request changes the inputs or
  // the budget.
  const bool recompute = changes != nullptr || budget.has_value();
  const size_t limit = Limit(req.limit());
  std::vector<std::unique_ptr<Worker>> workers;
  const int threads =
      req.hosts().host_ids_size() > 0 ? 1 : std::max(1, options_.scan_threads);
  workers.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    workers.push_back(std::make_unique<Worker>(
        kind, changes, budget, limit, req.has_plan() ? &req.plan() : nullptr));
  }
  grpc::Status st = Scan(req.hosts(), resp->mutable_unknown_hosts(), threads,
                         [&](int w, const std::string& id, const HostEntry& e) {
                           Worker& worker = *workers[w];
                           worker.matched++;
                           v1::Risk risk;
                           double latency;
                           // The stored prediction is looked at only when it
                           // answers: a re-run does not read it (nor wait for
                           // its memory).
                           const StoredAttach* stored =
                               recompute ? nullptr : e.record.Attach(kind);
                           if (stored != nullptr && e.record.current_model) {
                             risk = stored->risk;
                             latency = stored->latency_seconds;
                           } else {
                             const v1::AttachPrediction& p =
                                 worker.evaluator.Predict(e.record);
                             risk = p.risk();
                             latency = p.latency_seconds();
                           }
                           if (worker.builder)
                             worker.builder->Add(id, risk, latency);
                           worker.worst.Add(risk, latency, id);
                         });
  if (!st.ok()) return st;
  Worker& all = *workers[0];
  for (size_t i = 1; i < workers.size(); ++i) {
    all.matched += workers[i]->matched;
    all.worst.Merge(std::move(workers[i]->worst));
    if (all.builder) all.builder->Merge(std::move(*workers[i]->builder));
  }
  resp->set_matched_hosts(all.matched);
  if (all.builder) *resp->mutable_plan() = all.builder->Finish();
  const absl::Time now = options_.now();
  for (const Ranked& r : all.worst.Take()) {
    Answer(r.host_id, req, budget, now, resp->add_answers());
  }
  return grpc::Status::OK;
}

void QueryService::Answer(const std::string& host_id,
                          const v1::PredictAttachRequest& req,
                          std::optional<double> budget, absl::Time now,
                          v1::HostAttachAnswer* a) const {
  const v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  const v1::WhatIf* changes =
      HasOverrides(req.what_if()) ? &req.what_if() : nullptr;
  a->set_host_id(host_id);
  std::optional<HostEntry> e = index_->Get(host_id);
  if (!e.has_value()) return;  // hosts are never dropped from the index
  v1::AttachPrediction* p = a->mutable_prediction();
  absl::StatusOr<v1::HostReport> report = ReadReport(host_id, e->record.seq);
  if (report.ok()) {
    // Explained from the inputs the numbers come from: the stored snapshot,
    // changed by the what-if.
    std::optional<FeatureTable> table;
    ModelOptions options = HostModelOptions(*report, &table);
    v1::HostSnapshot what_if_snapshot;
    const v1::HostSnapshot* snapshot = &report->snapshot();
    if (changes != nullptr) {
      what_if_snapshot = report->snapshot();
      ApplyWhatIf(*changes, what_if_snapshot, options);
      snapshot = &what_if_snapshot;
    }
    if (budget) options.latency_budget_seconds = budget;
    const v1::AttachPrediction* stored = StoredPrediction(*report, kind);
    if (changes == nullptr && !budget && stored != nullptr &&
        report->model_version() == kModelVersion) {
      *p = *stored;
    } else {
      *p = ::tracehealth::PredictAttach(*snapshot, kind, options);
    }
    ExplainAttach(*snapshot, options, p);
  } else {
    // The store cannot give the report (none configured, or it failed):
    // the numbers from the record, without their explanation.
    AttachEvaluator evaluator(kind, changes, budget);
    *p = evaluator.Predict(e->record);
  }
  a->set_recommendation(Recommend(*p));
  if (e->record.has_observed_at) {
    a->mutable_observed_at()->set_seconds(e->record.observed_at_seconds);
    a->mutable_observed_at()->set_nanos(e->record.observed_at_nanos);
  }
  *a->mutable_data_age() = ToProto(now - FromProto(a->observed_at()));
  a->set_stale(IsStale(*e, now));
  if (budget) {
    a->set_plan_class(
        ClassifyForPlan(p->risk(), p->latency_seconds(), *budget));
  }
}

}  // namespace tracehealth::server
