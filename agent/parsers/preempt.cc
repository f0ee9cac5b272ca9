#include "agent/parsers/preempt.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/enum_names.h"

namespace tracehealth::agent {

v1::PreemptMode SchedPreemptMode(absl::string_view name) {
  // Both offer every mode but rt: PREEMPT_RT is chosen when building.
  const std::optional<v1::PreemptMode> mode = PreemptModeFromName(name);
  return mode.has_value() && *mode != v1::PREEMPT_MODE_RT
             ? *mode
             : v1::PREEMPT_MODE_UNKNOWN;
}

absl::StatusOr<v1::PreemptMode> ParseSchedPreempt(absl::string_view text) {
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripAsciiWhitespace(text), absl::ByAnyChar(" \t"),
                     absl::SkipEmpty());
  std::optional<v1::PreemptMode> active;
  for (absl::string_view w : words) {
    bool paren = w.size() >= 3 && w.front() == '(' && w.back() == ')';
    absl::string_view name = paren ? w.substr(1, w.size() - 2) : w;
    v1::PreemptMode mode = SchedPreemptMode(name);
    if (mode == v1::PREEMPT_MODE_UNKNOWN) {
      return absl::InvalidArgumentError(
          absl::StrCat("sched/preempt: unknown mode '", w, "'"));
    }
    if (paren) {
      if (active.has_value()) {
        return absl::InvalidArgumentError(
            "sched/preempt: several active modes");
      }
      active = mode;
    }
  }
  if (!active.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sched/preempt: no active (parenthesised) mode in '",
                     absl::StripAsciiWhitespace(text).substr(0, 80), "'"));
  }
  return *active;
}

absl::StatusOr<VersionPreemptFlags> ParseVersionPreemptFlags(
    absl::string_view version) {
  if (absl::StripAsciiWhitespace(version).empty()) {
    return absl::InvalidArgumentError("kernel version string: empty");
  }
  VersionPreemptFlags f;
  for (absl::string_view w :
       absl::StrSplit(version, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    if (w == "PREEMPT") f.preempt = true;
    if (w == "PREEMPT_DYNAMIC") f.dynamic = true;
    if (w == "PREEMPT_RT") f.rt = true;
    if (w == "PREEMPT_LAZY") f.lazy = true;
  }
  return f;
}

std::optional<v1::PreemptMode> ModeFromVersionFlags(
    const VersionPreemptFlags& flags) {
  if (flags.rt) return v1::PREEMPT_MODE_RT;
  if (flags.dynamic) return std::nullopt;
  if (flags.lazy) return v1::PREEMPT_MODE_LAZY;
  if (flags.preempt) return v1::PREEMPT_MODE_FULL;
  return std::nullopt;
}

std::optional<v1::PreemptMode> ModeFromConfig(const KernelConfig& config,
                                              absl::string_view cmdline_preempt,
                                              bool none_voluntary_refused) {
  if (config.Enabled("CONFIG_PREEMPT_RT").value_or(false)) {
    return v1::PREEMPT_MODE_RT;
  }
  if (config.Enabled("CONFIG_PREEMPT_DYNAMIC").value_or(false)) {
    v1::PreemptMode boot = SchedPreemptMode(cmdline_preempt);
    const bool refused =
        none_voluntary_refused &&
        (boot == v1::PREEMPT_MODE_NONE || boot == v1::PREEMPT_MODE_VOLUNTARY);
    if (boot != v1::PREEMPT_MODE_UNKNOWN && !refused) return boot;
  }
  // The Kconfig choice: exactly one of these is "y".
  if (config.Enabled("CONFIG_PREEMPT_LAZY").value_or(false)) {
    return v1::PREEMPT_MODE_LAZY;
  }
  if (config.Enabled("CONFIG_PREEMPT").value_or(false)) {
    return v1::PREEMPT_MODE_FULL;
  }
  if (config.Enabled("CONFIG_PREEMPT_VOLUNTARY").value_or(false)) {
    return v1::PREEMPT_MODE_VOLUNTARY;
  }
  if (config.Enabled("CONFIG_PREEMPT_NONE").value_or(false)) {
    return v1::PREEMPT_MODE_NONE;
  }
  return std::nullopt;
}

}  // namespace tracehealth::agent
