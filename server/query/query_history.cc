// QueryService::DoGetHostHistory: a host's stored reports over a window,
// as points for charts, and before the oldest of them its hourly rollups.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "google/protobuf/util/time_util.h"
#include "server/query/query_service.h"
#include "server/storage/rollup.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr uint32_t kDefaultPoints = 500;
constexpr uint32_t kMaxPoints = 5000;

// The point of one stored row: the row's columns, then what only the report
// holds (threads, the requested probe kind's latency).
v1::HistoryPoint ToPoint(const ReportRow& row, v1::ProbeKind kind) {
  v1::HistoryPoint p;
  *p.mutable_observed_at() =
      TimeUtil::NanosecondsToTimestamp(row.observed_at_ns);
  p.set_seq(row.seq);
  p.set_worst_risk(static_cast<v1::Risk>(row.worst_risk));
  if (row.pool_budget_ratio) p.set_pool_budget_ratio(*row.pool_budget_ratio);
  if (row.purge_seconds) p.set_purge_seconds(*row.purge_seconds);
  v1::HostReport report;
  if (!report.ParseFromString(row.blob)) {
    // Stored rows were checked at ingest; keep what the columns say.
    if (kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN &&
        row.attach_latency_seconds) {
      p.set_attach_latency_seconds(*row.attach_latency_seconds);
    }
    return p;
  }
  // A heartbeat's blob is its full report's: its own threads and
  // kprobe_multi_return latency are the row's (other probe kinds' latencies
  // are the full report's, within the tolerance of common/report/material.h).
  if (row.heartbeat) {
    if (row.threads.has_value()) p.set_threads(*row.threads);
  } else if (report.snapshot().threads().has_total()) {
    p.set_threads(report.snapshot().threads().total());
  }
  for (const v1::AttachPrediction& a : report.predictions().attach()) {
    if (a.probe_kind() == kind)
      p.set_attach_latency_seconds(a.latency_seconds());
  }
  if (row.heartbeat && kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN &&
      row.attach_latency_seconds.has_value()) {
    p.set_attach_latency_seconds(*row.attach_latency_seconds);
  }
  return p;
}

// The point of one hourly rollup (query.proto HistoryPoint, rollup set).
v1::HistoryPoint RollupPoint(const RollupRow& r, v1::ProbeKind kind) {
  v1::HistoryPoint p;
  *p.mutable_observed_at() = TimeUtil::NanosecondsToTimestamp(r.hour_start_ns);
  p.set_seq(r.last_seq);
  p.set_rollup(true);
  p.set_reports(static_cast<uint32_t>(r.reports));
  p.set_worst_risk(static_cast<v1::Risk>(r.last_worst_risk));
  p.set_worst_risk_max(static_cast<v1::Risk>(r.max_worst_risk));
  if (r.threads.last) p.set_threads(*r.threads.last);
  if (r.threads.min) p.set_threads_min(*r.threads.min);
  if (r.threads.max) p.set_threads_max(*r.threads.max);
  if (kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN) {
    const RollupRange<double>& a = r.attach_latency_seconds;
    if (a.last) p.set_attach_latency_seconds(*a.last);
    if (a.min) p.set_attach_latency_seconds_min(*a.min);
    if (a.max) p.set_attach_latency_seconds_max(*a.max);
  }
  const RollupRange<double>& b = r.pool_budget_ratio;
  if (b.last) p.set_pool_budget_ratio(*b.last);
  if (b.min) p.set_pool_budget_ratio_min(*b.min);
  if (b.max) p.set_pool_budget_ratio_max(*b.max);
  const RollupRange<double>& u = r.purge_seconds;
  if (u.last) p.set_purge_seconds(*u.last);
  if (u.min) p.set_purge_seconds_min(*u.min);
  if (u.max) p.set_purge_seconds_max(*u.max);
  return p;
}

grpc::Status ToGrpc(const absl::Status& st) {
  return grpc::Status(static_cast<grpc::StatusCode>(st.code()),
                      std::string(st.message()));
}

}  // namespace

grpc::Status QueryService::DoGetHostHistory(
    const v1::GetHostHistoryRequest& req,
    v1::GetHostHistoryResponse* resp) const {
  if (req.host_id().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "host_id is required");
  }
  const v1::ProbeKind kind = req.probe_kind() == v1::PROBE_KIND_UNSPECIFIED
                                 ? v1::PROBE_KIND_KPROBE_MULTI_RETURN
                                 : req.probe_kind();
  if (!v1::ProbeKind_IsValid(kind)) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("probe_kind: unknown value ", req.probe_kind()));
  }
  if (!index_->Get(req.host_id()).has_value()) {
    return grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        absl::StrCat("unknown host \"", EchoText(req.host_id()), "\""));
  }
  const int64_t to_ns = req.has_to()
                            ? TimeUtil::TimestampToNanoseconds(req.to())
                            : absl::ToUnixNanos(options_.now());
  const int64_t from_ns =
      req.has_from() ? TimeUtil::TimestampToNanoseconds(req.from())
                     : to_ns - absl::ToInt64Nanoseconds(absl::Hours(1));
  if (from_ns > to_ns) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "from is after to");
  }
  if (options_.store == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "no report history on this server");
  }
  const uint32_t points = req.max_points() == 0
                              ? kDefaultPoints
                              : std::min(req.max_points(), kMaxPoints);
  ReportStore& store = *options_.store;
  absl::StatusOr<HistoryRows> rows =
      store.ReadHostHistory(req.host_id(), from_ns, to_ns, points);
  if (!rows.ok()) return ToGrpc(rows.status());
  // Rollups of the hours starting in the window that end at or before its
  // oldest report (the first row: thinning keeps it), all of them when it
  // has none.
  int64_t rollups_to = to_ns;
  if (!rows->rows.empty()) {
    rollups_to =
        std::min(to_ns, rows->rows.front().observed_at_ns - kRollupHourNs + 1);
  }
  std::vector<RollupRow> rollups;
  if (rollups_to > from_ns) {
    absl::StatusOr<std::vector<RollupRow>> r =
        store.ReadHostRollups(req.host_id(), from_ns, rollups_to);
    if (!r.ok()) return ToGrpc(r.status());
    rollups = *std::move(r);
  }
  // Over max_points: rollups get at least half, reports the rest (a second
  // read with fewer rows has the same oldest row).
  size_t rollup_points = rollups.size();
  if (rollups.size() + rows->rows.size() > points) {
    rollup_points =
        std::min(rollups.size(),
                 std::max<size_t>(points / 2, points - rows->rows.size()));
    const size_t report_points = points - rollup_points;
    if (rows->rows.size() > report_points) {
      rows = report_points == 0
                 ? absl::StatusOr<HistoryRows>(HistoryRows{rows->matched, {}})
                 : store.ReadHostHistory(req.host_id(), from_ns, to_ns,
                                         report_points);
      if (!rows.ok()) return ToGrpc(rows.status());
    }
  }
  resp->set_host_id(req.host_id());
  resp->set_matched_reports(static_cast<uint32_t>(rows->matched));
  resp->set_matched_rollups(static_cast<uint32_t>(rollups.size()));
  if (rollup_points > 0) {
    const size_t k = (rollups.size() + rollup_points - 1) / rollup_points;
    for (size_t i = 0; i < rollups.size(); i += k) {
      *resp->add_points() = RollupPoint(rollups[i], kind);
    }
  }
  for (const ReportRow& row : rows->rows)
    *resp->add_points() = ToPoint(row, kind);
  return grpc::Status::OK;
}

}  // namespace tracehealth::server
