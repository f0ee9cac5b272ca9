#include "server/report/report_head.h"

#include "common/report/wire_reader.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {
namespace {

using wire::Field;
using wire::ForEachField;
using wire::kFixed64;
using wire::kLengthDelimited;
using wire::kVarint;

bool Is(const Field& f, int number, int wire_type) {
  return f.number == static_cast<uint32_t>(number) && f.wire_type == wire_type;
}

absl::Status DecodeTimestamp(absl::string_view msg, ReportHead& head) {
  head.has_observed_at = true;
  return ForEachField(msg, [&](const Field& f) {
    if (Is(f, 1, kVarint))
      head.observed_at_seconds = static_cast<int64_t>(f.varint);
    if (Is(f, 2, kVarint))
      head.observed_at_nanos = static_cast<int32_t>(f.varint);
    return absl::OkStatus();
  });
}

absl::Status DecodeLabel(absl::string_view msg, ReportHead& head) {
  absl::string_view key, value;
  absl::Status st = ForEachField(msg, [&](const Field& f) {
    if (Is(f, 1, kLengthDelimited)) key = f.bytes;
    if (Is(f, 2, kLengthDelimited)) value = f.bytes;
    return absl::OkStatus();
  });
  if (st.ok()) head.labels.emplace_back(key, value);
  return st;
}

// One AttachPrediction: its latency counts when it is kprobe_multi_return.
absl::Status DecodeAttach(absl::string_view msg, ReportHead& head) {
  using A = v1::AttachPrediction;
  int kind = 0;
  double latency = 0;
  absl::Status st = ForEachField(msg, [&](const Field& f) {
    if (Is(f, A::kProbeKindFieldNumber, kVarint))
      kind = static_cast<int32_t>(f.varint);
    if (Is(f, A::kLatencySecondsFieldNumber, kFixed64)) latency = f.AsDouble();
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  head.attach_kinds.push_back(kind);
  if (kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN) {
    head.attach_latency_seconds = latency;
  }
  return st;
}

// Merged over every occurrence of predictions.vmap_purge.
struct VmapPurge {
  bool applies = false;
  double purge_seconds = 0;
};

absl::Status DecodePredictions(absl::string_view msg, ReportHead& head,
                               VmapPurge& purge) {
  using P = v1::Predictions;
  return ForEachField(msg, [&](const Field& f) -> absl::Status {
    if (Is(f, P::kWorstRiskFieldNumber, kVarint)) {
      head.worst_risk = static_cast<int32_t>(f.varint);
    } else if (Is(f, P::kAttachFieldNumber, kLengthDelimited)) {
      return DecodeAttach(f.bytes, head);
    } else if (Is(f, P::kStackDepotFieldNumber, kLengthDelimited)) {
      return ForEachField(f.bytes, [&](const Field& g) {
        if (Is(g, v1::StackDepotPrediction::kBudgetRatioFieldNumber,
               kFixed64)) {
          head.pool_budget_ratio = g.AsDouble();
        }
        return absl::OkStatus();
      });
    } else if (Is(f, P::kVmapPurgeFieldNumber, kLengthDelimited)) {
      using V = v1::VmapPurgePrediction;
      return ForEachField(f.bytes, [&](const Field& g) {
        if (Is(g, V::kAppliesFieldNumber, kVarint))
          purge.applies = g.varint != 0;
        if (Is(g, V::kPurgeSecondsFieldNumber, kFixed64))
          purge.purge_seconds = g.AsDouble();
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<ReportHead> DecodeReportHead(absl::string_view wire) {
  using R = v1::HostReport;
  ReportHead head;
  VmapPurge purge;
  absl::Status st = ForEachField(wire, [&](const Field& f) -> absl::Status {
    switch (f.number) {
      case R::kHostIdFieldNumber:
        if (f.wire_type == kLengthDelimited) head.host_id = f.bytes;
        break;
      case R::kSeqFieldNumber:
        if (f.wire_type == kVarint) head.seq = f.varint;
        break;
      case R::kObservedAtFieldNumber:
        if (f.wire_type == kLengthDelimited)
          return DecodeTimestamp(f.bytes, head);
        break;
      case R::kIntervalSecondsFieldNumber:
        if (f.wire_type == kFixed64) head.interval_seconds = f.AsDouble();
        break;
      case R::kAgentVersionFieldNumber:
        if (f.wire_type == kLengthDelimited) head.agent_version = f.bytes;
        break;
      case R::kModelVersionFieldNumber:
        if (f.wire_type == kLengthDelimited) head.model_version = f.bytes;
        break;
      case R::kLabelsFieldNumber:
        if (f.wire_type == kLengthDelimited) return DecodeLabel(f.bytes, head);
        break;
      case R::kPredictionsFieldNumber:
        if (f.wire_type == kLengthDelimited)
          return DecodePredictions(f.bytes, head, purge);
        break;
      case R::kFeatureTableOverrideFieldNumber:
        if (f.wire_type == kLengthDelimited)
          head.feature_table_override.push_back(f.bytes);
        break;
      case R::kHeartbeatFieldNumber:
        if (f.wire_type == kLengthDelimited) {
          head.has_heartbeat = true;
          return ForEachField(f.bytes, [&](const Field& g) {
            if (Is(g, v1::HeartbeatForm::kBaseSeqFieldNumber, kVarint))
              head.heartbeat_base_seq = g.varint;
            return absl::OkStatus();
          });
        }
        break;
      default:
        break;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  if (purge.applies) head.purge_seconds = purge.purge_seconds;
  return head;
}

}  // namespace tracehealth::server
