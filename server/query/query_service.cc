#include "server/query/query_service.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/escape.h"
#include "common/grpc_code_name.h"
#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "common/models/explain.h"
#include "common/proto_time.h"
#include "grpcpp/grpcpp.h"
#include "re2/re2.h"
#include "server/alerts/alert_row.h"
#include "server/index/label_selector.h"
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
// parse), kept in `*table`.
ModelOptions HostModelOptions(const v1::HostReport& r,
                              std::optional<FeatureTable>* table) {
  ModelOptions options;
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
  size_t limit = std::min<size_t>(Limit(req.limit()), rows.size());
  std::partial_sort(rows.begin(), rows.begin() + limit, rows.end(), less);
  for (size_t i = 0; i < limit; ++i) *resp->add_hosts() = std::move(rows[i]);
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
  for (size_t i = 0; i < worst; ++i) *resp->add_worst() = std::move(rows[i]);
  AlertFilter f;
  f.states = {v1::ALERT_STATE_FIRING};
  f.limit = 1000000;
  absl::StatusOr<std::vector<AlertRow>> firing = storage_->ListAlerts(f);
  if (!firing.ok()) return ToGrpc(firing.status());
  resp->set_firing_alerts(static_cast<uint32_t>(firing->size()));
  return grpc::Status::OK;
}

grpc::Status QueryService::AuthorizeClientName(
    grpc::CallbackServerContext* ctx) const {
  std::vector<std::string> names;
  std::shared_ptr<const grpc::AuthContext> auth = ctx->auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const char* prop :
         {"x509_common_name", "x509_subject_alternative_name"}) {
      for (const auto& v : auth->FindPropertyValues(prop)) {
        names.emplace_back(v.data(), v.size());
      }
    }
  }
  for (const std::string& name : names) {
    if (RE2::FullMatch(name, *options_.client_names)) return grpc::Status::OK;
  }
  if (names.empty()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "the query API requires a client certificate whose "
                        "name --query_client_names allows");
  }
  std::vector<std::string> shown;
  for (const std::string& name : names) shown.push_back(EchoText(name));
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat("client certificate (", absl::StrJoin(shown, ", "),
                   ") may not use the query API (--query_client_names)"));
}

grpc::Status QueryService::Authorize(grpc::CallbackServerContext* ctx) const {
  if (options_.client_names != nullptr) {
    grpc::Status st = AuthorizeClientName(ctx);
    if (!st.ok()) return st;
  }
  if (options_.token.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "bearer token required");
  }
  std::string got(it->second.data(), it->second.size());
  std::string want = "Bearer " + options_.token;
  // Constant-time comparison.
  unsigned char diff = got.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < want.size(); ++i) {
    diff |= static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
  }
  if (diff != 0) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "invalid bearer token");
  }
  return grpc::Status::OK;
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* QueryService::Handle(
    grpc::CallbackServerContext* ctx, const char* name,
    const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
    grpc::Status (QueryService::*method)(const Request&, Response*) const) {
  absl::Time start = absl::Now();
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  grpc::Status st = Authorize(ctx);
  Request req;
  if (st.ok()) {
    grpc::ByteBuffer bytes(*in);  // Deserialize consumes its buffer
    if (!grpc::SerializationTraits<Request>::Deserialize(&bytes, &req).ok()) {
      st = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("request does not decode as a ",
                                     Request::descriptor()->full_name(), " (",
                                     in->Length(), " bytes)"));
    }
  }
  if (st.ok()) {
    Response resp;
    st = (this->*method)(req, &resp);
    bool own_buffer = false;
    if (st.ok()) {
      st = grpc::SerializationTraits<Response>::Serialize(resp, out,
                                                          &own_buffer);
    }
  }
  if (metrics_ != nullptr) {
    metrics_->ObserveQuery(name, GrpcCodeName(st.error_code()),
                           absl::ToDoubleSeconds(absl::Now() - start));
  }
  reactor->Finish(st);
  return reactor;
}

grpc::ServerUnaryReactor* QueryService::PredictAttach(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "PredictAttach", req, resp,
                &QueryService::DoPredictAttach);
}

grpc::ServerUnaryReactor* QueryService::GetHost(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "GetHost", req, resp, &QueryService::DoGetHost);
}

grpc::ServerUnaryReactor* QueryService::ListHosts(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "ListHosts", req, resp, &QueryService::DoListHosts);
}

grpc::ServerUnaryReactor* QueryService::ListAlerts(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "ListAlerts", req, resp, &QueryService::DoListAlerts);
}

grpc::ServerUnaryReactor* QueryService::FleetSummary(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "FleetSummary", req, resp, &QueryService::DoFleetSummary);
}

}  // namespace tracehealth::server
