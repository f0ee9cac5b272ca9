#include "server/query/query_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "common/models/calibrated_constants.h"
#include "common/models/explain.h"
#include "common/models/model_options.h"
#include "common/proto_time.h"
#include "grpcpp/grpcpp.h"
#include "server/alerts/alert_row.h"
#include "server/calibration/calibrated_report.h"
#include "server/index/label_selector.h"
#include "server/query/margins.h"
#include "server/query/query_util.h"

namespace tracehealth::server {

const v1::AttachPrediction* StoredPrediction(const v1::HostReport& r,
                                             v1::ProbeKind kind) {
  for (const auto& a : r.predictions().attach()) {
    if (a.probe_kind() == kind) return &a;
  }
  return nullptr;
}

namespace {

// Sort keys of one ListHosts / FleetSummary row; the summary itself is
// built only for the rows returned.
struct Row {
  std::string host_id;
  v1::Risk worst_risk = v1::RISK_UNKNOWN;
  double attach_latency = 0;
  std::optional<double> worst_margin;
  uint64_t threads = 0;
  int64_t last_seen_seconds = 0;
};

using RowLess = std::function<bool(const Row&, const Row&)>;

bool WorseFirst(const Row& a, const Row& b) {
  if (a.worst_risk != b.worst_risk) return a.worst_risk > b.worst_risk;
  if (a.attach_latency != b.attach_latency)
    return a.attach_latency > b.attach_latency;
  return a.host_id < b.host_id;
}

RowLess SortOf(v1::HostSort sort) {
  switch (sort) {
    case v1::HOST_SORT_HOST_ID:
      return [](const Row& a, const Row& b) { return a.host_id < b.host_id; };
    case v1::HOST_SORT_LAST_SEEN:
      return [](const Row& a, const Row& b) {
        if (a.last_seen_seconds != b.last_seen_seconds)
          return a.last_seen_seconds > b.last_seen_seconds;
        return a.host_id < b.host_id;
      };
    case v1::HOST_SORT_ATTACH_LATENCY:
      return [](const Row& a, const Row& b) {
        if (a.attach_latency != b.attach_latency)
          return a.attach_latency > b.attach_latency;
        return a.host_id < b.host_id;
      };
    case v1::HOST_SORT_MARGIN:
      return [](const Row& a, const Row& b) {
        if (a.worst_margin.has_value() != b.worst_margin.has_value())
          return a.worst_margin.has_value();
        if (a.worst_margin != b.worst_margin)
          return *a.worst_margin > *b.worst_margin;
        return a.host_id < b.host_id;
      };
    case v1::HOST_SORT_THREADS:
      return [](const Row& a, const Row& b) {
        if (a.threads != b.threads) return a.threads > b.threads;
        return a.host_id < b.host_id;
      };
    default:
      return WorseFirst;
  }
}

Row MakeRow(const std::string& id, const HostEntry& e, v1::ProbeKind kind) {
  Row r;
  r.host_id = id;
  r.worst_risk = e.record.worst_risk;
  if (const StoredAttach* a = e.record.Attach(kind))
    r.attach_latency = a->latency_seconds;
  r.worst_margin = e.record.worst_margin;
  r.threads = e.record.threads().value_or(0);
  r.last_seen_seconds = absl::ToUnixSeconds(e.last_seen);
  return r;
}

}  // namespace

QueryService::QueryService(const HostIndex* index, AlertStore* storage,
                           ServerMetrics* metrics, QueryOptions options)
    : index_(index),
      storage_(storage),
      metrics_(metrics),
      options_(std::move(options)) {
  if (options_.scan_threads > 1) {
    pool_ = std::make_unique<ScanPool>(options_.scan_threads - 1);
  }
}

bool QueryService::IsStale(const HostEntry& e, absl::Time now) const {
  double interval = e.record.interval_seconds;
  absl::Duration iv =
      interval > 0 ? absl::Seconds(interval) : options_.default_interval;
  return now - e.last_seen > iv * options_.stale_after_intervals;
}

grpc::Status QueryService::Scan(
    const v1::HostSelector& sel,
    google::protobuf::RepeatedPtrField<std::string>* unknown, int workers,
    const HostFn& fn) const {
  absl::StatusOr<LabelSelector> ls = LabelSelector::Parse(sel.labels());
  if (!ls.ok()) return ToGrpc(ls.status());
  if (sel.host_ids_size() > 0) {
    absl::flat_hash_set<std::string> seen;
    for (const std::string& id : sel.host_ids()) {
      if (!seen.insert(id).second) continue;
      const bool known = index_->Visit(id, [&](const HostEntry& e) {
        if (ls->Matches(e.record.labels)) fn(0, id, e);
      });
      if (!known && unknown != nullptr) *unknown->Add() = id;
    }
    return grpc::Status::OK;
  }
  auto shard = [&](int worker, int s) {
    index_->ForEachInShard(s, [&](const std::string& id, const HostEntry& e) {
      if (ls->empty() || ls->Matches(e.record.labels)) fn(worker, id, e);
    });
  };
  workers = std::clamp(workers, 1, HostIndex::kShards);
  if (pool_ == nullptr) workers = 1;
  auto part = [&](int w) {
    for (int s = w; s < HostIndex::kShards; s += workers) shard(w, s);
  };
  if (workers == 1) {
    part(0);
  } else {
    pool_->Run(workers, part);
  }
  return grpc::Status::OK;
}

absl::StatusOr<v1::HostReport> QueryService::ReadReport(
    const std::string& host_id, uint64_t seq) const {
  if (options_.store == nullptr) {
    return absl::UnavailableError("no report store on this server");
  }
  absl::StatusOr<std::string> blob = options_.store->GetReport(host_id, seq);
  if (!blob.ok()) return blob.status();
  auto r = std::make_shared<v1::HostReport>();
  if (!r->ParseFromString(*blob)) {
    return absl::DataLossError(
        absl::StrCat("stored report ", host_id, "/", seq, " does not parse"));
  }
  // As the index's record shows it: priced with its class's calibration
  // when it has none of its own (server/calibration/calibrated_report.h).
  std::shared_ptr<const v1::HostReport> shown =
      WithClassCalibration(r, options_.classes);
  if (shown == r) return std::move(*r);
  return *shown;
}

v1::HostSummary QueryService::Summarize(const std::string& host_id,
                                        const HostEntry& e, v1::ProbeKind kind,
                                        absl::Time now) const {
  v1::HostSummary s;
  const HostRecord& r = e.record;
  s.set_host_id(host_id);
  r.labels.ToProto(s.mutable_labels());
  *s.mutable_last_seen() = ToProto(e.last_seen);
  s.set_stale(IsStale(e, now));
  s.set_worst_risk(r.worst_risk);
  if (r.has_release()) s.set_kernel_release(r.inputs.release());
  if (std::optional<uint64_t> t = r.threads()) s.set_threads(*t);
  if (const StoredAttach* a = r.Attach(kind)) {
    s.set_attach_latency_seconds(a->latency_seconds);
    s.set_attach_risk(a->risk);
  }
  if (r.pool_budget_ratio) s.set_pool_budget_ratio(*r.pool_budget_ratio);
  s.set_purge_seconds(r.purge_seconds);
  if (r.worst_margin) s.set_worst_margin(*r.worst_margin);
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
  absl::StatusOr<v1::HostReport> report =
      ReadReport(req.host_id(), e->record.seq);
  if (!report.ok()) return ToGrpc(report.status());
  resp->set_host_id(req.host_id());
  *resp->mutable_labels() = report->labels();
  *resp->mutable_first_seen() = ToProto(e->first_seen);
  *resp->mutable_last_seen() = ToProto(e->last_seen);
  resp->set_reports(e->reports);
  resp->set_stale(IsStale(*e, options_.now()));
  *resp->mutable_latest() = *std::move(report);
  std::optional<FeatureTable> table;
  const ModelOptions options = HostModelOptions(resp->latest(), &table);
  resp->set_constants_origin(OriginToProto(OriginOf(options)));
  ExplainPredictions(resp->latest().snapshot(), options,
                     resp->mutable_latest()->mutable_predictions());
  return grpc::Status::OK;
}

grpc::Status QueryService::DoListHosts(const v1::ListHostsRequest& req,
                                       v1::ListHostsResponse* resp) const {
  const absl::Time now = options_.now();
  const v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  std::vector<Row> rows;
  grpc::Status st = Scan(
      req.hosts(), nullptr, 1,
      [&](int, const std::string& id, const HostEntry& e) {
        if (e.record.worst_risk < req.min_risk()) return;
        if (!req.kernel_prefix().empty() &&
            !absl::StartsWith(e.record.inputs.release(), req.kernel_prefix())) {
          return;
        }
        if (req.has_stale() && IsStale(e, now) != req.stale()) return;
        rows.push_back(MakeRow(id, e, kind));
      });
  if (!st.ok()) return st;
  resp->set_matched_hosts(static_cast<uint32_t>(rows.size()));
  RowLess less = SortOf(req.sort());
  if (req.reverse()) {
    less = [forward = std::move(less)](const Row& a, const Row& b) {
      return forward(b, a);
    };
  }
  const size_t first = std::min<size_t>(req.offset(), rows.size());
  const size_t end = std::min<size_t>(first + Limit(req.limit()), rows.size());
  std::partial_sort(rows.begin(), rows.begin() + end, rows.end(), less);
  for (size_t i = first; i < end; ++i) {
    index_->Visit(rows[i].host_id, [&](const HostEntry& e) {
      *resp->add_hosts() = Summarize(rows[i].host_id, e, kind, now);
    });
  }
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
  const absl::Time now = options_.now();
  const v1::ProbeKind kind = KindOrDefault(req.probe_kind());
  std::map<int, uint32_t> by_risk;
  std::vector<Row> rows;
  uint32_t stale = 0;
  grpc::Status st = Scan(req.hosts(), nullptr, 1,
                         [&](int, const std::string& id, const HostEntry& e) {
                           by_risk[e.record.worst_risk]++;
                           if (IsStale(e, now)) stale++;
                           rows.push_back(MakeRow(id, e, kind));
                         });
  if (!st.ok()) return st;
  resp->set_hosts(static_cast<uint32_t>(rows.size()));
  resp->set_stale_hosts(stale);
  for (int r = v1::RISK_STALL; r >= v1::RISK_UNKNOWN; --r) {
    v1::RiskCount* c = resp->add_by_risk();
    c->set_risk(static_cast<v1::Risk>(r));
    c->set_hosts(by_risk[r]);
  }
  size_t worst = std::min<size_t>(
      req.worst() == 0 ? 10 : std::min(req.worst(), kMaxLimit), rows.size());
  std::partial_sort(rows.begin(), rows.begin() + worst, rows.end(), WorseFirst);
  for (size_t i = 0; i < worst; ++i) {
    index_->Visit(rows[i].host_id, [&](const HostEntry& e) {
      *resp->add_worst() = Summarize(rows[i].host_id, e, kind, now);
    });
  }
  if (req.strip_cells() > 0) {
    std::vector<MarginHost> strip;
    strip.reserve(rows.size());
    for (Row& r : rows)
      strip.push_back({std::move(r.host_id), r.worst_margin, r.worst_risk});
    for (v1::MarginCell& cell : MarginStrip(
             std::move(strip), std::min(req.strip_cells(), kMaxLimit))) {
      *resp->add_margin_strip() = std::move(cell);
    }
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
