// QueryService::DoGetHostHistory: a host's stored reports over a window,
// as points for charts.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "google/protobuf/util/time_util.h"
#include "server/query/query_service.h"

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
  absl::StatusOr<HistoryRows> rows =
      options_.store->ReadHostHistory(req.host_id(), from_ns, to_ns, points);
  if (!rows.ok()) {
    return grpc::Status(static_cast<grpc::StatusCode>(rows.status().code()),
                        std::string(rows.status().message()));
  }
  resp->set_host_id(req.host_id());
  resp->set_matched_reports(static_cast<uint32_t>(rows->matched));
  for (const ReportRow& row : rows->rows)
    *resp->add_points() = ToPoint(row, kind);
  return grpc::Status::OK;
}

}  // namespace tracehealth::server
