#include "server/query/recommendation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/enum_names.h"
#include "common/format.h"

namespace tracehealth::server {
namespace {

// The applying check with the largest margin, or nullptr. The hung-task
// check is not among them: it is said on its own (HungTaskClause).
const v1::ThresholdCheck* WorstCheck(const v1::AttachPrediction& p) {
  const v1::ThresholdCheck* worst = nullptr;
  for (const auto& c : p.checks()) {
    if (!c.applies() || c.kind() == v1::ThresholdCheck::KIND_HUNG_TASK)
      continue;
    if (worst == nullptr || c.margin() > worst->margin()) worst = &c;
  }
  return worst;
}

// "; tasks waiting for ftrace_lock (other tracers, BPF attaches) are
// reported hung after 2m, and the host panics on it" when the hold reaches
// hung_task_timeout_secs; "" otherwise.
std::string HungTaskClause(const v1::AttachPrediction& p) {
  if (p.hung_task() != v1::HUNG_TASK_RISK_REPORTED &&
      p.hung_task() != v1::HUNG_TASK_RISK_PANIC) {
    return "";
  }
  for (const auto& c : p.checks()) {
    if (c.kind() != v1::ThresholdCheck::KIND_HUNG_TASK) continue;
    return absl::StrCat(
        "; tasks waiting for ftrace_lock (other tracers, BPF attaches) are "
        "reported hung after ",
        FormatSeconds(c.threshold()),
        p.hung_task() == v1::HUNG_TASK_RISK_PANIC
            ? ", and the host panics on it (hung_task_panic)"
            : "");
  }
  return "";
}

// The advice from the risk and the stall checks.
std::string Advice(const v1::AttachPrediction& p) {
  std::string latency = FormatSeconds(p.latency_seconds());
  // Before "does not use fgraph": a kind the kernel lacks is not used at all,
  // and its attach fails.
  if (p.unavailable()) {
    return "unavailable: this probe kind does not exist on this kernel (a "
           "config option off, or a release before it); the attach would fail";
  }
  if (p.busy()) {
    return "refused by the kernel (-EBUSY): fgraph is already active and "
           "takes one user before 6.11";
  }
  if (!p.uses_fgraph()) {
    return absl::StrCat(
        "safe to attach: this probe kind does not use fgraph on this "
        "kernel (about ",
        latency, ")");
  }
  if (p.fgraph_already_active()) {
    return absl::StrCat(
        "safe to attach: fgraph is already active, no shadow-stack "
        "walk (about ",
        latency, ")");
  }
  const v1::ThresholdCheck* worst = WorstCheck(p);
  switch (p.risk()) {
    case v1::RISK_STALL:
      return absl::StrCat(
          "do not attach now: ", latency, " without yielding crosses the ",
          worst != nullptr ? CheckKindAdjective(worst->kind()) : "stall",
          " threshold",
          worst != nullptr
              ? absl::StrCat(" (", FormatSeconds(worst->threshold()), ")")
              : "",
          worst != nullptr && worst->panics() ? " and the host panics on it"
                                              : "",
          "; attach while another fgraph user is active, or on a preemptible "
          "kernel");
    case v1::RISK_WARNING:
      return absl::StrCat(
          "attach with care, outside peak: ", latency, " is within 2x of the ",
          worst != nullptr ? CheckKindAdjective(worst->kind()) : "stall",
          " threshold");
    case v1::RISK_LATENCY:
      return absl::StrCat("attach outside peak: the attaching call blocks for ",
                          latency, ", latency only");
    case v1::RISK_NONE:
      return absl::StrCat("safe to attach: ", latency);
    default:
      return absl::StrFormat(
          "unknown: inputs missing (confidence %.2f); estimate %s",
          p.basis().confidence(), latency);
  }
}

}  // namespace

std::string Recommend(const v1::AttachPrediction& p) {
  return absl::StrCat(Advice(p), HungTaskClause(p));
}

}  // namespace tracehealth::server
