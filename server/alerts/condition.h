// Alert conditions over a HostReport: "<path> <op> <threshold>".
//
//   predictions.attach[kprobe_multi_return].latency_seconds > 5
//   predictions.attach[*].risk >= RISK_STALL
//   predictions.stack_depot.budget_ratio > 0.8
//   predictions.stack_depot.seconds_to_exhaustion < 86400
//   health.spool_dropped_total increased
//   host.silent_intervals >= 3
//
// A path names fields of tracehealth.v1.HostReport (resolved by protobuf
// reflection, so every numeric, bool or enum field can be used). On a
// repeated message field, `[name]` selects the element whose `probe_kind`
// (or `kind`) enum value is named NAME (case-insensitive, the enum's
// PROBE_KIND_ prefix optional); `[*]` matches when any element does, and the
// reported value is the first matching element's. Thresholds are numbers or
// enum value names. Unset optional fields never match (unknown is not 0).
// `host.silent_seconds` and `host.silent_intervals` are virtual fields
// computed from the time since the host's last report.
// `increased` matches when the value grew since the host's previous report.
//
// Thread safety: a parsed Condition is immutable.
#ifndef TRACEHEALTH_SERVER_ALERTS_CONDITION_H_
#define TRACEHEALTH_SERVER_ALERTS_CONDITION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth {

// What a condition is evaluated against.
struct EvalInput {
  // The host's latest report (required, except for silence conditions).
  const v1::HostReport* report = nullptr;
  // The report before it, for `increased` (may be null).
  const v1::HostReport* previous = nullptr;
  // Seconds since the latest report was received.
  double silent_seconds = 0;
  // Without `previous`: that report's value of the condition's field
  // (FirstValue), when known.
  std::optional<double> previous_value = std::nullopt;
  // The host's report interval for host.silent_intervals when `report` is
  // null (silence conditions need nothing else of the report).
  double interval_seconds = 0;
};

struct EvalResult {
  bool matched = false;
  // The value compared (unset when the field is unset / not evaluable).
  std::optional<double> value;
};

class Condition {
 public:
  enum class Op { kGt, kGe, kLt, kLe, kEq, kNe, kIncreased };

  // Parses and resolves `text` against HostReport's descriptor. Errors
  // (InvalidArgument): unknown field, non-numeric leaf, bad selector, bad
  // operator, threshold that is neither a number nor a value of the leaf enum.
  static absl::StatusOr<Condition> Parse(absl::string_view text);

  EvalResult Evaluate(const EvalInput& input) const;

  // The value `increased` compares: the field's first value in `report`
  // (nullopt when unset).
  std::optional<double> FirstValue(const v1::HostReport& report) const;

  const std::string& text() const { return text_; }
  double threshold() const { return threshold_; }
  // True when the condition only depends on time since the last report.
  bool is_silence() const { return virtual_field_ != VirtualField::kNone; }
  // True for `<field> increased`.
  bool is_increase() const { return op_ == Op::kIncreased; }

 private:
  enum class VirtualField { kNone, kSilentSeconds, kSilentIntervals };
  struct Step {
    const google::protobuf::FieldDescriptor* field = nullptr;
    // For repeated message fields: selector enum field and value (-1 = any).
    const google::protobuf::FieldDescriptor* selector_field = nullptr;
    int selector_value = -1;
  };

  // Values of the path in `report` (several with [*]); empty when unset.
  // Inline storage: this runs for every rule on every report.
  using ValueList = absl::InlinedVector<double, 4>;
  ValueList Values(const v1::HostReport& report) const;
  bool Compare(double v) const;

  std::string text_;
  std::vector<Step> path_;
  VirtualField virtual_field_ = VirtualField::kNone;
  Op op_ = Op::kGt;
  double threshold_ = 0;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_CONDITION_H_
