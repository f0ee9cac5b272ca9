#include "server/query/query_service.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "common/models/explain.h"
#include "common/proto_time.h"
#include "grpcpp/grpcpp.h"
#include "server/alerts/alert_row.h"
#include "server/calibration/calibrated_report.h"
#include "server/index/label_selector.h"
#include "server/query/margins.h"
#include "server/query/recommendation.h"
#include "server/query/what_if.h"

namespace tracehealth::server {
namespace {

constexpr uint32_t kDefaultLimit = 100;
constexpr uint32_t kMaxLimit = 10000;

uint32_t Limit(uint32_t requested) {
  if (requested == 0) return kDefaultLimit;
  return std::min(requested, kMaxLimit);
}

v1::ProbeKind KindOrDefault(v1::ProbeKind k) {
  return k == v1::PROBE_KIND_UNSPECIFIED ? v1::PROBE_KIND_KPROBE_MULTI_RETURN
                                         : k;
}

grpc::Status ToGrpc(const absl::Status& st) {
  if (st.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(st.code()),
                      std::string(st.message()));
}

// The models' options for the host that sent `r`: the feature table its
// agent used (the report's override rows; ingest refused rows that do not
// parse), kept in `*table`, and the calibrated constants its predictions
// use (its own, or its class's: server/calibration/calibrated_report.h).
ModelOptions HostModelOptions(const v1::HostReport& r,
                              std::optional<FeatureTable>* table) {
  ModelOptions options;
  options.calibration = ReportCalibration(r);
  if (!r.has_feature_table_override()) return options;
  absl::StatusOr<FeatureTable> t =
      FeatureTableFromOverride(r.feature_table_override());
  if (t.ok()) {
    table->emplace(*std::move(t));
    options.features = &**table;
  }
  return options;
}

// The snapshot and options a host's attach prediction is computed (and
// explained) with: the stored ones, changed by the what-if. Points into
// itself: neither copied nor moved.
struct HostInputs {
  HostInputs() = default;
  HostInputs(const HostInputs&) = delete;
  HostInputs& operator=(const HostInputs&) = delete;

  v1::HostSnapshot what_if_snapshot;
  const v1::HostSnapshot* snapshot = nullptr;
  std::optional<FeatureTable> table;
  ModelOptions options;
};

void MakeHostInputs(const v1::HostReport& r, const v1::WhatIf* what_if,
                    HostInputs* in) {
  in->options = HostModelOptions(r, &in->table);
  in->snapshot = &r.snapshot();
  if (what_if == nullptr) return;
  in->what_if_snapshot = r.snapshot();
  ApplyWhatIf(*what_if, in->what_if_snapshot, in->options);
  in->snapshot = &in->what_if_snapshot;
}

// The stored prediction for `kind`, or nullptr.
const v1::AttachPrediction* StoredAttach(const v1::HostReport& r,
                                         v1::ProbeKind kind) {
  for (const auto& a : r.predictions().attach()) {
    if (a.probe_kind() == kind) return &a;
  }
  return nullptr;
}

// The hosts a selector covers: explicit ids (unknown ones listed) or label
// matches.
grpc::Status Resolve(const HostIndex& index, const v1::HostSelector& sel,
                     std::vector<HostEntry>* hosts,
                     google::protobuf::RepeatedPtrField<std::string>* unknown) {
  if (sel.host_ids_size() > 0) {
    absl::flat_hash_set<std::string> seen;
    for (const std::string& id : sel.host_ids()) {
      if (!seen.insert(id).second) continue;
      std::optional<HostEntry> e = index.Get(id);
      if (e.has_value()) {
        hosts->push_back(std::move(*e));
      } else if (unknown != nullptr) {
        *unknown->Add() = id;
      }
    }
    if (!sel.labels().empty()) {
      absl::StatusOr<LabelSelector> ls = LabelSelector::Parse(sel.labels());
      if (!ls.ok()) return ToGrpc(ls.status());
      hosts->erase(std::remove_if(hosts->begin(), hosts->end(),
                                  [&](const HostEntry& e) {
                                    return !ls->Matches(e.latest->labels());
                                  }),
                   hosts->end());
    }
    return grpc::Status::OK;
  }
  absl::StatusOr<LabelSelector> ls = LabelSelector::Parse(sel.labels());
  if (!ls.ok()) return ToGrpc(ls.status());
  *hosts = index.Select(*ls);
  return grpc::Status::OK;
}

}  // namespace

QueryService::QueryService(const HostIndex* index, AlertStore* storage,
                           ServerMetrics* metrics, QueryOptions options)
    : index_(index),
      storage_(storage),
      metrics_(metrics),
      options_(std::move(options)) {}

bool QueryService::IsStale(const HostEntry& e, absl::Time now) const {
  double interval = e.latest->interval_seconds();
  absl::Duration iv =
      interval > 0 ? absl::Seconds(interval) : options_.default_interval;
  return now - e.last_seen > iv * options_.stale_after_intervals;
}

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
  std::vector<HostEntry> hosts;
  grpc::Status st =
      Resolve(*index_, req.hosts(), &hosts, resp->mutable_unknown_hosts());
  if (!st.ok()) return st;
  resp->set_matched_hosts(static_cast<uint32_t>(hosts.size()));
  const bool what_if = HasOverrides(req.what_if());
  const absl::Time now = options_.now();
  // Rank first on the predictions (stored ones are not copied), then build
  // answers only for the hosts returned.
  const v1::WhatIf* changes = what_if ? &req.what_if() : nullptr;
  std::vector<v1::AttachPrediction> computed;
  computed.reserve(what_if ? hosts.size() : 0);
  std::vector<const v1::AttachPrediction*> preds(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostEntry& e = hosts[i];
    const v1::AttachPrediction* stored = StoredAttach(*e.latest, kind);
    if (!what_if && stored != nullptr &&
        e.latest->model_version() == kModelVersion) {
      preds[i] = stored;
      continue;
    }
    HostInputs in;
    MakeHostInputs(*e.latest, changes, &in);
    computed.push_back(
        ::tracehealth::PredictAttach(*in.snapshot, kind, in.options));
    preds[i] = nullptr;  // filled below: `computed` may still reallocate
  }
  for (size_t i = 0, c = 0; i < hosts.size(); ++i) {
    if (preds[i] == nullptr) preds[i] = &computed[c++];
  }
  std::vector<size_t> order(hosts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Worst first: risk, then latency, then host id.
  auto worse = [&](size_t x, size_t y) {
    if (preds[x]->risk() != preds[y]->risk())
      return preds[x]->risk() > preds[y]->risk();
    if (preds[x]->latency_seconds() != preds[y]->latency_seconds()) {
      return preds[x]->latency_seconds() > preds[y]->latency_seconds();
    }
    return hosts[x].host_id < hosts[y].host_id;
  };
  size_t limit = std::min<size_t>(Limit(req.limit()), order.size());
  std::partial_sort(order.begin(), order.begin() + limit, order.end(), worse);
  for (size_t k = 0; k < limit; ++k) {
    const HostEntry& e = hosts[order[k]];
    v1::HostAttachAnswer* a = resp->add_answers();
    a->set_host_id(e.host_id);
    *a->mutable_prediction() = *preds[order[k]];
    // Predictions are explained here, for the answers returned only, from
    // the inputs they were computed from.
    HostInputs in;
    MakeHostInputs(*e.latest, changes, &in);
    ExplainAttach(*in.snapshot, in.options, a->mutable_prediction());
    a->set_recommendation(Recommend(a->prediction()));
    *a->mutable_observed_at() = e.latest->observed_at();
    *a->mutable_data_age() = ToProto(now - FromProto(e.latest->observed_at()));
    a->set_stale(IsStale(e, now));
  }
  return grpc::Status::OK;
}

v1::HostSummary QueryService::Summarize(const HostEntry& e, v1::ProbeKind kind,
                                        absl::Time now) const {
  v1::HostSummary s;
  const v1::HostReport& r = *e.latest;
  s.set_host_id(e.host_id);
  *s.mutable_labels() = r.labels();
  *s.mutable_last_seen() = ToProto(e.last_seen);
  s.set_stale(IsStale(e, now));
  s.set_worst_risk(r.predictions().worst_risk());
  if (r.snapshot().kernel().has_release()) {
    s.set_kernel_release(r.snapshot().kernel().release());
  }
  if (r.snapshot().threads().has_total())
    s.set_threads(r.snapshot().threads().total());
  if (const v1::AttachPrediction* a = StoredAttach(r, kind)) {
    s.set_attach_latency_seconds(a->latency_seconds());
    s.set_attach_risk(a->risk());
  }
  if (r.predictions().stack_depot().has_budget_ratio()) {
    s.set_pool_budget_ratio(r.predictions().stack_depot().budget_ratio());
  }
  s.set_purge_seconds(r.predictions().vmap_purge().purge_seconds());
  if (std::optional<double> m = WorstMargin(r.predictions()))
    s.set_worst_margin(*m);
  return s;
}

grpc::Status QueryService::DoGetHost(const v1::GetHostRequest& req,
                                     v1::HostState* resp) const {
  if (req.host_id().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "host_id: required");
  }
  std::optional<HostEntry> e = index_->Get(req.host_id());
  if (!e.has_value()) {
    return grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        absl::StrCat("unknown host \"", EchoText(req.host_id()), "\""));
  }
  resp->set_host_id(e->host_id);
  *resp->mutable_labels() = e->latest->labels();
  *resp->mutable_first_seen() = ToProto(e->first_seen);
  *resp->mutable_last_seen() = ToProto(e->last_seen);
  resp->set_reports(e->reports);
  resp->set_stale(IsStale(*e, options_.now()));
  *resp->mutable_latest() = *e->latest;
  std::optional<FeatureTable> table;
  ExplainPredictions(resp->latest().snapshot(),
                     HostModelOptions(resp->latest(), &table),
                     resp->mutable_latest()->mutable_predictions());
  return grpc::Status::OK;
}

grpc::Status QueryService::DoListHosts(const v1::ListHostsRequest& req,
                                       v1::ListHostsResponse* resp) const {
  std::vector<HostEntry> hosts;
  grpc::Status st = Resolve(*index_, req.hosts(), &hosts, nullptr);
  if (!st.ok()) return st;
  const absl::Time now = options_.now();
  const v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  std::vector<v1::HostSummary> rows;
  for (const HostEntry& e : hosts) {
    if (e.latest->predictions().worst_risk() < req.min_risk()) continue;
    if (!req.kernel_prefix().empty() &&
        !absl::StartsWith(e.latest->snapshot().kernel().release(),
                          req.kernel_prefix())) {
      continue;
    }
    if (req.has_stale() && IsStale(e, now) != req.stale()) continue;
    rows.push_back(Summarize(e, kind, now));
  }
  resp->set_matched_hosts(static_cast<uint32_t>(rows.size()));
  std::function<bool(const v1::HostSummary&, const v1::HostSummary&)> less;
  switch (req.sort()) {
    case v1::HOST_SORT_HOST_ID:
      less = [](const auto& a, const auto& b) {
        return a.host_id() < b.host_id();
      };
      break;
    case v1::HOST_SORT_LAST_SEEN:
      less = [](const auto& a, const auto& b) {
        if (a.last_seen().seconds() != b.last_seen().seconds()) {
          return a.last_seen().seconds() > b.last_seen().seconds();
        }
        return a.host_id() < b.host_id();
      };
      break;
    case v1::HOST_SORT_ATTACH_LATENCY:
      less = [](const auto& a, const auto& b) {
        if (a.attach_latency_seconds() != b.attach_latency_seconds()) {
          return a.attach_latency_seconds() > b.attach_latency_seconds();
        }
        return a.host_id() < b.host_id();
      };
      break;
    case v1::HOST_SORT_MARGIN:
      less = [](const auto& a, const auto& b) {
        if (a.has_worst_margin() != b.has_worst_margin())
          return a.has_worst_margin();
        if (a.worst_margin() != b.worst_margin())
          return a.worst_margin() > b.worst_margin();
        return a.host_id() < b.host_id();
      };
      break;
    case v1::HOST_SORT_THREADS:
      less = [](const auto& a, const auto& b) {
        if (a.threads() != b.threads()) return a.threads() > b.threads();
        return a.host_id() < b.host_id();
      };
      break;
    default:
      less = [](const auto& a, const auto& b) {
        if (a.worst_risk() != b.worst_risk())
          return a.worst_risk() > b.worst_risk();
        if (a.attach_latency_seconds() != b.attach_latency_seconds()) {
          return a.attach_latency_seconds() > b.attach_latency_seconds();
        }
        return a.host_id() < b.host_id();
      };
  }
  if (req.reverse()) {
    less = [forward = std::move(less)](const auto& a, const auto& b) {
      return forward(b, a);
    };
  }
  const size_t first = std::min<size_t>(req.offset(), rows.size());
  const size_t end = std::min<size_t>(first + Limit(req.limit()), rows.size());
  std::partial_sort(rows.begin(), rows.begin() + end, rows.end(), less);
  for (size_t i = first; i < end; ++i) *resp->add_hosts() = std::move(rows[i]);
  return grpc::Status::OK;
}

grpc::Status QueryService::DoListAlerts(const v1::ListAlertsRequest& req,
                                        v1::ListAlertsResponse* resp) const {
  AlertFilter f;
  if (req.state() != v1::ALERT_STATE_UNSPECIFIED) f.states = {req.state()};
  f.host_id = req.host_id();
  f.limit = Limit(req.limit());
  absl::StatusOr<std::vector<AlertRow>> rows = storage_->ListAlerts(f);
  if (!rows.ok()) return ToGrpc(rows.status());
  for (const AlertRow& row : *rows) *resp->add_alerts() = FromAlertRow(row);
  return grpc::Status::OK;
}

grpc::Status QueryService::DoFleetSummary(
    const v1::FleetSummaryRequest& req, v1::FleetSummaryResponse* resp) const {
  std::vector<HostEntry> hosts;
  grpc::Status st = Resolve(*index_, req.hosts(), &hosts, nullptr);
  if (!st.ok()) return st;
  const absl::Time now = options_.now();
  const v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  std::map<int, uint32_t> by_risk;
  std::vector<v1::HostSummary> rows;
  rows.reserve(hosts.size());
  uint32_t stale = 0;
  for (const HostEntry& e : hosts) {
    v1::HostSummary s = Summarize(e, kind, now);
    by_risk[s.worst_risk()]++;
    if (s.stale()) stale++;
    rows.push_back(std::move(s));
  }
  resp->set_hosts(static_cast<uint32_t>(hosts.size()));
  resp->set_stale_hosts(stale);
  for (int r = v1::RISK_STALL; r >= v1::RISK_UNKNOWN; --r) {
    v1::RiskCount* c = resp->add_by_risk();
    c->set_risk(static_cast<v1::Risk>(r));
    c->set_hosts(by_risk[r]);
  }
  size_t worst = std::min<size_t>(
      req.worst() == 0 ? 10 : std::min(req.worst(), kMaxLimit), rows.size());
  std::partial_sort(
      rows.begin(), rows.begin() + worst, rows.end(),
      [](const auto& a, const auto& b) {
        if (a.worst_risk() != b.worst_risk()) {
          return a.worst_risk() > b.worst_risk();
        }
        if (a.attach_latency_seconds() != b.attach_latency_seconds()) {
          return a.attach_latency_seconds() > b.attach_latency_seconds();
        }
        return a.host_id() < b.host_id();
      });
  for (size_t i = 0; i < worst; ++i) *resp->add_worst() = rows[i];
  for (v1::MarginCell& cell :
       MarginStrip(std::move(rows), std::min(req.strip_cells(), kMaxLimit))) {
    *resp->add_margin_strip() = std::move(cell);
  }
  AlertFilter f;
  f.states = {v1::ALERT_STATE_FIRING};
  f.limit = 1000000;
  absl::StatusOr<std::vector<AlertRow>> firing = storage_->ListAlerts(f);
  if (!firing.ok()) return ToGrpc(firing.status());
  resp->set_firing_alerts(static_cast<uint32_t>(firing->size()));
  return grpc::Status::OK;
}

}  // namespace tracehealth::server
