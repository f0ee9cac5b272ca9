#include "server/query/what_if.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "common/kernel/release.h"
#include "common/models/fgraph/fgraph_walk.h"

namespace tracehealth::server {

bool HasOverrides(const v1::WhatIf& w) {
  return w.has_threads() || w.has_null_threads() || w.has_batch() ||
         w.preempt_mode() != v1::PREEMPT_MODE_UNKNOWN ||
         w.has_kernel_release() || w.has_c_visit_seconds() ||
         w.has_latency_budget_seconds() || w.has_fgraph_active();
}

absl::Status CheckWhatIf(const v1::WhatIf& w) {
  if (w.has_batch() && w.batch() == 0) {
    return absl::InvalidArgumentError("what_if.batch: must be > 0");
  }
  if (w.has_c_visit_seconds() &&
      (!std::isfinite(w.c_visit_seconds()) || w.c_visit_seconds() <= 0)) {
    return absl::InvalidArgumentError("what_if.c_visit_seconds: must be > 0");
  }
  if (w.has_latency_budget_seconds() &&
      (!std::isfinite(w.latency_budget_seconds()) ||
       w.latency_budget_seconds() <= 0)) {
    return absl::InvalidArgumentError(
        "what_if.latency_budget_seconds: must be > 0");
  }
  if (w.has_threads() && w.threads() > kPidMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what_if.threads: more than PID_MAX_LIMIT (", kPidMaxLimit, ")"));
  }
  if (w.has_null_threads() && w.null_threads() > kPidMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what_if.null_threads: more than PID_MAX_LIMIT (", kPidMaxLimit, ")"));
  }
  if (w.has_threads() && w.has_null_threads() &&
      w.null_threads() > w.threads()) {
    return absl::InvalidArgumentError(
        "what_if.null_threads: more than threads");
  }
  if (w.has_kernel_release() && !ParseKernelRelease(w.kernel_release()).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("what_if.kernel_release: cannot parse \"",
                     EchoText(w.kernel_release()), "\""));
  }
  return absl::OkStatus();
}

void ApplyWhatIf(const v1::WhatIf& w, v1::HostSnapshot& snapshot,
                 ModelOptions& options) {
  OverriddenInputs& overridden = options.overridden;
  if (w.has_threads()) {
    overridden.threads = true;
    snapshot.mutable_threads()->set_total(w.threads());
    if (!w.has_null_threads()) {
      snapshot.mutable_fgraph()->clear_null_threads_bound();
      snapshot.mutable_fgraph()->set_null_threads_basis("");
    }
  }
  if (w.has_null_threads()) {
    overridden.null_threads = true;
    snapshot.mutable_fgraph()->set_null_threads_bound(w.null_threads());
    snapshot.mutable_fgraph()->set_null_threads_basis("what-if override");
  }
  if (w.preempt_mode() != v1::PREEMPT_MODE_UNKNOWN) {
    overridden.preempt_mode = true;
    snapshot.mutable_kernel()->set_preempt_mode(w.preempt_mode());
    snapshot.mutable_kernel()->set_preempt_source("what-if override");
  }
  if (w.has_kernel_release()) {
    // The release names the kernel to judge. The running kernel's version
    // string and the upstream version read beside it describe that kernel,
    // not this one: left in place they would map the what-if back to the
    // running kernel's upstream release (a Debian or Ubuntu host) or mark
    // it a vendor kernel.
    overridden.kernel_release = true;
    v1::KernelInfo& kernel = *snapshot.mutable_kernel();
    kernel.set_release(w.kernel_release());
    kernel.clear_version();
    kernel.clear_upstream_version();
    kernel.clear_upstream_version_source();
  }
  if (w.has_fgraph_active()) {
    overridden.fgraph_active = true;
    snapshot.mutable_fgraph()->set_active(w.fgraph_active());
    if (!w.fgraph_active()) snapshot.mutable_fgraph()->clear_users();
  }
  if (w.has_batch()) options.batch = w.batch();
  if (w.has_c_visit_seconds()) options.c_visit_seconds = w.c_visit_seconds();
  if (w.has_latency_budget_seconds()) {
    options.latency_budget_seconds = w.latency_budget_seconds();
  }
}

}  // namespace tracehealth::server
