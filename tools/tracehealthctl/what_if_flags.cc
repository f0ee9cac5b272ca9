#include "tools/tracehealthctl/what_if_flags.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {

absl::StatusOr<v1::WhatIf> WhatIfFromFlags(const ModelFlags& f) {
  if (absl::Status st = CheckModelFlagRanges(f); !st.ok()) return st;
  v1::WhatIf w;
  if (int64_t v = f.threads; v >= 0) w.set_threads(v);
  if (int64_t v = f.null_threads; v >= 0) w.set_null_threads(v);
  if (int64_t v = f.batch; v >= 0) {
    if (v == 0 || v > (1 << 20)) {
      return absl::InvalidArgumentError("--batch must be in 1..1048576");
    }
    w.set_batch(static_cast<uint32_t>(v));
  }
  absl::StatusOr<std::optional<v1::PreemptMode>> mode = PreemptFlag(f);
  if (!mode.ok()) return mode.status();
  if (mode->has_value()) w.set_preempt_mode(**mode);
  if (!f.kernel.empty()) w.set_kernel_release(f.kernel);
  if (double v = f.c_visit_ns; v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--c_visit_ns must be > 0");
    w.set_c_visit_seconds(v * 1e-9);
  }
  if (double v = f.latency_budget; v >= 0) {
    if (v == 0) {
      return absl::InvalidArgumentError("--latency_budget must be > 0");
    }
    w.set_latency_budget_seconds(v);
  }
  if (f.fgraph_active.has_value()) w.set_fgraph_active(*f.fgraph_active);
  return w;
}

}  // namespace tracehealth
