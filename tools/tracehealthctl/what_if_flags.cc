#include "tools/tracehealthctl/what_if_flags.h"

#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "common/enum_names.h"

ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(std::string, preempt);
ABSL_DECLARE_FLAG(int64_t, threads);
ABSL_DECLARE_FLAG(int64_t, null_threads);
ABSL_DECLARE_FLAG(std::string, fgraph_active);
ABSL_DECLARE_FLAG(int64_t, batch);
ABSL_DECLARE_FLAG(double, c_visit_ns);
ABSL_DECLARE_FLAG(double, latency_budget);

namespace tracehealth::server {

bool WhatIfFromFlags(v1::WhatIf* w, std::ostream& err) {
  if (absl::GetFlag(FLAGS_threads) >= 0)
    w->set_threads(absl::GetFlag(FLAGS_threads));
  if (absl::GetFlag(FLAGS_null_threads) >= 0) {
    w->set_null_threads(absl::GetFlag(FLAGS_null_threads));
  }
  if (absl::GetFlag(FLAGS_batch) >= 0) w->set_batch(absl::GetFlag(FLAGS_batch));
  if (!absl::GetFlag(FLAGS_preempt).empty()) {
    std::optional<v1::PreemptMode> mode = PreemptModeFromName(
        absl::AsciiStrToLower(absl::GetFlag(FLAGS_preempt)));
    if (!mode.has_value()) {
      err << "unknown --preempt " << absl::GetFlag(FLAGS_preempt) << "\n";
      return false;
    }
    w->set_preempt_mode(*mode);
  }
  if (!absl::GetFlag(FLAGS_kernel).empty())
    w->set_kernel_release(absl::GetFlag(FLAGS_kernel));
  if (absl::GetFlag(FLAGS_c_visit_ns) > 0) {
    w->set_c_visit_seconds(absl::GetFlag(FLAGS_c_visit_ns) * 1e-9);
  }
  if (absl::GetFlag(FLAGS_latency_budget) > 0) {
    w->set_latency_budget_seconds(absl::GetFlag(FLAGS_latency_budget));
  }
  const std::string fa = absl::GetFlag(FLAGS_fgraph_active);
  if (!fa.empty()) w->set_fgraph_active(fa == "true" || fa == "1");
  return true;
}

}  // namespace tracehealth::server
