#include "common/models/mitigation/attach_verdict.h"

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_attach.h"

namespace tracehealth {
namespace {

bool IsStallCheck(const v1::ThresholdCheck& c) {
  return c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP ||
         c.kind() == v1::ThresholdCheck::KIND_RCU_STALL;
}

// The applying stall check with the largest margin, or nullptr.
const v1::ThresholdCheck* WorstStallCheck(const v1::AttachPrediction& p) {
  const v1::ThresholdCheck* worst = nullptr;
  for (const v1::ThresholdCheck& c : p.checks()) {
    if (!c.applies() || !IsStallCheck(c)) continue;
    if (worst == nullptr || c.margin() > worst->margin()) worst = &c;
  }
  return worst;
}

// "walks 240000 threads (1200 without a shadow stack)", "does not use fgraph
// on this kernel", ... A new user on an already-active fgraph still walks
// the task list once from 6.11 (init_task_vars()); before, the kernel
// refuses it.
std::string WhatTheAttachDoes(const v1::AttachPrediction& p) {
  if (p.unavailable())
    return "is not possible: the probe kind does not exist "
           "on this kernel";
  if (!p.uses_fgraph()) return "does not use fgraph on this kernel";
  if (p.busy()) {
    return "is refused by the kernel (-EBUSY): fgraph is already active and "
           "takes one user before 6.11";
  }
  if (p.fgraph_already_active()) {
    if (p.passes() == 0) {
      return "finds fgraph already active: one pass over the task list "
             "(thread count unknown)";
    }
    return absl::StrCat(
        "finds fgraph already active: no shadow-stack walk, "
        "one pass over ",
        p.threads_total(), " threads (init_task_vars, forks and exits wait)");
  }
  if (p.passes() == 0) return "walks the task list (thread count unknown)";
  std::string out = absl::StrCat("walks ", p.threads_total(), " threads");
  if (p.null_threads() < p.threads_total()) {
    absl::StrAppend(&out, " (", p.null_threads(), " without a shadow stack)");
  }
  return out;
}

// "; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s threshold)" for a stall
// risk, "" otherwise.
std::string StallPart(const v1::AttachPrediction& p, v1::PreemptMode mode) {
  if (p.risk() != v1::RISK_STALL && p.risk() != v1::RISK_WARNING) return "";
  const v1::ThresholdCheck* worst = WorstStallCheck(p);
  if (worst == nullptr) return "";
  const std::string where = absl::StrCat(
      PreemptModeConfigName(mode), ", ", FormatFixed(worst->margin(), 2),
      "x the ", FormatSeconds(worst->threshold()), " threshold");
  if (p.risk() == v1::RISK_STALL) {
    return absl::StrCat("; ", CheckKindName(worst->kind()), " (", where,
                        worst->panics() ? ", and the host panics on it" : "",
                        ")");
  }
  return absl::StrCat("; within 2x of the ", CheckKindAdjective(worst->kind()),
                      " threshold (", where, ")");
}

// Why a prediction is RISK_UNKNOWN, from what the snapshot lacks.
std::string UnknownPart(const v1::HostSnapshot& s, v1::ProbeKind kind,
                        const v1::AttachPrediction& p) {
  auto reason_of = [&s](const char* input) -> std::string {
    for (const v1::UnknownInput& u : s.unknown()) {
      if (u.input() == input) return absl::StrCat(" (", u.reason(), ")");
    }
    return "";
  };
  if (IsFprobeKind(kind) && !s.kernel().has_release()) {
    return absl::StrCat("kernel release unknown", reason_of("kernel.release"),
                        ": cannot tell whether ", ProbeKindFlag(kind),
                        " uses fgraph");
  }
  if (p.uses_fgraph() && !p.busy() && !s.threads().has_total()) {
    return absl::StrCat("thread count unknown", reason_of("threads.total"),
                        p.fgraph_already_active()
                            ? ": the pass over the task list cannot be sized"
                            : ": the shadow-stack walk cannot be sized");
  }
  if (s.kernel().preempt_mode() == v1::PREEMPT_MODE_UNKNOWN) {
    return absl::StrCat("preemption mode unknown",
                        reason_of("kernel.preempt_mode"), ": a ",
                        FormatSeconds(p.walk_seconds()),
                        " walk is a stall if the kernel is not preemptible");
  }
  return "inputs missing";
}

std::string ReasonOf(const v1::HostSnapshot& s, v1::ProbeKind kind,
                     const v1::AttachPrediction& p, v1::AttachVerdict verdict,
                     double budget) {
  if (verdict == v1::ATTACH_VERDICT_UNKNOWN) {
    return absl::StrCat("unknown: ", ProbeKindFlag(kind), ": ",
                        UnknownPart(s, kind, p));
  }
  if (p.busy() || p.unavailable()) {
    // Nothing runs: no walk, nothing patched; the caller gets an error.
    return absl::StrCat(VerdictWord(verdict), ": ", ProbeKindFlag(kind),
                        " attach ", WhatTheAttachDoes(p),
                        "; nothing is patched");
  }
  const bool over = p.latency_seconds() > budget;
  return absl::StrCat(VerdictWord(verdict), ": ", ProbeKindFlag(kind),
                      " attach ", WhatTheAttachDoes(p), ": ",
                      FormatSeconds(p.latency_seconds()),
                      over ? " > " : " <= ", FormatSeconds(budget), " budget",
                      StallPart(p, s.kernel().preempt_mode()));
}

}  // namespace

v1::AttachVerdict VerdictOf(const v1::AttachPrediction& p,
                            double budget_seconds) {
  switch (p.risk()) {
    case v1::RISK_STALL:
    case v1::RISK_WARNING:
      return v1::ATTACH_VERDICT_STALL_RISK;
    case v1::RISK_NONE:
    case v1::RISK_LATENCY:
      return p.latency_seconds() > budget_seconds
                 ? v1::ATTACH_VERDICT_OVER_BUDGET
                 : v1::ATTACH_VERDICT_SAFE;
    default:
      return v1::ATTACH_VERDICT_UNKNOWN;
  }
}

const char* VerdictWord(v1::AttachVerdict verdict) {
  switch (verdict) {
    case v1::ATTACH_VERDICT_SAFE:
      return "safe";
    case v1::ATTACH_VERDICT_OVER_BUDGET:
    case v1::ATTACH_VERDICT_STALL_RISK:
      return "unsafe";
    default:
      return "unknown";
  }
}

AttachAssessment AssessAttach(const v1::HostSnapshot& snapshot,
                              v1::ProbeKind kind, double budget_seconds,
                              const ModelOptions& options) {
  ModelOptions o = options;
  o.latency_budget_seconds = budget_seconds;
  AttachAssessment a;
  a.prediction = PredictAttach(snapshot, kind, o);
  a.verdict = VerdictOf(a.prediction, budget_seconds);
  a.reason = ReasonOf(snapshot, kind, a.prediction, a.verdict, budget_seconds);
  const bool activity_unknown = !snapshot.fgraph().has_active();
  if (activity_unknown && a.prediction.uses_fgraph() &&
      a.verdict != v1::ATTACH_VERDICT_SAFE &&
      a.verdict != v1::ATTACH_VERDICT_UNKNOWN) {
    // Were fgraph active, this attach would not walk the shadow stacks: one
    // pass from 6.11, refused before.
    v1::HostSnapshot active = snapshot;
    active.mutable_fgraph()->set_active(true);
    active.mutable_fgraph()->set_null_threads_bound(0);
    const v1::AttachPrediction if_active = PredictAttach(active, kind, o);
    if (VerdictOf(if_active, budget_seconds) == v1::ATTACH_VERDICT_SAFE) {
      a.reason = absl::StrCat(
          "unknown: ", ProbeKindFlag(kind), ": fgraph activity unknown: ",
          a.reason.substr(a.reason.find(':') + 2), " if fgraph is inactive, ",
          if_active.busy() ? std::string("refused by the kernel (-EBUSY)")
                           : FormatSeconds(if_active.latency_seconds()),
          " if it is already active");
      a.verdict = v1::ATTACH_VERDICT_UNKNOWN;
    }
  }
  return a;
}

}  // namespace tracehealth
