// The kernel's preemption model, from the three places it shows:
// /sys/kernel/debug/sched/preempt ("none voluntary (full) lazy": the active
// mode in parentheses), the version string (/proc/sys/kernel/version:
// "PREEMPT", "PREEMPT_DYNAMIC", "PREEMPT_RT"), and the kernel config with the
// "preempt=" boot parameter.
//
// Pure functions; errors are InvalidArgument.
#ifndef TRACEHEALTH_AGENT_PARSERS_PREEMPT_H_
#define TRACEHEALTH_AGENT_PARSERS_PREEMPT_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/parsers/kconfig.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// The parenthesised mode of sched/preempt. Errors: no or several
// parenthesised words, or an unknown mode name.
absl::StatusOr<v1::PreemptMode> ParseSchedPreempt(absl::string_view text);

// A mode as sched/preempt and preempt= name it ("none", "voluntary", "full",
// "lazy"; common/enum_names.h); PREEMPT_MODE_UNKNOWN for anything else.
v1::PreemptMode SchedPreemptMode(absl::string_view name);

// Flags of the version string.
struct VersionPreemptFlags {
  bool preempt = false;  // "PREEMPT" token
  bool dynamic = false;  // "PREEMPT_DYNAMIC"
  bool rt = false;       // "PREEMPT_RT"
  bool lazy = false;     // "PREEMPT_LAZY"
};
// Errors: empty text.
absl::StatusOr<VersionPreemptFlags> ParseVersionPreemptFlags(
    absl::string_view version);

// The mode the version string alone implies, when it implies one: RT for
// PREEMPT_RT, LAZY for PREEMPT_LAZY, FULL for plain PREEMPT; nullopt for
// PREEMPT_DYNAMIC (boot-selectable) and for no flag (none or voluntary).
std::optional<v1::PreemptMode> ModeFromVersionFlags(
    const VersionPreemptFlags& flags);

// The mode from the config (CONFIG_PREEMPT_RT / _LAZY / CONFIG_PREEMPT /
// _VOLUNTARY / _NONE) and, with CONFIG_PREEMPT_DYNAMIC, the preempt= value
// on the command line (`cmdline_preempt`, may be empty). When
// `none_voluntary_refused` (7.0+ on an architecture with PREEMPT_LAZY:
// sched_dynamic_mode() no longer matches them, "Dynamic Preempt:
// unsupported mode"), preempt=none|voluntary is ignored and the config's
// choice stays. nullopt when the config names no model.
std::optional<v1::PreemptMode> ModeFromConfig(
    const KernelConfig& config, absl::string_view cmdline_preempt,
    bool none_voluntary_refused = false);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_PREEMPT_H_
