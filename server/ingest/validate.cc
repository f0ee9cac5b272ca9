#include "server/ingest/validate.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace tracehealth::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Double fields that may legitimately be negative.
bool MayBeNegative(const FieldDescriptor* f) {
  return f->name() == "growth_pools_per_second";
}

// Checks every set double/float field of `m` (recursively): finite, and
// non-negative unless MayBeNegative; and every repeated field's size.
absl::Status CheckNumbers(const Message& m, const ValidationLimits& limits,
                          const std::string& path, int depth) {
  if (depth > 16) return absl::InvalidArgumentError("report nested too deeply");
  const auto* refl = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  refl->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    std::string name = path.empty() ? f->name() : absl::StrCat(path, ".", f->name());
    if (f->is_repeated()) {
      int n = refl->FieldSize(m, f);
      if (n > limits.max_repeated) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": ", n, " entries (at most ", limits.max_repeated, ")"));
      }
      if (f->is_map()) continue;  // string maps: checked by the caller
      for (int i = 0; i < n; ++i) {
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_MESSAGE: {
            absl::Status st = CheckNumbers(refl->GetRepeatedMessage(m, f, i),
                                           limits, name, depth + 1);
            if (!st.ok()) return st;
            break;
          }
          case FieldDescriptor::CPPTYPE_DOUBLE:
          case FieldDescriptor::CPPTYPE_FLOAT: {
            double v = f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                           ? refl->GetRepeatedDouble(m, f, i)
                           : refl->GetRepeatedFloat(m, f, i);
            if (!std::isfinite(v) || (v < 0 && !MayBeNegative(f))) {
              return absl::InvalidArgumentError(
                  absl::StrCat(name, ": invalid value ", v));
            }
            break;
          }
          default:
            break;
        }
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        absl::Status st =
            CheckNumbers(refl->GetMessage(m, f), limits, name, depth + 1);
        if (!st.ok()) return st;
        break;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double v = f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                       ? refl->GetDouble(m, f)
                       : refl->GetFloat(m, f);
        if (!std::isfinite(v)) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, ": not a finite number"));
        }
        if (v < 0 && !MayBeNegative(f)) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, ": negative value ", v));
        }
        break;
      }
      default:
        break;
    }
  }
  return absl::OkStatus();
}

bool IsValidLabelKey(absl::string_view k) {
  if (k.empty()) return false;
  for (size_t i = 0; i < k.size(); ++i) {
    char c = k[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

absl::Status CheckTimestamp(const google::protobuf::Timestamp& ts,
                            absl::string_view name) {
  // 0001-01-01 .. 9999-12-31, like google.protobuf.Timestamp requires.
  if (ts.seconds() < -62135596800LL || ts.seconds() > 253402300799LL ||
      ts.nanos() < 0 || ts.nanos() > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": out of range"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidHostId(absl::string_view host_id) {
  if (host_id.empty() || host_id.size() > 253) return false;
  for (char c : host_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status ValidateReport(const v1::HostReport& report, size_t serialized_size,
                            absl::Time now, const ValidationLimits& limits) {
  if (!IsValidHostId(report.host_id())) {
    return absl::InvalidArgumentError(
        "host_id: must match [A-Za-z0-9._-]{1,253}");
  }
  if (report.seq() == 0) return absl::InvalidArgumentError("seq: must be > 0");
  if (report.seq() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError("seq: must be < 2^63");
  }
  if (serialized_size > limits.max_report_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("report is ", serialized_size, " bytes (at most ",
                     limits.max_report_bytes, ")"));
  }
  if (!report.has_observed_at()) {
    return absl::InvalidArgumentError("observed_at: missing");
  }
  absl::Status st = CheckTimestamp(report.observed_at(), "observed_at");
  if (!st.ok()) return st;
  absl::Time observed = absl::FromUnixSeconds(report.observed_at().seconds()) +
                        absl::Nanoseconds(report.observed_at().nanos());
  if (observed > now + limits.max_clock_skew) {
    return absl::InvalidArgumentError(absl::StrCat(
        "observed_at: ", absl::FormatDuration(observed - now),
        " in the future (at most ", absl::FormatDuration(limits.max_clock_skew),
        ")"));
  }
  if (report.agent_version().size() > limits.max_version_bytes ||
      report.model_version().size() > limits.max_version_bytes) {
    return absl::InvalidArgumentError("agent_version/model_version: too long");
  }
  if (report.labels_size() > static_cast<int>(limits.max_labels)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels: ", report.labels_size(), " (at most ", limits.max_labels, ")"));
  }
  for (const auto& [k, v] : report.labels()) {
    if (k.size() > limits.max_label_key_bytes || !IsValidLabelKey(k)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "labels: invalid key \"", k.substr(0, 64),
          "\" (must match [A-Za-z_][A-Za-z0-9_]*, at most ",
          limits.max_label_key_bytes, " bytes)"));
    }
    if (v.size() > limits.max_label_value_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", k, "]: value longer than ",
                       limits.max_label_value_bytes, " bytes"));
    }
  }
  return CheckNumbers(report, limits, "", 0);
}

}  // namespace tracehealth::server
