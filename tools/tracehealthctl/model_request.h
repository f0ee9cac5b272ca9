// The inputs of `tracehealthctl model fgraph|stackdepot|vmap`, from the
// model flags: a HostSnapshot holding what the flags give (everything else
// unknown, as for a host that could not read it), the models' what-if
// options, and the basis inputs the flags gave (shown as "given").
//
// The flags are defined by tracehealthctl's main (flags.cc), which hands
// their values here as a ModelFlags; predict and plan share some of them.
//
// Thread safety: pure functions of their arguments.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// The values of the model flags. Not given: -1 for a number, "" for text,
// nullopt for true|false. What each means: flags.cc (--help).
struct ModelFlags {
  std::string kernel;
  std::string preempt;
  std::optional<bool> preempt_dynamic;
  std::optional<bool> preempt_rcu;
  std::string arch;
  std::string cpu_model;
  std::optional<bool> hypervisor;
  int64_t ftrace_filter = -1;
  int64_t possible_cpus = -1;
  int64_t watchdog_thresh = -1;
  int64_t rcu_stall_timeout = -1;
  int64_t threads = -1;
  int64_t null_threads = -1;
  std::optional<bool> fgraph_active;
  int64_t batch = -1;
  double c_visit_ns = -1;
  std::string probe;
  int64_t sites = -1;
  int64_t filter_functions = -1;
  double latency_budget = -1;
  int64_t cpus = -1;
  std::optional<bool> invlpgb;
  int64_t unpurged_areas = -1;
  int64_t shadow_page_areas = -1;
  int64_t page_size = -1;
  int64_t pools = -1;
  int64_t max_pools = -1;
  int64_t frames = -1;
  int64_t persistent_count = -1;
  int64_t persistent_bytes = -1;
  std::string history;
  std::string show_stacks;
};

struct ModelRequest {
  v1::HostSnapshot snapshot;
  ModelOptions options;
  // Basis input names whose values came from flags.
  std::set<std::string> given;
  // --probe: one attach kind; unset: all of them.
  std::optional<v1::ProbeKind> probe;
};

// The request for `model` ("fgraph", "stackdepot" or "vmap") from `flags`.
// Errors: InvalidArgument naming the flag (a number out of range, an
// unparsable release, preemption mode, probe kind or history) or an unknown
// model; NotFound for an unreadable --show_stacks file.
absl::StatusOr<ModelRequest> BuildModelRequest(const std::string& model,
                                               const ModelFlags& flags);

// Checks and readers of the flags `predict` shares with `model`. Errors:
// InvalidArgument naming the flag, with the values it takes.
//
// Whole-number flags below -1 ("not given"), real ones negative or not
// finite: "--threads must be >= 0".
absl::Status CheckModelFlagRanges(const ModelFlags& flags);
// --preempt (none|voluntary|full|lazy|rt); nullopt when not given.
absl::StatusOr<std::optional<v1::PreemptMode>> PreemptFlag(
    const ModelFlags& flags);
// --probe (a ProbeKindFlags() name, or the enum's without PROBE_KIND_);
// nullopt when not given.
absl::StatusOr<std::optional<v1::ProbeKind>> ProbeFlag(const ModelFlags& flags);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_
