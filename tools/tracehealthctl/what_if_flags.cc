#include "tools/tracehealthctl/what_if_flags.h"

#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "tools/tracehealthctl/model_request.h"

// Defined in tools/tracehealthctl/model_request.cc (shared with `model`).
ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(int64_t, threads);
ABSL_DECLARE_FLAG(int64_t, null_threads);
ABSL_DECLARE_FLAG(std::string, fgraph_active);
ABSL_DECLARE_FLAG(int64_t, batch);
ABSL_DECLARE_FLAG(double, c_visit_ns);
ABSL_DECLARE_FLAG(double, latency_budget);

namespace tracehealth {

absl::StatusOr<v1::WhatIf> WhatIfFromFlags() {
  if (absl::Status st = CheckModelFlagRanges(); !st.ok()) return st;
  v1::WhatIf w;
  if (int64_t v = absl::GetFlag(FLAGS_threads); v >= 0) w.set_threads(v);
  if (int64_t v = absl::GetFlag(FLAGS_null_threads); v >= 0)
    w.set_null_threads(v);
  if (int64_t v = absl::GetFlag(FLAGS_batch); v >= 0) {
    if (v == 0 || v > (1 << 20)) {
      return absl::InvalidArgumentError("--batch must be in 1..1048576");
    }
    w.set_batch(static_cast<uint32_t>(v));
  }
  absl::StatusOr<std::optional<v1::PreemptMode>> mode = PreemptFlag();
  if (!mode.ok()) return mode.status();
  if (mode->has_value()) w.set_preempt_mode(**mode);
  if (!absl::GetFlag(FLAGS_kernel).empty())
    w.set_kernel_release(absl::GetFlag(FLAGS_kernel));
  if (double v = absl::GetFlag(FLAGS_c_visit_ns); v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--c_visit_ns must be > 0");
    w.set_c_visit_seconds(v * 1e-9);
  }
  if (double v = absl::GetFlag(FLAGS_latency_budget); v >= 0) {
    if (v == 0) {
      return absl::InvalidArgumentError("--latency_budget must be > 0");
    }
    w.set_latency_budget_seconds(v);
  }
  absl::StatusOr<std::optional<bool>> active =
      BoolFlag("fgraph_active", absl::GetFlag(FLAGS_fgraph_active));
  if (!active.ok()) return active.status();
  if (active->has_value()) w.set_fgraph_active(**active);
  return w;
}

}  // namespace tracehealth
