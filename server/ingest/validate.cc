#include "server/ingest/validate.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/kernel/feature_table_override.h"
#include "proto/tracehealth/v1/features.pb.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "server/report/wire_check.h"

namespace tracehealth::server {
namespace {

absl::Status CheckTimestamp(int64_t seconds, int32_t nanos,
                            absl::string_view name) {
  // 0001-01-01 .. 9999-12-31, like google.protobuf.Timestamp requires.
  if (seconds < -62135596800LL || seconds > 253402300799LL || nanos < 0 ||
      nanos > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": out of range"));
  }
  return absl::OkStatus();
}

// One attach prediction per probe kind: a second one would be exported as a
// second identical series, and which one a query reads would be arbitrary.
absl::Status CheckAttachKinds(const ReportHead& head) {
  // The wire check has refused kinds ProbeKind does not define, all below 64.
  int times[64] = {};
  for (int kind : head.attach_kinds) {
    if (kind >= 0 && kind < 64) ++times[kind];
  }
  for (int kind = 0; kind < 64; ++kind) {
    if (times[kind] <= 1) continue;
    const google::protobuf::EnumValueDescriptor* name =
        v1::ProbeKind_descriptor()->FindValueByNumber(kind);
    return absl::InvalidArgumentError(absl::StrCat(
        "predictions.attach: ", times[kind], " entries for probe_kind ",
        name != nullptr ? name->name() : absl::StrCat(kind),
        " (at most one per kind)"));
  }
  return absl::OkStatus();
}

// What ValidateReport checks after the wire check passed.
absl::Status ValidateHead(const ReportHead& head, size_t wire_size,
                          absl::Time now, const ValidationLimits& limits) {
  absl::Status st;
  if (!IsValidHostId(head.host_id)) {
    return absl::InvalidArgumentError(
        "host_id: must match [A-Za-z0-9._-]{1,253}");
  }
  if (head.seq == 0) return absl::InvalidArgumentError("seq: must be > 0");
  if (head.seq > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError("seq: must be < 2^63");
  }
  if (wire_size > limits.max_report_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("report is ", wire_size, " bytes (at most ",
                     limits.max_report_bytes, ")"));
  }
  if (!head.has_observed_at)
    return absl::InvalidArgumentError("observed_at: missing");
  st = CheckTimestamp(head.observed_at_seconds, head.observed_at_nanos,
                      "observed_at");
  if (!st.ok()) return st;
  absl::Time observed = absl::FromUnixSeconds(head.observed_at_seconds) +
                        absl::Nanoseconds(head.observed_at_nanos);
  if (observed > now + limits.max_clock_skew) {
    return absl::InvalidArgumentError(
        absl::StrCat("observed_at: ", absl::FormatDuration(observed - now),
                     " in the future (at most ",
                     absl::FormatDuration(limits.max_clock_skew), ")"));
  }
  if (!(head.interval_seconds >= limits.min_interval_seconds &&
        head.interval_seconds <= limits.max_interval_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval_seconds: ", head.interval_seconds, " (must be ",
                     limits.min_interval_seconds, " to ",
                     limits.max_interval_seconds, " s)"));
  }
  st = CheckAttachKinds(head);
  if (!st.ok()) return st;
  if (head.agent_version.size() > limits.max_version_bytes ||
      head.model_version.size() > limits.max_version_bytes) {
    return absl::InvalidArgumentError("agent_version/model_version: too long");
  }
  // Entries, not distinct keys: a repeated key counts each time.
  if (head.labels.size() > limits.max_labels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels: ", head.labels.size(), " (at most ", limits.max_labels, ")"));
  }
  for (absl::string_view bytes : head.feature_table_override) {
    // The wire check passed: the bytes parse.
    v1::FeatureTableOverride rows;
    rows.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    absl::Status table = FeatureTableFromOverride(rows).status();
    if (!table.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature_table_override: ", table.message()));
    }
  }
  for (const auto& [k, v] : head.labels) {
    if (k.size() > limits.max_label_key_bytes || !IsValidLabelKey(k)) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels: invalid key \"", k.substr(0, 64),
                       "\" (must match [A-Za-z_][A-Za-z0-9_]*, at most ",
                       limits.max_label_key_bytes, " bytes)"));
    }
    if (v.size() > limits.max_label_value_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", k, "]: value longer than ",
                       limits.max_label_value_bytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

WireLimits WireLimitsOf(const ValidationLimits& limits) {
  WireLimits wire_limits;
  wire_limits.max_repeated = limits.max_repeated;
  return wire_limits;
}

absl::Status ValidateReport(const ReportHead& head, absl::string_view wire,
                            absl::Time now, const ValidationLimits& limits) {
  // The whole encoding first: bytes that do not decode end the stream,
  // whatever else is wrong with them.
  absl::Status st = CheckReportWire(wire, WireLimitsOf(limits));
  if (!st.ok()) return st;
  return ValidateHead(head, wire.size(), now, limits);
}

absl::Status ValidateScannedReport(const ReportScan& scan, size_t wire_size,
                                   absl::Time now,
                                   const ValidationLimits& limits) {
  if (!scan.check.ok()) return scan.check;
  return ValidateHead(scan.head, wire_size, now, limits);
}

}  // namespace tracehealth::server
