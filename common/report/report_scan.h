// One walk over the wire bytes of a tracehealth.v1.HostReport, without
// parsing it, that answers the three questions ingest asks of every report
// received:
//
//  - the wire check (CheckReportWire): whether the bytes decode, and whether
//    their numbers, enums and strings are acceptable;
//  - the head (DecodeReportHead): the few fields ingest reads (identity,
//    sequence, time, labels, the stored prediction columns, the
//    feature-table override, how the report was sent);
//  - the material content (MaterialOfWire, material.h): what of the report
//    counts as a change.
//
// ScanReport answers all three in one pass; CheckReportWire,
// DecodeReportHead and MaterialOfWire are the same walk answering one each.
// The walk is driven by tables built once from HostReport's descriptor (one
// per path from the report, so a field knows its place: inside predictions,
// under a moving field, in the head), so every field of the contract is
// covered without a list to maintain.
//
// Thread safety: pure functions (the tables are built once, on first use).
#ifndef TRACEHEALTH_COMMON_REPORT_REPORT_SCAN_H_
#define TRACEHEALTH_COMMON_REPORT_REPORT_SCAN_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/report/material.h"

namespace tracehealth {

struct WireLimits {
  // Entries of any one repeated field (packed or not) in one message.
  int max_repeated = 4096;
};

// The head of a report. Decoding follows protobuf's rules for these fields:
// the last value of a field wins, repeated occurrences of a sub-message
// merge, a field with an unexpected wire type is skipped as unknown.
struct ReportHead {
  // Views into the decoded bytes: valid while they are.
  absl::string_view host_id;
  absl::string_view agent_version;
  absl::string_view model_version;
  // Label entries in wire order (a key may repeat; the last one wins).
  absl::InlinedVector<std::pair<absl::string_view, absl::string_view>, 4>
      labels;
  uint64_t seq = 0;
  bool has_observed_at = false;
  int64_t observed_at_seconds = 0;
  int32_t observed_at_nanos = 0;
  // interval_seconds (0 when absent).
  double interval_seconds = 0;
  // predictions.worst_risk (a tracehealth.v1.Risk value).
  int worst_risk = 0;
  // probe_kind of each predictions.attach entry, in wire order.
  absl::InlinedVector<int, 12> attach_kinds;
  // latency_seconds of the kprobe_multi_return attach prediction.
  std::optional<double> attach_latency_seconds;
  // predictions.stack_depot.budget_ratio, when present.
  std::optional<double> pool_budget_ratio;
  // predictions.vmap_purge.purge_seconds, when the purge model applies.
  std::optional<double> purge_seconds;
  // heartbeat (report.proto HeartbeatForm) is present: sent by an agent
  // that sends heartbeat forms; heartbeat.base_seq > 0: this is one.
  bool has_heartbeat = false;
  uint64_t heartbeat_base_seq = 0;
  // snapshot.threads.total, when present.
  std::optional<uint64_t> threads_total;
  // The encoded feature_table_override, one view per occurrence (they merge);
  // empty without one.
  absl::InlinedVector<absl::string_view, 1> feature_table_override;
};

// OK; DataLoss when the bytes do not decode as a HostReport (truncated or
// malformed fields, field number 0, groups, invalid UTF-8 in a string,
// nesting deeper than 16), whatever else is wrong with them; otherwise
// InvalidArgument, naming the first such field, when a double/float is not
// finite, or negative where only >= 0 makes sense, an enum holds a value its
// type does not define (proto3 would keep it as a number), a string is
// longer than the contract's bound (kernel.cmdline: 4 KiB), or a repeated
// field has more than max_repeated entries. At least as strict as
// protobuf's parser: bytes it accepts always parse (a fuzz target checks
// this), which lets the server store a report and parse it only when
// someone reads it.
absl::Status CheckReportWire(absl::string_view wire, const WireLimits& limits);

// The head of `wire`; DataLoss when a field it reads (or passes over at the
// top level, or inside observed_at, labels, predictions and its attach,
// stack_depot and vmap_purge, or heartbeat) is truncated or malformed.
// Fields outside those are skipped without being looked at.
absl::StatusOr<ReportHead> DecodeReportHead(absl::string_view wire);

// What ScanReport says of one report: each answer exactly as the function
// that answers it alone would give it.
struct ReportScan {
  // DecodeReportHead(wire): its status, and the head when that is OK.
  absl::Status head_status;
  ReportHead head;
  // CheckReportWire(wire, limits).
  absl::Status check;
  // MaterialOfWire(wire) when `check` is OK; otherwise empty (digest 0).
  Material material;
};

// The three answers in one walk over `wire` (bytes that do not decode take
// a second, head-only walk, for the head's own answer). The head's views
// point into `wire`.
ReportScan ScanReport(absl::string_view wire, const WireLimits& limits);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_REPORT_REPORT_SCAN_H_
